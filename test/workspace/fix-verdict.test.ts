import { describe, expect, it } from 'vitest';
import { classifyFixRun, fixVerdict } from '../../src/workspace/fix-verdict.js';

const run = (o: Partial<Parameters<typeof classifyFixRun>[0]>) =>
  classifyFixRun({ exitCode: 0, signal: null, timedOut: false, infra: null, reproduces: false, ...o });

describe('classifyFixRun', () => {
  it('exit 0 is a pass', () => expect(run({})).toBe('passed'));
  it('the report’s symptom is the bug, whatever the exit code', () => expect(run({ exitCode: 1, reproduces: true })).toBe('reproduces'));
  it('another failure is not a pass', () => expect(run({ exitCode: 1 })).toBe('fails_otherwise'));
  it('a timeout is not a pass even with exit 0', () => expect(run({ timedOut: true })).toBe('fails_otherwise'));
  it('a signal is not a pass', () => expect(run({ exitCode: null, signal: 'SIGSEGV' })).toBe('fails_otherwise'));
  it('an infrastructure failure says nothing', () => expect(run({ infra: 'evicted', reproduces: true })).toBe('infra'));
});

describe('fixVerdict', () => {
  it('fixed only when every run passes', () => {
    expect(fixVerdict(['passed', 'passed']).verdict).toBe('fixed');
    expect(fixVerdict(['passed', 'fails_otherwise']).verdict).toBe('inconclusive');
  });
  it('still reproduces when the bug shows and nothing passes', () => {
    expect(fixVerdict(['reproduces', 'reproduces']).verdict).toBe('still_reproduces');
    expect(fixVerdict(['reproduces', 'infra']).verdict).toBe('still_reproduces');
  });
  it('a flaky mix is inconclusive', () =>
    expect(fixVerdict(['reproduces', 'passed'])).toMatchObject({ verdict: 'inconclusive', reason: expect.stringMatching(/disagree/) }));
  it('a new error is inconclusive, not fixed', () =>
    expect(fixVerdict(['fails_otherwise'])).toMatchObject({ verdict: 'inconclusive', reason: expect.stringMatching(/another reason/) }));
  it('no runs is inconclusive', () => expect(fixVerdict([]).verdict).toBe('inconclusive'));
  it('only infrastructure failures is inconclusive', () => expect(fixVerdict(['infra']).reason).toMatch(/infrastructure/));
});
