import type { ScriptExecutor, Workspace } from '../exec/types.js';
import type { ReproEvidence } from './run-repro.js';
import type { FixCheck } from '../workspace/fix-verdict.js';
import type { RefRecord } from '../workspace/prepare-workspace.js';
import { verifyFix } from '../workspace/verify-fix.js';

/** The evidence with the ref it ran at; the comment's notes say which commit and why (and what the report named that is missing). */
export function withRef(evidence: ReproEvidence, ref: RefRecord): ReproEvidence {
  const line = `Project code: ${ref.repo ?? 'the repository'} at ${ref.sha ? ref.sha.slice(0, 12) : ref.ref} (${ref.why}).`;
  const notes = [line, ...ref.notes, ...(evidence.outcome.notes ?? [])];
  return { ...evidence, ref, outcome: { ...evidence.outcome, notes } };
}

/**
 * Stage after confirm when a fixing ref is given: the confirmed repro re-run against it. Without a
 * confirmed reproduction there is nothing to check, and the check says so instead of guessing.
 */
export async function checkFix(
  evidence: ReproEvidence,
  input: {
    ref: string;
    sha: string;
    workspace: Workspace;
    settings: { runTimeoutMs: number; runMemoryMb: number; confirmRuns: number };
    executor: ScriptExecutor;
  },
  signal?: AbortSignal,
): Promise<ReproEvidence> {
  const o = evidence.outcome;
  let fixCheck: FixCheck;
  if (o.status !== 'reproduced' || !o.script || !evidence.report) {
    fixCheck = {
      ref: input.ref,
      sha: input.sha,
      verdict: 'inconclusive',
      reason: `nothing was reproduced (${o.status}), so there is no reproduction to run at the fix`,
      runs: [],
    };
  } else {
    fixCheck = await verifyFix(
      {
        script: o.script,
        report: evidence.report.reading,
        ref: input.ref,
        sha: input.sha,
        workspace: input.workspace,
        runs: Math.min(3, Math.max(1, input.settings.confirmRuns)),
        settings: input.settings,
      },
      { executor: input.executor },
      signal,
    );
  }
  const note = `Fix check at ${input.ref} (${input.sha.slice(0, 12)}): ${fixCheck.verdict.replace('_', ' ')}: ${fixCheck.reason}.`;
  return { ...evidence, fixCheck, outcome: { ...o, notes: [...(o.notes ?? []), note] } };
}
