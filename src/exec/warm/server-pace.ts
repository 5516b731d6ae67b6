/**
 * Whether a run that finds every server of its shape busy should wait for one to free or start its own (issue 42).
 * A new server pays a whole import (torch: about a second of CPU, several under load) before its first fork; a busy
 * one frees when its run ends. The confirmation's second seed found the first server busy with a 0.1 s run and started
 * a second, whose import was never used (the first server was free long before) and took a core from the runs that
 * were. So: where the runs of this shape so far ended sooner than its servers took to import, the run waits for a busy
 * one, at most as long as an import takes (then it starts its own, as before: at worst twice the cost of starting at
 * once); where runs are longer, or nothing is known yet, it starts its own at once.
 */
export interface ServerPace {
  /** A server of `key` became ready `ms` after it was spawned. */
  imported(key: string, ms: number): void;
  /** A forked run of `key` took `ms` from its fork to its end. */
  ran(key: string, ms: number): void;
  /** How long a run of `key` that finds its servers busy waits for one before starting its own; 0: start at once. */
  waitMs(key: string): number;
}

export function createServerPace(): ServerPace {
  const importMs = new Map<string, number>();
  const lastRunMs = new Map<string, number>();
  return {
    imported(key, ms) {
      // The slowest seen: an import that ran on an idle core says little about one under load.
      importMs.set(key, Math.max(ms, importMs.get(key) ?? 0));
    },
    ran(key, ms) {
      lastRunMs.set(key, ms);
    },
    waitMs(key) {
      const imp = importMs.get(key);
      const run = lastRunMs.get(key);
      if (imp === undefined || run === undefined || run >= imp) return 0;
      return Math.ceil(imp);
    },
  };
}
