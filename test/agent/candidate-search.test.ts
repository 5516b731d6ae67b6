import { describe, expect, it } from 'vitest';
import { candidateList, searchCandidates } from '../../src/agent/candidate-search.js';
import type { CandidateRun } from '../../src/agent/run-candidate.js';
import { CancelledError } from '../../src/errors.js';

type Verdict = 'reproduced' | 'not_reproduced' | 'pattern' | 'infra';

/**
 * When a fake candidate's run ends: 'now' (in the next microtask), 'last' (once nothing else can happen: every
 * other run and the search have settled), 'never' (only its cancellation ends it), or on an event of the search
 * (`{ after: 'start 3' }`), or at 'last' if that event never comes. No timer decides an order: the runs end on the
 * search's own events, so a busy machine sees the same order as a quiet one.
 */
type Ending = 'now' | 'last' | 'never' | { after: string };

/** The search's events so far, and waiters for the ones to come. */
function eventLog() {
  const events: string[] = [];
  const waiters = new Map<string, (() => void)[]>();
  return {
    events,
    push(e: string): void {
      events.push(e);
      for (const w of waiters.get(e) ?? []) w();
      waiters.delete(e);
    },
    when(e: string): Promise<void> {
      if (events.includes(e)) return Promise.resolve();
      return new Promise((r) => waiters.set(e, [...(waiters.get(e) ?? []), r]));
    },
  };
}

/** Resolves once every microtask queued so far, and those they queue, has run: nothing else can happen. */
const quiet = (): Promise<void> => new Promise((r) => setImmediate(r));

/** A run that ends as `ending` says with `verdict`, or rejects as cancelled when its signal fires first. */
function fakeRun(
  i: number,
  verdict: Verdict,
  ending: Ending,
  signal: AbortSignal,
  log: ReturnType<typeof eventLog>,
): Promise<CandidateRun> {
  return new Promise((resolve, reject) => {
    let settled = false;
    const end = (): void => {
      if (settled || signal.aborted) return;
      settled = true;
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
    };
    if (ending === 'now') void Promise.resolve().then(end);
    else if (ending !== 'never') {
      if (typeof ending === 'object') void log.when(ending.after).then(end);
      void quiet().then(end);
    }
    signal.addEventListener('abort', () => {
      if (settled) return;
      settled = true;
      reject(new CancelledError('cancelled during a run'));
    });
  });
}

/** Runs the search over `plan` ([verdict, ending] per candidate) and records what happened, in order. */
async function search(plan: [Verdict, Ending][], opts: { spare?: boolean; width?: number } = {}) {
  const log = eventLog();
  const cancelled: number[] = [];
  const spareFor: string[] = [];
  let spares = 0;
  const outcome = await searchCandidates(
    plan.length,
    (i, signal) => {
      log.push(`start ${i}`);
      signal.addEventListener('abort', () => cancelled.push(i));
      const [verdict, ending] = plan[i] ?? ['not_reproduced', 'now'];
      return fakeRun(i, verdict, ending, signal, log);
    },
    {
      width: opts.width ?? 2,
      mayStart: () => true,
      now: Date.now,
      onFinish: (i) => log.push(`end ${i}`),
      ...(opts.spare
        ? {
            spare: (leader: CandidateRun) => {
              if (spares >= 3) return null;
              spares += 1;
              spareFor.push(leader.script);
              return Promise.resolve().then(() => log.push(`spare done ${spares}`));
            },
          }
        : {}),
    },
  );
  return { outcome, events: log.events, cancelled, spareFor };
}

describe('searchCandidates: tier 0 candidates, two at a time, the lowest-numbered reproduction wins', () => {
  it('a slow candidate holds one slot, not a batch: the next starts as soon as a slot frees', async () => {
    // Candidate 0 ends when candidate 3 has started, or when nothing else can happen (a batch would wait for it).
    const r = await search([
      ['not_reproduced', { after: 'start 3' }],
      ['not_reproduced', 'now'],
      ['not_reproduced', 'now'],
      ['reproduced', 'now'],
    ]);
    expect(r.outcome.winner?.index).toBe(3);
    // Candidates 2 and 3 ran while candidate 0 was still running.
    expect(r.events.indexOf('start 3')).toBeGreaterThan(-1);
    expect(r.events.indexOf('start 3')).toBeLessThan(r.events.indexOf('end 0'));
  });

  it('once one reproduces, no higher-numbered candidate starts; a lower one still running can win', async () => {
    const r = await search([
      ['reproduced', { after: 'end 1' }],
      ['reproduced', 'now'],
      ['not_reproduced', 'now'],
    ]);
    expect(r.outcome.winner?.index).toBe(0);
    expect(r.events).not.toContain('start 2');
  });

  it('a running higher-numbered candidate is cancelled when a lower one reproduces, and not reported', async () => {
    // Candidate 1 would end only once nothing else can happen: it is cancelled before.
    const r = await search([
      ['reproduced', 'now'],
      ['not_reproduced', 'last'],
    ]);
    expect(r.outcome.winner?.index).toBe(0);
    expect(r.cancelled).toEqual([1]);
    expect(r.events).not.toContain('end 1');
  });

  it('slots left free while a reproduction waits on a lower candidate go to spare work for that reproduction', async () => {
    const r = await search(
      [
        ['not_reproduced', { after: 'spare done 2' }],
        ['reproduced', 'now'],
        ['reproduced', 'now'],
      ],
      { spare: true },
    );
    expect(r.outcome.winner?.index).toBe(1);
    expect(r.spareFor.length).toBeGreaterThanOrEqual(2);
    expect(new Set(r.spareFor)).toEqual(new Set(['candidate 1']));
    // No spare work when nothing waits: the leader is the lowest still possible at once.
    const first = await search(
      [
        ['reproduced', 'now'],
        ['not_reproduced', 'now'],
      ],
      { spare: true },
    );
    expect(first.spareFor).toEqual([]);
  });

  it('a pattern-only match stops new starts; an infrastructure failure ends the search', async () => {
    const pattern = await search([
      ['pattern', 'now'],
      ['not_reproduced', 'last'],
      ['reproduced', 'now'],
    ]);
    expect(pattern.outcome.winner).toBeNull();
    expect(pattern.events).not.toContain('start 2');
    const infra = await search([
      ['infra', 'now'],
      ['not_reproduced', 'last'],
      ['reproduced', 'now'],
    ]);
    expect(infra.outcome.infra?.index).toBe(0);
    expect(infra.outcome.winner).toBeNull();
    expect(infra.cancelled).toEqual([1]);
  });

  it('cancelling the job rejects with the cancellation', async () => {
    const job = new AbortController();
    const log = eventLog();
    const p = searchCandidates(
      2,
      (i, signal) => fakeRun(i, 'not_reproduced', 'never', signal, log),
      // Cancelled once both candidates run: only the cancellation can end this search.
      { width: 2, mayStart: () => true, now: Date.now, onStart: (running) => void (running.length === 2 && job.abort()) },
      job.signal,
    );
    await expect(p).rejects.toBeInstanceOf(CancelledError);
  });

  it('names the running candidates for the progress line', () => {
    expect(candidateList([2])).toBe('candidate 3');
    expect(candidateList([2, 3])).toBe('candidates 3–4');
    expect(candidateList([0, 2])).toBe('candidates 1, 3');
  });
});
