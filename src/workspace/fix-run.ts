import { runCandidate, type CandidateRun, type RunLimitsSettings } from '../agent/run-candidate.js';
import type { ScriptExecutor, Workspace } from '../exec/types.js';
import type { ReportReading } from '../symptoms/types.js';
import { classifyFixRun, type FixRunOutcome } from './fix-verdict.js';

/** One run of a reproduction against a changed project (a fixing ref, a candidate patch), read as a fix check reads it. */
export interface FixRunResult {
  run: CandidateRun;
  /** The infrastructure failure, as `kind: message`, or null. */
  infra: string | null;
  outcome: FixRunOutcome;
}

/**
 * Runs the script in `workspace` with the reproduction's executor and limits, labelled `purpose`, and classifies the
 * result (fix-verdict.ts): the fix check at a fixing ref and the candidate fix's patched copy run it the same way.
 */
export async function runAgainstChange(
  script: string,
  input: { report: ReportReading; seed: number; settings: RunLimitsSettings; purpose: string },
  deps: { executor: ScriptExecutor; workspace: Workspace },
  signal?: AbortSignal,
): Promise<FixRunResult> {
  const c = await runCandidate(
    script,
    { report: input.report, seed: input.seed, settings: input.settings, labels: { purpose: input.purpose } },
    deps,
    signal,
  );
  const infra = c.run.infra ? `${c.run.infra.kind}: ${c.run.infra.message}` : null;
  const outcome = classifyFixRun({
    exitCode: c.run.exitCode,
    signal: c.run.signal,
    timedOut: c.run.timedOut,
    infra,
    reproduces: c.match.verdict === 'reproduced',
  });
  return { run: c, infra, outcome };
}
