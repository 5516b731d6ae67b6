import type { CandidateRun } from '../../../agent/run-candidate.js';
import { runCandidate } from '../../../agent/run-candidate.js';
import type { ScriptExecutor, Workspace } from '../../../exec/types.js';
import type { ReportReading } from '../../../symptoms/types.js';

export interface ConfirmResult {
  reproducedRuns: number;
  totalRuns: number;
  runs: { seed: number; verdict: string; exitCode: number | null; durationMs: number; reasons: string[] }[];
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
      const run = await runCandidate(
        input.final.script,
        { report: input.report, seed: seeds[i] as number, settings: input.settings },
        deps,
        signal,
      );
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
    });
  }
  return result;
}
