import { sweepLostRuns, type SweepLostRunsDeps } from './sweep-lost-runs.js';

/**
 * Sweeps for lost runs now and every `everyMs` (0: never), one sweep at a time; a failed sweep is logged and the
 * next one tries again. Returns the stop function, which waits for a sweep under way.
 */
export function startLostRunSweeps(everyMs: number, deps: SweepLostRunsDeps): () => Promise<void> {
  if (everyMs <= 0) return async () => undefined;
  let current: Promise<void> | null = null;
  const sweep = (): void => {
    current ??= sweepLostRuns(deps)
      .then((r) => (r.lost.length ? deps.log.warn({ lost: r.lost }, 'lost runs found and said') : undefined))
      .catch((err: Error) => deps.log.warn({ err: err.message }, 'lost-run sweep failed'))
      .finally(() => (current = null));
  };
  sweep();
  const timer = setInterval(sweep, everyMs);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await current;
  };
}
