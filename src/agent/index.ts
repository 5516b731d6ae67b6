import type { ContextBundle } from '../context/types.js';
import type { ScriptExecutor, Workspace } from '../exec/types.js';
import type { LlmClient, LlmUsage } from '../llm/types.js';
import type { Logger } from '../log.js';
import { loadPrompts, type Prompt } from '../prompts/load-prompts.js';
import type { ReproPlan } from '../plan/types.js';
import type { ReportResult } from '../report/types.js';
import { hasEvidence } from '../report/assess-evidence.js';
import { type CandidateRun } from './run-candidate.js';
import { runTier0 } from './run-tier0.js';
import type { StaticChecker } from './static-checker.js';
import type { CompletedSnippet } from './tier0.js';
import { runTier1, type AgentPrompts, type Budget } from './tier1.js';
import { tier1DepsOf } from './tier1-deps.js';
import { lackedReportSubjects, lackedSubjectsSentence, reportSubjects } from './check-framework.js';
import type { AgentStatus, AttemptRecord } from './types.js';

export { completeSnippet, mapCudaToCpu, standInMissingModules, type CompletedSnippet, type SnippetEdit } from './tier0.js';
export { runTier0, type Tier0Result } from './run-tier0.js';
export { createPyflakesChecker } from './pyflakes-checker.js';
export type { StaticChecker, StaticReport } from './static-checker.js';
export { checkRelevance } from './relevance.js';
export { checkFramework, lackedReportSubjects, lackedSubjectsSentence, missingSubjects, reportSubjects } from './check-framework.js';
export { runCandidate, type CandidateRun } from './run-candidate.js';
export type { AgentPrompts, Budget } from './tier1.js';

/** The agent's prompts and the report stage's, from prompts/. Throws PromptLoadError (a broken install). */
export async function loadAgentPrompts(): Promise<AgentPrompts & { report: Prompt }> {
  const p = await loadPrompts(['agent-system', 'generate', 'refine', 'format-error', 'report'] as const);
  return { system: p['agent-system'], generate: p.generate, refine: p.refine, formatError: p['format-error'], report: p.report };
}

export { AgentStatus, AttemptOutcome, AttemptRecord } from './types.js';

export interface AgentInput {
  report: ReportResult;
  plan: ReproPlan;
  bundles: ContextBundle[];
  /** Tier 0's completion of the report's code; null when the report has no Python code. */
  snippet: CompletedSnippet | null;
  environment: Record<string, string>;
  budget: Budget;
  usageSoFar: LlmUsage;
  /** Run tier 0 first (ReproSettings.tier0); off, tier 1 starts from the completion without running it. @defaultValue true */
  tier0?: boolean;
  /** The project's own top-level packages: with the report's frameworks, what a tier-1 script must call into. @defaultValue [] */
  projectPackages?: string[];
  /**
   * Installable packages the report's code imports (`cv2`, `pandas`; the env's reading of its imports): one its code calls
   * into that the interpreter lacks ends the run as the environment's, never as a model told to do without. @defaultValue []
   */
  reportPackages?: string[];
}

export interface AgentDeps {
  executor: ScriptExecutor;
  /** The project's checkout at the ref, carried by every tier-0 and tier-1 run. */
  workspace?: Workspace;
  llm: LlmClient | null;
  checker: StaticChecker;
  prompts: AgentPrompts | null;
  log: Logger;
  now?: () => number;
  onAttempt?: (a: AttemptRecord) => void | Promise<void>;
  /** What the agent starts doing now ("running tier 0 candidates 3–4 of 6"), for progress lines and heartbeats. */
  onActivity?: (what: string) => void | Promise<void>;
  /** Work for a slot tier 0 leaves free while its reproduction waits on a slower candidate (early confirmation runs). */
  spare?: (leader: CandidateRun) => Promise<void> | null;
  /** Which modules the run's interpreter cannot import (cached probe). @defaultValue the plan's missing modules */
  checkImports?: (modules: string[], signal?: AbortSignal) => Promise<string[]>;
}

export interface AgentResult {
  status: AgentStatus;
  reason: string;
  /** Which tier produced the final script. */
  tier: 0 | 1 | null;
  attempts: AttemptRecord[];
  final: CandidateRun | null;
  usage: LlmUsage;
}

