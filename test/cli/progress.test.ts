import { describe, expect, it } from 'vitest';
import { benchProgress, formatElapsed, stagePrinter, type ProgressClock } from '../../src/cli/progress.js';

/** A clock the test moves: timers fire as time passes them, in order. */
function fakeClock(): ProgressClock & { advance: (ms: number) => void; timers: () => number } {
  let t = 1_000_000;
  const timers = new Map<number, { every: number; next: number; fn: () => void }>();
  let ids = 0;
  return {
    now: () => t,
    every: (ms, fn) => {
      const id = ids++;
      timers.set(id, { every: ms, next: t + ms, fn });
      return () => void timers.delete(id);
    },
    advance: (ms) => {
      const end = t + ms;
      for (;;) {
        const due = [...timers.values()].filter((x) => x.next <= end).sort((a, b) => a.next - b.next)[0];
        if (!due) break;
        t = due.next;
        due.next += due.every;
        due.fn();
      }
      t = end;
    },
    timers: () => timers.size,
  };
}

describe('formatElapsed', () => {
  it.each([
    [0, '0.0 s'],
    [420, '0.4 s'],
    [9_949, '9.9 s'],
    [9_999, '9.9 s'],
    [17_800, '17 s'],
    [59_999, '59 s'],
    [125_000, '2 min 05 s'],
    [-5, '0.0 s'],
  ])('%i ms → %s', (ms, text) => expect(formatElapsed(ms)).toBe(text));
});

describe('stagePrinter', () => {
  it("prints each stage's result with the time the stage took, when the next stage starts", () => {
    const clock = fakeClock();
    const lines: string[] = [];
    const p = stagePrinter((l) => lines.push(l), { clock });
    p.progress('report', 'extracting the report (no LLM)');
    clock.advance(400);
    p.progress('report', '2 Python block(s), 1 expected symptom(s)');
    expect(lines).toEqual([]);
    clock.advance(100);
    p.progress('plan', 'probing the environment and planning');
    clock.advance(3_200);
    p.progress('plan', '4 steps; data: synthetic');
    p.progress('confirm', 'skipped: nothing reproduced');
    clock.advance(100);
    p.flush();
    expect(lines).toEqual([
      '[report 0.5 s] 2 Python block(s), 1 expected symptom(s)',
      '[plan 3.2 s] 4 steps; data: synthetic',
      '[confirm 0.1 s] skipped: nothing reproduced',
    ]);
  });

  it('a stage quiet for 10 s gets a heartbeat saying what it is still doing, every 10 s of quiet', () => {
    const clock = fakeClock();
    const lines: string[] = [];
    const p = stagePrinter((l) => lines.push(l), { clock });
    p.progress('plan', 'probing the environment and planning');
    clock.advance(9_000);
    expect(lines).toEqual([]);
    clock.advance(1_000);
    expect(lines).toEqual(['[plan 10 s] still probing the environment and planning…']);
    clock.advance(10_000);
    expect(lines[1]).toBe('[plan 20 s] still probing the environment and planning…');
    clock.advance(2_000);
    p.progress('plan', '4 steps; data: synthetic');
    p.flush();
    expect(lines[2]).toBe('[plan 22 s] 4 steps; data: synthetic');
    expect(clock.timers()).toBe(0);
    clock.advance(60_000);
    expect(lines).toHaveLength(3);
  });

  it('a stage that has nothing to do ("skipped: …") gets no "still skipped" heartbeat; what runs next is said', () => {
    const clock = fakeClock();
    const lines: string[] = [];
    const p = stagePrinter((l) => lines.push(l), { clock });
    p.progress('confirm', 'skipped: nothing reproduced');
    clock.advance(30_000);
    expect(lines.join('\n')).not.toMatch(/still skipped/);
    p.progress('publish', 'waiting for pylint, whose findings can change the verdict');
    clock.advance(10_000);
    expect(lines).toEqual([
      '[confirm 30 s] skipped: nothing reproduced',
      '[publish 10 s] still waiting for pylint, whose findings can change the verdict…',
    ]);
    p.flush();
  });

  it("agent: each attempt's line as it ends, the heartbeat names the candidates running, and no activity is printed as a result", () => {
    const clock = fakeClock();
    const lines: string[] = [];
    const p = stagePrinter((l) => lines.push(l), { clock });
    p.progress('agent', 'tier 0 only (no LLM)');
    p.progress('agent', 'running tier 0 candidates 1–2 of 6');
    clock.advance(6_000);
    p.progress('agent', 'attempt 1 (tier 0): run_mismatch');
    p.progress('agent', 'attempt 2 (tier 0): run_mismatch');
    p.progress('agent', 'running tier 0 candidates 3–4 of 6');
    clock.advance(10_000);
    p.progress('confirm', 'skipped: nothing reproduced');
    p.flush();
    expect(lines).toEqual([
      '[agent 6.0 s] attempt 1 (tier 0): run_mismatch',
      '[agent 6.0 s] attempt 2 (tier 0): run_mismatch',
      '[agent 16 s] still running tier 0 candidates 3–4 of 6…',
      '[confirm 0.0 s] skipped: nothing reproduced',
    ]);
  });

  it('a stage with no attempt prints its last message; only the first line of a message', () => {
    const clock = fakeClock();
    const lines: string[] = [];
    const p = stagePrinter((l) => lines.push(l), { clock });
    p.progress('agent', 'skipped: no code\nsecond line');
    p.flush();
    p.flush();
    expect(lines).toEqual(['[agent 0.0 s] skipped: no code']);
  });
});

