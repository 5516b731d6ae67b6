// The evidence of a run (evidence.json) and its outcome, assembled from what the stages found. Pure.
import type { AgentResult } from '../agent/index.js';
import type { CompletedSnippet } from '../agent/tier0.js';
import type { LlmUsage } from '../llm/types.js';
import { addUsage, NO_USAGE } from '../llm/usage.js';
import type { EnvironmentProbe, ReproPlan } from '../plan/index.js';
import { statedExpectation, type ReportResult } from '../report/index.js';
import type { FixCheck } from '../workspace/fix-verdict.js';
import type { RefRecord } from '../workspace/prepare-workspace.js';
import { dropFrameworkNoise } from '../symptoms/framework-output.js';
import type { SpecSummary } from './types.js';
import type { CandidateFixRecord } from './stages/candidate-fix/types.js';
import type { ConfirmResult } from './stages/confirm/index.js';
import type { OutcomeDecision } from './stages/outcome/index.js';
import type { ReproOutcome } from './types.js';

/** Everything the run found, for evidence.json. */
export interface ReproEvidence {
  outcome: ReproOutcome;
  report: ReportResult | null;
  plan: ReproPlan | null;
  probe: EnvironmentProbe | null;
  context: { bundles: number; semantic: string; trainingLoops: number; error: string | null; ranks: number[] } | null;
  tier0: {
    script: string;
    edits: string[];
    unresolved: string[];
    staticTools: string[];
    /** What tier 0 could not complete, and why. */
    missing: { name: string; why: string; blocking: boolean }[];
    /** The candidates tier 0 built (label and the lines it added). */
    candidates: { label: string; added: string[] }[];
    analysisMs: number;
  } | null;
  finalRun: {
    script: string;
    seed: number;
    exitCode: number | null;
    timedOut: boolean;
    durationMs: number;
    output: string;
    isolation: unknown;
    reading: unknown;
    match: unknown;
  } | null;
  confirm: ConfirmResult | null;
  /** The project's ref the runs used (set by whoever prepared the workspace). */
  ref?: RefRecord;
  /** The confirmed repro re-run at a fixing ref (`--verify-fix`, a fixing PR). */
  fixCheck?: FixCheck;
  /** The candidate fix and the reproduction's runs against it (issue 41); absent when the step was off or nothing reproduced. */
  candidateFix?: CandidateFixRecord;
  /** The run spec's caps (with who set each), executor, model and notes (set by reproduceIssue). */
  spec?: SpecSummary;
}

/** What the stages found, each null when its stage did not run. */
export interface StageFindings {
  report: ReportResult | null;
  plan: ReproPlan | null;
  probe: EnvironmentProbe | null;
  snippet: CompletedSnippet | null;
  agent: AgentResult | null;
  confirm: ConfirmResult | null;
  context: ReproEvidence['context'];
  infra: string | null;
}

/** The outcome (the decision, with the evidence a reader checks it by) and the evidence behind it. */
export function buildEvidence(
  f: StageFindings,
  decision: OutcomeDecision,
  run: { usage: LlmUsage; environment: Record<string, string>; notes: string[]; durationMs: number },
): ReproEvidence {
  const { report, plan, snippet, agent, confirm } = f;
  const final = agent?.final ?? null;
  const totalUsage = addUsage(run.usage, agent?.usage ?? NO_USAGE);
  const outcome: ReproOutcome = {
    status: decision.status,
    summary: decision.summary,
    script: final?.script ?? [...(agent?.attempts ?? [])].reverse().find((a) => a.script)?.script ?? snippet?.script ?? null,
    confirmation: confirm ? { reproducedRuns: confirm.reproducedRuns, totalRuns: confirm.totalRuns } : null,
    expected: report?.reading.expected ?? [],
    observed: final?.reading.symptoms ?? [],
    match: final?.match ?? null,
    metrics: final?.reading.metrics ?? [],
    outputExcerpt: final ? dropFrameworkNoise(final.run.output).slice(-4000) : '',
    environment: run.environment,
    attempts: agent?.attempts ?? [],
    needsInfo: decision.needsInfo,
    usage: { inputTokens: totalUsage.inputTokens, outputTokens: totalUsage.outputTokens, costUsd: totalUsage.costUsd },
    durationMs: run.durationMs,
    blockers: plan?.blockers.map((b) => b.what) ?? [],
    notes: run.notes,
    verdict: decision.verdict,
    // Only what the report says: an expectation the deterministic reading assumed is not the reporter's.
    reporterExpected: statedExpectation(report?.bug.expected ?? ''),
    reportedOutput: report?.reading.lastOutputLine ?? '',
    reportVersions: report?.reading.versions ?? [],
    confirmationRuns: confirm?.runs.map((r) => ({ seed: r.seed, verdict: r.verdict, reasons: r.reasons })) ?? [],
    scriptRan: final !== null,
  };
  return {
    outcome,
    report,
    plan,
    probe: f.probe,
    context: f.context,
    tier0: snippet
      ? {
          script: snippet.script,
          edits: snippet.edits.map((e) => e.detail),
          unresolved: snippet.unresolved,
          staticTools: snippet.static.tools,
          missing: snippet.missing,
          candidates: snippet.candidates.map((c) => ({ label: c.label, added: c.added })),
          analysisMs: snippet.analysisMs,
        }
      : null,
    finalRun: final
      ? {
          script: final.script,
          seed: final.seed,
          exitCode: final.run.exitCode,
          timedOut: final.run.timedOut,
          durationMs: final.run.durationMs,
          output: final.run.output.slice(-20_000),
          isolation: final.run.isolation,
          reading: final.reading,
          match: final.match,
        }
      : null,
    confirm,
  };
}