/**
 * Stage 4, agent: tier 0 (the report's own code, completed by recorded edits; no model) goes first;
 * tier 1 (generate-validate-refine with the model) runs when tier 0 did not reproduce and there is a model.
 */
export async function runAgent(input: AgentInput, deps: AgentDeps, signal?: AbortSignal): Promise<AgentResult> {
  const attempts: AttemptRecord[] = [];
  const none: LlmUsage = { inputTokens: 0, outputTokens: 0, costUsd: 0 };
  let final: CandidateRun | null = null;
  const snippet = input.snippet;
  // The interpreter lacks a framework the report is about: no tier runs, and no model is told to do without it.
  const missingOf = async (modules: string[]): Promise<string[]> => [
    ...new Set([...input.plan.missingModules, ...(deps.checkImports ? await deps.checkImports(modules, signal) : [])]),
  ];
  const lacked = await lackedReportSubjects(input.report, missingOf, input.projectPackages, input.reportPackages);
  if (lacked.length) {
    const subjects = reportSubjects(input.report.facts, input.projectPackages);
    return { status: 'exit_env', reason: lackedSubjectsSentence(lacked, subjects), tier: null, attempts, final, usage: none };
  }
  if (snippet && input.tier0 !== false) {
    const t0 = await runTier0(
      { snippet, report: input.report, plan: input.plan, budget: input.budget },
      {
        executor: deps.executor,
        workspace: deps.workspace,
        log: deps.log,
        now: deps.now,
        onAttempt: deps.onAttempt,
        onActivity: deps.onActivity,
        ...(deps.spare ? { spare: deps.spare } : {}),
      },
      signal,
    );
    attempts.push(...t0.attempts);
    final = t0.final;
    if (t0.reproduced)
      return {
        status: 'reproduced',
        reason: "the report's own code, completed by tier 0, shows the bug",
        tier: 0,
        attempts,
        final,
        usage: none,
      };
    if (t0.infra) return { status: 'exit_infra', reason: `the executor failed: ${t0.infra}`, tier: 0, attempts, final, usage: none };
    // The report's own code shows the pattern and only random-state values differ: a model cannot do better.
    const pattern = t0.attempts.find((a) => a.outcome === 'pattern_reproduced');
    if (pattern) return { status: 'not_reproduced', reason: pattern.feedback, tier: 0, attempts, final, usage: none };
  }
  // Nothing in the report a run could start from or be held to (no code, no output, no stated expectation): the
  // outcome asks the reporter instead. Any one of them starts tier 1 (issue 40): the model's oracle, checked against
  // the report's words, can hold a run to a sentence the deterministic reader could not.
  if (!hasEvidence(input.report)) {
    return {
      status: 'skipped',
      reason: 'the report shows no code, output or stated expectation that a run could start from or be checked against',
      tier: attempts.length ? 0 : null,
      attempts,
      final,
      usage: none,
    };
  }
  if (!deps.llm || !deps.prompts) {
    return {
      status: snippet ? 'not_reproduced' : 'skipped',
      reason: snippet ? 'tier 0 did not reproduce the bug and there is no model for tier 1' : 'no code to run and no model to write any',
      tier: snippet ? 0 : null,
      attempts,
      final,
      usage: none,
    };
  }
  const tier1 = await runTier1(
    {
      report: input.report,
      plan: input.plan,
      bundles: input.bundles,
      // Tier 0's completion is tier 1's starting point: the candidate that came closest, else the first.
      snippet: final?.script ?? snippet?.script ?? '',
      environment: input.environment,
      budget: input.budget,
      firstAttempt: attempts.length,
      usageSoFar: input.usageSoFar,
      missingModules: input.plan.missingModules,
      ...(input.projectPackages ? { projectPackages: input.projectPackages } : {}),
      ...(input.reportPackages ? { reportPackages: input.reportPackages } : {}),
    },
    tier1DepsOf({ ...deps, llm: deps.llm, prompts: deps.prompts }),
    signal,
  );
  return {
    status: tier1.status,
    reason: tier1.reason,
    tier: 1,
    attempts: [...attempts, ...tier1.attempts],
    final: tier1.final ?? final,
    usage: tier1.usage,
  };
}