describe('benchProgress', () => {
  it('says N/M done and which cases run as each starts and ends, and a heartbeat with each running case', () => {
    const clock = fakeClock();
    const lines: string[] = [];
    const b = benchProgress((l) => lines.push(l), 3, { clock });
    const a = b.caseStarted('so-039');
    const c = b.caseStarted('so-046');
    expect(lines).toEqual([
      'repgen bench: [1/3] so-039 started; 0/3 done, running so-039',
      'repgen bench: [2/3] so-046 started; 0/3 done, running so-039, so-046',
    ]);
    a('plan', 'probing the environment and planning');
    c('agent', 'running tier 0 candidates 3–4 of 6');
    c('agent', 'attempt 3 (tier 0): run_mismatch');
    clock.advance(10_000);
    expect(lines[2]).toBe(
      'repgen bench: 0/3 done, 10 s in; still running so-039 (10 s, plan: probing the environment and planning); so-046 (10 s, agent: running tier 0 candidates 3–4 of 6)',
    );
    clock.advance(2_500);
    b.caseFinished('so-039', 'reproduced; judge: REPRODUCED');
    expect(lines[3]).toBe('repgen bench: so-039 (12 s): reproduced; judge: REPRODUCED; 1/3 done, running so-046');
    b.caseStarted('so-050');
    clock.advance(9_999);
    expect(lines).toHaveLength(5);
    b.caseFinished('so-046', 'needs_info');
    b.caseFinished('so-050', 'not_reproduced');
    expect(lines.slice(5)).toEqual([
      'repgen bench: so-046 (22 s): needs_info; 2/3 done, running so-050',
      'repgen bench: so-050 (9.9 s): not_reproduced; 3/3 done, none running',
    ]);
    clock.advance(60_000);
    expect(lines).toHaveLength(7);
    b.stop();
    expect(clock.timers()).toBe(0);
  });

  it('an attempt line is the activity only until the stage says what it does next', () => {
    const clock = fakeClock();
    const lines: string[] = [];
    const b = benchProgress((l) => lines.push(l), 1, { clock, heartbeatMs: 5_000 });
    const p = b.caseStarted('x');
    p('agent', 'attempt 1 (tier 0): incomplete_code');
    clock.advance(5_000);
    expect(lines[1]).toBe('repgen bench: 0/1 done, 5.0 s in; still running x (5.0 s, agent: attempt 1 (tier 0): incomplete_code)');
    b.stop();
  });
});
