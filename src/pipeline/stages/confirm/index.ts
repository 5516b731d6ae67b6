import { topLevelStop } from './unreached-checks.js';
import type { CandidateRun } from '../../../agent/run-candidate.js';
import { runCandidate } from '../../../agent/run-candidate.js';
import type { ScriptExecutor, Workspace } from '../../../exec/types.js';
import type { ReportReading } from '../../../symptoms/types.js';

export interface ConfirmResult {
  reproducedRuns: number;
  totalRuns: number;
  runs: {
    seed: number;
    verdict: string;
    exitCode: number | null;
    durationMs: number;
    reasons: string[];
    /** The script's top-level line the run's uncaught exception left it at (unreached-checks.ts), when there is one. */
    stopLine?: number | null;
  }[];
  /** An infrastructure failure during confirmation, if any. */
  infra: string | null;
}

/** Seeds of the confirmation runs: different from the attempt's seed 0. */
export function confirmSeeds(n: number): number[] {
  return Array.from({ length: n }, (_, i) => 1 + i * 1000);
}

/**
 * Stage 5, confirm: reruns the final script with different seeds and counts how many runs show the bug
 * ("reproduced k/n runs"). Up to `parallel` runs at once (REPGEN_PARALLEL_RUNS): each is its own sandbox and
 * seed, so order changes nothing but the wall clock. Results are read in seed order and stop at the first
 * infrastructure failure, as a sequential loop would count them.
 */
export async function runConfirm(
  input: {
    final: CandidateRun;
    report: ReportReading;
    runs: number;
    parallel?: number;
    settings: { runTimeoutMs: number; runMemoryMb: number };
    /** Runs of the final script already started by seed (EarlyConfirm.take): each is awaited, not started again. */
    early?: ReadonlyMap<number, Promise<CandidateRun>>;
  },
  deps: { executor: ScriptExecutor; workspace?: Workspace },
  signal?: AbortSignal,
): Promise<ConfirmResult> {
  const seeds = confirmSeeds(input.runs);
  const width = Math.max(1, Math.min(input.parallel ?? 1, seeds.length));
  const runs: (CandidateRun | undefined)[] = new Array(seeds.length);
  let next = 0;
  let failed = false;
  // `width` workers take the next seed each; after an infrastructure failure no new run starts.
  const worker = async (): Promise<void> => {
    while (!failed && next < seeds.length) {
      const i = next++;
      const seed = seeds[i] as number;
      const run = await (input.early?.get(seed) ??
        runCandidate(input.final.script, { report: input.report, seed, settings: input.settings }, deps, signal));
      runs[i] = run;
      if (run.run.infra) failed = true;
    }
  };
  await Promise.all(Array.from({ length: width }, worker));
  const result: ConfirmResult = { reproducedRuns: 0, totalRuns: 0, runs: [], infra: null };
  for (const [i, run] of runs.entries()) {
    if (!run) break;
    if (run.run.infra) {
      result.infra = `${run.run.infra.kind}: ${run.run.infra.message}`;
      break;
    }
    result.totalRuns += 1;
    if (run.match.verdict === 'reproduced') result.reproducedRuns += 1;
    result.runs.push({
      seed: seeds[i] as number,
      verdict: run.match.verdict,
      exitCode: run.run.exitCode,
      durationMs: run.run.durationMs,
      reasons: run.match.reasons,
      stopLine: topLevelStop(run.reading),
    });
  }
  return result;
}

/**
 * Confirmation runs started before the confirm stage, in slots tier 0's search leaves free while its leading
 * reproduction waits on lower-numbered candidates that could still win (candidate-search.ts `spare`). They are the
 * same runs the stage would make (same script, seeds and settings); those of a script that did not win are cancelled.
 */
export interface EarlyConfirm {
  /** Starts the next confirmation seed of the leader's script; null when every seed has started, or after take(). */
  spare(leader: CandidateRun): Promise<void> | null;
  /** The runs started for `script`, by seed, for runConfirm's `early`; every other script's are cancelled. */
  take(script: string | null): ReadonlyMap<number, Promise<CandidateRun>>;
}

export function createEarlyConfirm(
  input: { report: ReportReading; runs: number; settings: { runTimeoutMs: number; runMemoryMb: number } },
  deps: { executor: ScriptExecutor; workspace?: Workspace },
  signal?: AbortSignal,
): EarlyConfirm {
  const seeds = confirmSeeds(input.runs);
  const byScript = new Map<string, { runs: Map<number, Promise<CandidateRun>>; cancel: AbortController }>();
  let taken = false;
  return {
    spare(leader) {
      if (taken) return null;
      // A new leader is a lower-numbered candidate: the one before it can no longer win, nor its runs count.
      for (const [s, e] of byScript) if (s !== leader.script) e.cancel.abort();
      let entry = byScript.get(leader.script);
      if (!entry) byScript.set(leader.script, (entry = { runs: new Map(), cancel: new AbortController() }));
      const seed = seeds.find((s) => !entry.runs.has(s));
      if (seed === undefined) return null;
      const sig = signal ? AbortSignal.any([signal, entry.cancel.signal]) : entry.cancel.signal;
      const run = runCandidate(leader.script, { report: input.report, seed, settings: input.settings }, deps, sig);
      entry.runs.set(seed, run);
      // Its outcome is read by runConfirm, or it was cancelled with its script: never an unhandled rejection here.
      return run.then(
        () => undefined,
        () => undefined,
      );
    },
    take(script) {
      taken = true;
      for (const [s, e] of byScript) if (s !== script) e.cancel.abort();
      return (script !== null ? byScript.get(script)?.runs : undefined) ?? new Map();
    },
  };
}
