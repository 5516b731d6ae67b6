import { describe, expect, it } from 'vitest';
import type { CandidateRun } from '../../../src/agent/run-candidate.js';
import { confirmSeeds, createEarlyConfirm, runConfirm } from '../../../src/pipeline/stages/confirm/index.js';
import { readReport } from '../../../src/symptoms/index.js';
import { FakeExecutor } from '../../fakes/fake-executor.js';

const report = readReport(
  '```\nTraceback (most recent call last):\n  File "x.py", line 1, in <module>\nIndexError: list index out of range\n```\n',
);
const final = { script: 'x = [1][5]\n', seed: 0 } as CandidateRun;
const settings = { runTimeoutMs: 10_000, runMemoryMb: 512 };

/** Runs that take `ms` each and record how many were in flight at once. */
function slowExecutor(ms: number, outcome: (seed: number) => 'crash' | 'clean' | 'infra'): { executor: FakeExecutor; peak: () => number } {
  let inFlight = 0;
  let peak = 0;
  const executor = new FakeExecutor((req) => {
    const o = outcome(req.seed ?? 0);
    return o === 'crash'
      ? {
          exitCode: 1,
          stderr: 'Traceback (most recent call last):\n  File "repro.py", line 1, in <module>\nIndexError: list index out of range\n',
        }
      : o === 'infra'
        ? { infra: { kind: 'spawn_failed', message: 'no sandbox' } }
        : { exitCode: 0, stdout: 'ok\n' };
  });
  const run = executor.run.bind(executor);
  executor.run = async (input, signal) => {
    inFlight += 1;
    peak = Math.max(peak, inFlight);
    await new Promise((r) => setTimeout(r, ms));
    try {
      return await run(input, signal);
    } finally {
      inFlight -= 1;
    }
  };
  return { executor, peak: () => peak };
}

describe('runConfirm: seeded re-runs, up to `parallel` at once', () => {
  it('runs them side by side and counts them in seed order', async () => {
    const seeds = confirmSeeds(4);
    const { executor, peak } = slowExecutor(50, (seed) => (seed === seeds[2] ? 'clean' : 'crash'));
    const r = await runConfirm({ final, report, runs: 4, parallel: 2, settings }, { executor });
    expect(peak()).toBe(2);
    expect(r).toMatchObject({ reproducedRuns: 3, totalRuns: 4, infra: null });
    expect(r.runs.map((x) => x.seed)).toEqual(seeds);
    expect(r.runs.map((x) => x.verdict)).toEqual(['reproduced', 'reproduced', 'not_reproduced', 'reproduced']);
  });

  it('one at a time by default; an infrastructure failure ends the count where a sequential loop would', async () => {
    const seeds = confirmSeeds(3);
    const one = slowExecutor(5, () => 'crash');
    expect((await runConfirm({ final, report, runs: 3, settings }, { executor: one.executor })).reproducedRuns).toBe(3);
    expect(one.peak()).toBe(1);
    const broken = slowExecutor(5, (seed) => (seed === seeds[1] ? 'infra' : 'crash'));
    const r = await runConfirm({ final, report, runs: 3, parallel: 3, settings }, { executor: broken.executor });
    expect(r).toMatchObject({ reproducedRuns: 1, totalRuns: 1 });
    expect(r.infra).toMatch(/spawn_failed: no sandbox/);
  });
});

describe('createEarlyConfirm: confirmation runs started in tier 0 spare slots', () => {
  it('starts one seed per call, hands the winner its runs, and cancels a former leader when a new one comes', async () => {
    const aborted: string[] = [];
    const executor = new FakeExecutor(() => ({
      exitCode: 1,
      stderr: 'Traceback (most recent call last):\n  File "repro.py", line 1, in <module>\nIndexError: list index out of range\n',
      delayMs: 200,
    }));
    const run = executor.run.bind(executor);
    executor.run = (input, signal) => {
      signal?.addEventListener('abort', () => aborted.push(String(input.files[0]?.content)));
      return run(input, signal);
    };
    const early = createEarlyConfirm({ report, runs: 3, settings }, { executor });
    const b = { script: 'b = [1][5]\n', seed: 0 } as CandidateRun;
    expect(early.spare(b)).not.toBeNull();
    // A lower-numbered candidate reproduces: it leads now, and b's run is cancelled.
    const a = { script: 'a = [1][5]\n', seed: 0 } as CandidateRun;
    const units = [early.spare(a), early.spare(a), early.spare(a)];
    expect(units.every((u) => u !== null)).toBe(true);
    expect(early.spare(a)).toBeNull();
    expect(aborted).toEqual(['b = [1][5]\n']);
    const runs = early.take(a.script);
    expect([...runs.keys()]).toEqual(confirmSeeds(3));
    const r = await runConfirm({ final: a, report, runs: 3, parallel: 2, settings, early: runs }, { executor });
    expect(r).toMatchObject({ reproducedRuns: 3, totalRuns: 3 });
    // Each seed of a ran once: the confirm stage awaited the early runs instead of starting its own.
    expect(executor.requests.filter((q) => q.files[0]?.content === a.script)).toHaveLength(3);
    expect(early.spare(a)).toBeNull();
  });
});
