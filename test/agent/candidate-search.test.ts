import { describe, expect, it } from 'vitest';
import { candidateList, searchCandidates } from '../../src/agent/candidate-search.js';
import type { CandidateRun } from '../../src/agent/run-candidate.js';
import { CancelledError } from '../../src/errors.js';

type Verdict = 'reproduced' | 'not_reproduced' | 'pattern' | 'infra';

/** A run that ends after `ms` with `verdict`, or rejects as cancelled when its signal fires first. */
function fakeRun(i: number, verdict: Verdict, ms: number, signal: AbortSignal): Promise<CandidateRun> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      resolve({
        script: `candidate ${i}`,
        seed: 0,
        run: { infra: verdict === 'infra' ? { kind: 'executor', message: 'down' } : null },
        reading: {},
        match: {
          verdict: verdict === 'reproduced' ? 'reproduced' : 'not_reproduced',
          score: 0,
          reasons: [],
          ...(verdict === 'pattern' ? { patternOnly: true } : {}),
        },
      } as unknown as CandidateRun);
    }, ms);
    signal.addEventListener('abort', () => {
      clearTimeout(timer);
      reject(new CancelledError('cancelled during a run'));
    });
  });
}

/** Runs the search over `plan` ([verdict, ms] per candidate) and records what happened when. */
async function search(plan: [Verdict, number][], opts: { spare?: boolean; width?: number } = {}) {
  const t0 = Date.now();
  const events: string[] = [];
  const cancelled: number[] = [];
  const spareFor: string[] = [];
  let spares = 0;
  const outcome = await searchCandidates(
    plan.length,
    (i, signal) => {
      events.push(`start ${i}`);
      signal.addEventListener('abort', () => cancelled.push(i));
      const [verdict, ms] = plan[i] ?? ['not_reproduced', 0];
      return fakeRun(i, verdict, ms, signal);
    },
    {
      width: opts.width ?? 2,
      mayStart: () => true,
      now: Date.now,
      onFinish: (i) => void events.push(`end ${i}`),
      ...(opts.spare
        ? {
            spare: (leader: CandidateRun) => {
              if (spares >= 3) return null;
              spares += 1;
              spareFor.push(leader.script);
              return new Promise<void>((r) => setTimeout(r, 30));
            },
          }
        : {}),
    },
  );
  return { outcome, events, cancelled, spareFor, ms: Date.now() - t0 };
}

describe('searchCandidates: tier 0 candidates, two at a time, the lowest-numbered reproduction wins', () => {
  it('a slow candidate holds one slot, not a batch: the next starts as soon as a slot frees', async () => {
    const r = await search([
      ['not_reproduced', 200],
      ['not_reproduced', 10],
      ['not_reproduced', 10],
      ['reproduced', 10],
    ]);
    expect(r.outcome.winner?.index).toBe(3);
    // Candidates 2 and 3 ran while candidate 0 was still running.
    expect(r.events.indexOf('start 3')).toBeLessThan(r.events.indexOf('end 0'));
    expect(r.ms).toBeLessThan(190 + 10 * 3);
  });

  it('once one reproduces, no higher-numbered candidate starts; a lower one still running can win', async () => {
    const r = await search([
      ['reproduced', 120],
      ['reproduced', 10],
      ['not_reproduced', 10],
    ]);
    expect(r.outcome.winner?.index).toBe(0);
    expect(r.events).not.toContain('start 2');
  });

  it('a running higher-numbered candidate is cancelled when a lower one reproduces, and not reported', async () => {
    const r = await search([
      ['reproduced', 10],
      ['not_reproduced', 5_000],
    ]);
    expect(r.outcome.winner?.index).toBe(0);
    expect(r.cancelled).toEqual([1]);
    expect(r.events).not.toContain('end 1');
    expect(r.ms).toBeLessThan(2_000);
  });

  it('slots left free while a reproduction waits on a lower candidate go to spare work for that reproduction', async () => {
    const r = await search(
      [
        ['not_reproduced', 150],
        ['reproduced', 10],
        ['reproduced', 10],
      ],
      { spare: true },
    );
    expect(r.outcome.winner?.index).toBe(1);
    expect(r.spareFor.length).toBeGreaterThanOrEqual(2);
    expect(new Set(r.spareFor)).toEqual(new Set(['candidate 1']));
    // No spare work when nothing waits: the leader is the lowest still possible at once.
    const first = await search(
      [
        ['reproduced', 10],
        ['not_reproduced', 10],
      ],
      { spare: true },
    );
    expect(first.spareFor).toEqual([]);
  });

  it('a pattern-only match stops new starts; an infrastructure failure ends the search', async () => {
    const pattern = await search([
      ['pattern', 10],
      ['not_reproduced', 30],
      ['reproduced', 10],
    ]);
    expect(pattern.outcome.winner).toBeNull();
    expect(pattern.events).not.toContain('start 2');
    const infra = await search([
      ['infra', 10],
      ['not_reproduced', 5_000],
      ['reproduced', 10],
    ]);
    expect(infra.outcome.infra?.index).toBe(0);
    expect(infra.outcome.winner).toBeNull();
    expect(infra.cancelled).toEqual([1]);
  });

  it('cancelling the job rejects with the cancellation', async () => {
    const job = new AbortController();
    const p = searchCandidates(
      2,
      (i, signal) => fakeRun(i, 'not_reproduced', 5_000, signal),
      { width: 2, mayStart: () => true, now: Date.now },
      job.signal,
    );
    setTimeout(() => job.abort(), 20);
    await expect(p).rejects.toBeInstanceOf(CancelledError);
  });

  it('names the running candidates for the progress line', () => {
    expect(candidateList([2])).toBe('candidate 3');
    expect(candidateList([2, 3])).toBe('candidates 3–4');
    expect(candidateList([0, 2])).toBe('candidates 1, 3');
  });
});
