import { describe, expect, it } from 'vitest';
import { describeEnd, terminalPublisher } from '../../src/cli/terminal-publisher.js';
import type { StageName } from '../../src/pipeline/types.js';

const clock = { now: () => 0, every: () => () => undefined };

describe('terminalPublisher', () => {
  it('prints one line per stage, the last one when the result comes', async () => {
    const lines: string[] = [];
    const p = terminalPublisher((l) => lines.push(l), { clock, prefix: 'so-1 ' });
    await p.progress('intake', 'reading the issue');
    await p.progress('report', '1 Python block(s)');
    expect(lines).toEqual(['so-1 [intake 0.0 s] reading the issue']);
    expect(await p.publish({} as never)).toEqual({ locations: [] });
    expect(lines).toEqual(['so-1 [intake 0.0 s] reading the issue', 'so-1 [report 0.0 s] 1 Python block(s)']);
  });

  it('says how a run without a result ended, under the command name', async () => {
    const lines: string[] = [];
    const p = terminalPublisher((l) => lines.push(l), { clock, name: 'repgen reproduce' });
    await p.end({ kind: 'cancelled', by: 'Ctrl-C' });
    expect(lines).toEqual(['repgen reproduce: cancelled by Ctrl-C; nothing written']);
  });

  it('quiet: prints nothing and feeds the sink', async () => {
    const lines: string[] = [];
    const seen: StageName[] = [];
    const p = terminalPublisher((l) => lines.push(l), { quiet: true, sink: (stage) => void seen.push(stage) });
    await p.progress('plan', 'x');
    await p.end({ kind: 'failed', reason: 'boom', attempt: 1, attempts: 1, retrying: false });
    expect(lines).toEqual([]);
    expect(seen).toEqual(['plan']);
  });

  it('words every end', () => {
    expect(describeEnd({ kind: 'time_budget', minutes: 30 })).toBe('stopped: the run passed its time budget of 30 min');
    expect(describeEnd({ kind: 'bad_ref', ref: 'v9' })).toBe("the ref 'v9' does not exist");
    expect(describeEnd({ kind: 'failed', reason: 'boom', attempt: 1, attempts: 3, retrying: true })).toBe('failed: boom');
  });
});
