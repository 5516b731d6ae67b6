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
 * ("reproduced k/n runs"). Runs are sequential: the local executor shares two cores with everything else.
 */
export async function runConfirm(
  input: { final: CandidateRun; report: ReportReading; runs: number; settings: { runTimeoutMs: number; runMemoryMb: number } },
  deps: { executor: ScriptExecutor; workspace?: Workspace },
  signal?: AbortSignal,
): Promise<ConfirmResult> {
  const result: ConfirmResult = { reproducedRuns: 0, totalRuns: 0, runs: [], infra: null };
  for (const seed of confirmSeeds(input.runs)) {
    const run = await runCandidate(input.final.script, { report: input.report, seed, settings: input.settings }, deps, signal);
    if (run.run.infra) {
      result.infra = `${run.run.infra.kind}: ${run.run.infra.message}`;
      break;
    }
    result.totalRuns += 1;
    if (run.match.verdict === 'reproduced') result.reproducedRuns += 1;
    result.runs.push({ seed, verdict: run.match.verdict, exitCode: run.run.exitCode, durationMs: run.run.durationMs, reasons: run.match.reasons });
  }
  return result;
}
