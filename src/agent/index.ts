import type { ContextBundle } from '../context/types.js';
import type { ScriptExecutor, Workspace } from '../exec/types.js';
import type { LlmClient, LlmUsage } from '../llm/types.js';
import type { Logger } from '../log.js';
import type { AttemptRecord } from '../pipeline/types.js';
import type { ReproPlan } from '../plan/types.js';
import type { ReportResult } from '../report/types.js';
import { parsePython } from './python-syntax.js';
import { mismatchFeedback, runCandidate, type CandidateRun } from './run-candidate.js';
import type { StaticChecker } from './static-checker.js';
import type { CompletedSnippet } from './tier0.js';
import { runTier1, type AgentPrompts, type Budget } from './tier1.js';

export { completeSnippet, type CompletedSnippet, type SnippetEdit } from './tier0.js';
export { createPyflakesChecker } from './pyflakes-checker.js';
export type { StaticChecker, StaticReport } from './static-checker.js';
export { checkRelevance } from './relevance.js';
export { runCandidate, type CandidateRun } from './run-candidate.js';
export type { AgentPrompts, Budget } from './tier1.js';

export type AgentStatus = 'reproduced' | 'not_reproduced' | 'exit_budget' | 'exit_infra' | 'skipped';

export interface AgentInput {
  report: ReportResult;
  plan: ReproPlan;
  bundles: ContextBundle[];
  /** Tier 0's completion of the report's code; null when the report has no Python code. */
  snippet: CompletedSnippet | null;
  environment: Record<string, string>;
  budget: Budget;
  usageSoFar: LlmUsage;
}

export interface AgentDeps {
  executor: ScriptExecutor;
  /** The project's checkout at the issue's ref, carried by every tier-0 and tier-1 run. */
  workspace?: Workspace;
  llm: LlmClient | null;
  checker: StaticChecker;
  prompts: AgentPrompts | null;
  log: Logger;
  now?: () => number;
  onAttempt?: (a: AttemptRecord) => void | Promise<void>;
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
  const now = deps.now ?? Date.now;
  let final: CandidateRun | null = null;
  const snippet = input.snippet;
  if (snippet) {
    const started = now();
    const edits = snippet.edits.map((e) => e.detail);
    const base = { n: 1, tier: 0 as const, bundle: null, script: snippet.script, edits };
    const parsed = await parsePython(snippet.script);
    // pyflakes compiles with CPython, which catches what tree-sitter forgives (inconsistent indentation).
    const syntaxFinding = snippet.static.findings.find((f) => f.severity === 'error' && !/^undefined name|referenced before assignment|outside (?:function|loop)/.test(f.message));
    let attempt: AttemptRecord;
    if (snippet.unresolved.length) {
      attempt = { ...base, outcome: 'incomplete_code', feedback: `not run: the report's code uses ${snippet.unresolved.map((u) => `\`${u}\``).join(', ')} without defining ${snippet.unresolved.length === 1 ? 'it' : 'them'}` };
    } else if (!parsed.ok || syntaxFinding) {
      const where = syntaxFinding ? `line ${syntaxFinding.line}: ${syntaxFinding.message}` : `line ${parsed.problems[0]?.line ?? '?'}: ${parsed.problems[0]?.text ?? ''}`;
      attempt = { ...base, outcome: 'syntax_error', feedback: `not run: the report's code does not parse (${where})` };
    } else if (input.plan.blockers.length) {
      attempt = { ...base, outcome: 'unavailable_here', feedback: `not run: ${input.plan.blockers.map((b) => b.what).join('; ')}` };
    } else {
      const run = await runCandidate(snippet.script, { report: input.report.reading, seed: 0, settings: input.budget }, { executor: deps.executor, workspace: deps.workspace }, signal);
      final = run;
      if (run.run.infra) {
        attempt = { ...base, outcome: 'infra', feedback: `the executor failed: ${run.run.infra.kind}: ${run.run.infra.message}` };
      } else if (run.match.verdict === 'reproduced') {
        attempt = { ...base, outcome: 'reproduced', feedback: [...edits, `reproduced: ${run.match.reasons.join('; ')}`].join('\n') };
      } else if (run.match.patternOnly) {
        attempt = { ...base, outcome: 'pattern_reproduced', feedback: [...edits, run.match.reasons.join('; ')].join('\n') };
      } else {
        attempt = { ...base, outcome: 'run_mismatch', feedback: [...edits, mismatchFeedback(input.report.reading, run)].join('\n') };
      }
    }
    attempt.durationMs = now() - started;
    attempts.push(attempt);
    deps.log.info({ attempt: 1, outcome: attempt.outcome }, 'tier-0 attempt finished');
    await deps.onAttempt?.(attempt);
    if (attempt.outcome === 'reproduced') return { status: 'reproduced', reason: 'the report\'s own code, completed by tier 0, shows the bug', tier: 0, attempts, final, usage: none };
    if (attempt.outcome === 'infra') return { status: 'exit_infra', reason: attempt.feedback, tier: 0, attempts, final, usage: none };
    // The report's own code shows the pattern and only random-state values differ: a model cannot do better.
    if (attempt.outcome === 'pattern_reproduced') return { status: 'not_reproduced', reason: attempt.feedback, tier: 0, attempts, final, usage: none };
  }
  if (!deps.llm || !deps.prompts) {
    return { status: snippet ? 'not_reproduced' : 'skipped', reason: snippet ? 'tier 0 did not reproduce the bug and there is no model for tier 1' : 'no code to run and no model to write any', tier: snippet ? 0 : null, attempts, final, usage: none };
  }
  const tier1 = await runTier1(
    {
      report: input.report,
      plan: input.plan,
      bundles: input.bundles,
      snippet: snippet?.script ?? '',
      environment: input.environment,
      budget: input.budget,
      firstAttempt: attempts.length,
      usageSoFar: input.usageSoFar,
      missingModules: input.plan.missingModules,
    },
    { executor: deps.executor, workspace: deps.workspace, llm: deps.llm, checker: deps.checker, prompts: deps.prompts, log: deps.log, now: deps.now, onAttempt: deps.onAttempt, checkImports: deps.checkImports },
    signal,
  );
  return { status: tier1.status, reason: tier1.reason, tier: 1, attempts: [...attempts, ...tier1.attempts], final: tier1.final ?? final, usage: tier1.usage };
}
