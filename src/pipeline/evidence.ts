import { shortRef } from '../bisect/plan-bisect.js';
import { runBisect, type BisectDeps } from '../bisect/run-bisect.js';
import type { BisectSource } from '../bisect/types.js';
import type { ScriptExecutor, Workspace } from '../exec/types.js';
import { importedModules } from '../plan/index.js';
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
        ...(o.match?.oracle ? { buggyOracle: o.match.oracle } : {}),
      },
      { executor: input.executor },
      signal,
    );
  }
  const note = `Fix check at ${input.ref} (${input.sha.slice(0, 12)}): ${fixCheck.verdict.replace('_', ' ')}: ${fixCheck.reason}.`;
  const { ref, sha, verdict, reason } = fixCheck;
  return { ...evidence, fixCheck, outcome: { ...o, fixCheck: { ref, sha, verdict, reason }, notes: [...(o.notes ?? []), note] } };
}

/**
 * Stage after the fix check when a regression is to be bisected (`--bisect GOOD`, `/repgen bisect`, a version
 * the report says worked): the confirmed repro run along the first parents from GOOD to the ref. A
 * bug that reproduced in every confirmation run takes one run a step; a flaky one takes seeded re-runs.
 */
export async function checkBisect(
  evidence: ReproEvidence,
  input: {
    source: BisectSource;
    settings: { runTimeoutMs: number; runMemoryMb: number; confirmRuns: number; bisectMaxSteps: number; bisectMaxMinutes: number };
    executor: ScriptExecutor;
    /** Each commit's own environment (issue 27): absent, every step runs on `executor`. */
    executorAt?: BisectDeps['executorAt'];
    progress?: (message: string) => void;
  },
  signal?: AbortSignal,
): Promise<ReproEvidence> {
  const o = evidence.outcome;
  const range = `${shortRef(input.source.good.ref)}..${shortRef(input.source.bad.ref)}`;
  if (o.status !== 'reproduced' || !o.script || !evidence.report) {
    const note = `No bisection (${range}, ${input.source.good.why}): nothing was reproduced (${o.status}).`;
    return { ...evidence, outcome: { ...o, notes: [...(o.notes ?? []), note] } };
  }
  const conf = o.confirmation;
  const flaky = !!conf && conf.totalRuns > 0 && conf.reproducedRuns < conf.totalRuns;
  const bisect = await runBisect(
    {
      script: o.script,
      report: evidence.report.reading,
      imports: importedModules(o.script),
      runsPerStep: flaky ? Math.min(3, Math.max(2, input.settings.confirmRuns)) : 1,
      maxSteps: input.settings.bisectMaxSteps,
      maxMs: input.settings.bisectMaxMinutes * 60_000,
      settings: input.settings,
    },
    {
      executor: input.executor,
      source: input.source,
      ...(input.executorAt ? { executorAt: input.executorAt } : {}),
      ...(input.progress ? { progress: input.progress } : {}),
    },
    signal,
  );
  const note = `Bisect ${range} (${input.source.good.why}): ${bisect.reason}; ${bisect.steps.length} runs for ${bisect.commitsInRange} commits.`;
  return { ...evidence, outcome: { ...o, bisect, notes: [...(o.notes ?? []), note] } };
}
