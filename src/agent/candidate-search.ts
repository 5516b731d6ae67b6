import type { CandidateRun } from './run-candidate.js';

/** A candidate's run and how long it took. */
export interface Finished {
  run: CandidateRun;
  ms: number;
}

export interface SearchOptions {
  /** Runs at once: candidates, and spare work while a reproduction waits on lower-numbered candidates. */
  width: number;
  /** Whether candidate `i` may still start (the job's deadline). */
  mayStart: (i: number) => boolean;
  now: () => number;
  /** The candidates running after new ones started (0-based, ascending). */
  onStart?: (running: number[]) => void | Promise<void>;
  /** A candidate's run ended (not one cancelled because a lower-numbered candidate reproduced). */
  onFinish?: (i: number, f: Finished) => void | Promise<void>;
  /**
   * Work for a slot left free while the leading reproduction waits on lower-numbered candidates that could still
   * win: one unit (a confirmation run of the leader's script), or null when there is none. It must not reject.
   */
  spare?: (leader: CandidateRun) => Promise<void> | null;
}

/** A candidate's run and its 0-based number. */
export interface Ranked {
  index: number;
  run: CandidateRun;
}

export interface SearchOutcome {
  /** The lowest-numbered candidate the matcher accepted, once every lower one has ended. */
  winner: Ranked | null;
  /** The first run that failed for infrastructure reasons; the search stopped there. */
  infra: Ranked | null;
}

/**
 * Tier 0's search over its candidates, in order, `width` at a time: a slot that frees starts the next candidate at
 * once (a slow candidate holds one slot, not a batch). The winner is the lowest-numbered candidate that reproduces:
 * once one does, no higher-numbered candidate starts, those running are cancelled (they cannot win), and slots freed
 * while lower-numbered ones still run go to `spare` work. A pattern-only match stops new starts too (no other
 * candidate does better than the report's own values allow); an infrastructure failure ends the search.
 * Cancellation of the job (`signal`) rejects with the run's CancelledError.
 */
export async function searchCandidates(
  n: number,
  start: (i: number, signal: AbortSignal) => Promise<CandidateRun>,
  opts: SearchOptions,
  signal?: AbortSignal,
): Promise<SearchOutcome> {
  const running = new Map<number, { done: Promise<void>; cancel: AbortController }>();
  const active = new Set<Promise<void>>();
  let spareRunning = 0;
  let next = 0;
  // Set by the runs' callbacks: an object, so that the loop below reads what they wrote.
  const st: { leader: Ranked | null; infra: Ranked | null; noMore: boolean } = { leader: null, infra: null, noMore: false };

  const cancelAbove = (i: number): void => {
    for (const [k, r] of running) if (k > i) r.cancel.abort();
  };
  const launch = (i: number): void => {
    const cancel = new AbortController();
    const sig = signal ? AbortSignal.any([signal, cancel.signal]) : cancel.signal;
    const t0 = opts.now();
    const done = start(i, sig)
      .then(
        async (run) => {
          await opts.onFinish?.(i, { run, ms: opts.now() - t0 });
          if (run.run.infra) {
            st.infra ??= { index: i, run };
            st.noMore = true;
          } else if (run.match.verdict === 'reproduced') {
            if (!st.leader || i < st.leader.index) {
              st.leader = { index: i, run };
              cancelAbove(i);
            }
          } else if (run.match.patternOnly === true) st.noMore = true;
        },
        (err: unknown) => {
          // Cancelled because a lower-numbered candidate reproduced: not an attempt, nothing to record.
          if (cancel.signal.aborted && !signal?.aborted) return;
          throw err;
        },
      )
      .finally(() => {
        running.delete(i);
        active.delete(done);
      });
    // Settled in the race below, or after the search ended: never an unhandled rejection.
    done.catch(() => undefined);
    running.set(i, { done, cancel });
    active.add(done);
  };

  for (;;) {
    const { leader } = st;
    const bound = leader?.index ?? n;
    let started = false;
    while (!st.infra && !st.noMore && running.size + spareRunning < opts.width && next < bound && opts.mayStart(next)) {
      launch(next);
      next += 1;
      started = true;
    }
    if (started) await opts.onStart?.([...running.keys()].sort((a, b) => a - b));
    const lowerRunning = [...running.keys()].some((k) => k < bound);
    if (st.infra || (leader && !lowerRunning) || running.size === 0) break;
    while (leader && opts.spare && running.size + spareRunning < opts.width) {
      const work = opts.spare(leader.run);
      if (!work) break;
      spareRunning += 1;
      const unit: Promise<void> = work.finally(() => {
        spareRunning -= 1;
        active.delete(unit);
      });
      active.add(unit);
    }
    await Promise.race(active);
  }
  // What still runs cannot change the outcome: stop it, and let it end before the caller goes on.
  for (const r of running.values()) r.cancel.abort();
  await Promise.allSettled([...running.values()].map((r) => r.done));
  return { winner: st.infra ? null : st.leader, infra: st.infra };
}

/** "candidate 3", "candidates 3–4", "candidates 1, 3": 1-based, for progress lines. */
export function candidateList(running: number[]): string {
  const ns = running.map((i) => i + 1);
  if (ns.length === 1) return `candidate ${ns[0]}`;
  const contiguous = ns.every((x, k) => k === 0 || x === (ns[k - 1] ?? 0) + 1);
  return contiguous ? `candidates ${ns[0]}–${ns[ns.length - 1]}` : `candidates ${ns.join(', ')}`;
}
