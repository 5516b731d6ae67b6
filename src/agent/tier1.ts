import type { ContextBundle } from '../context/types.js';
import { CancelledError } from '../errors.js';
import { classifyLlmError, extractCodeBlock } from '../llm/index.js';
import type { LlmClient, LlmMessage, LlmUsage } from '../llm/types.js';
import { addUsage } from '../llm/usage.js';
import type { Logger } from '../log.js';
import type { AgentStatus, AttemptOutcome, AttemptRecord } from './types.js';
import type { ReproPlan } from '../plan/types.js';
import { renderPrompt, type Prompt } from '../prompts/load-prompts.js';
import type { ReportResult } from '../report/types.js';
import { networkNeeds, importedModules } from '../plan/index.js';
import { parsePython } from '../context/python-syntax.js';
import { checkRelevance } from './relevance.js';
import { screenFramework } from './check-framework.js';
import { oracleHint, oracleSection } from '../symptoms/index.js';
import { ATTEMPT_SEED, mismatchFeedback, outputTail, runCandidate, type CandidateRun, type RunCandidateDeps } from './run-candidate.js';
import type { StaticChecker } from './static-checker.js';

export interface AgentPrompts {
  system: Prompt;
  generate: Prompt;
  refine: Prompt;
  formatError: Prompt;
}

export interface Budget {
  maxAttempts: number;
  attemptsPerBundle: number;
  maxBundles: number;
  maxTokens: number;
  maxCostUsd: number;
  /** Epoch ms after which no new attempt starts. */
  deadline: number;
  runTimeoutMs: number;
  runMemoryMb: number;
}

export interface Tier1Input {
  report: ReportResult;
  plan: ReproPlan;
  bundles: ContextBundle[];
  /** The report's code as tier 0 completed it (or the joined blocks), shown to the model. */
  snippet: string;
  environment: Record<string, string>;
  budget: Budget;
  /** Attempt numbers continue after tier 0's. */
  firstAttempt: number;
  /** Usage spent before tier 1 (report restructuring): counts against the budget. */
  usageSoFar: LlmUsage;
  /** Modules the interpreter lacks: a script importing one is rejected before it runs. */
  missingModules: string[];
  /** The project's own top-level packages: with the report's frameworks, what a script must call into. @defaultValue [] */
  projectPackages?: string[];
  /** Installable packages the report's code imports (`cv2`, `pandas`): lacking one it calls ends tier 1 as the env's. @defaultValue [] */
  reportPackages?: string[];
  /** A round sent back by a finding on an earlier reproduction (its script, the message naming the finding): no refine yet, this. */
  resume?: { answer: string; message: string };
}

export interface Tier1Deps extends RunCandidateDeps {
  llm: LlmClient;
  checker: StaticChecker;
  prompts: AgentPrompts;
  log: Logger;
  now?: () => number;
  onAttempt?: (a: AttemptRecord) => void | Promise<void>;
  /** What tier 1 starts doing now, for progress lines and heartbeats. */
  onActivity?: (what: string) => void | Promise<void>;
  /**
   * Which of these modules the run's interpreter cannot import (probed through the executor, cached).
   * @defaultValue only `input.missingModules` counts as missing
   */
  checkImports?: (modules: string[], signal?: AbortSignal) => Promise<string[]>;
}

/** The agent's status (src/agent/types.ts) less `skipped`: tier 1 ends with one of these once it runs. */
export type Tier1Status = Exclude<AgentStatus, 'skipped'>;

export interface Tier1Result {
  status: Tier1Status;
  reason: string;
  attempts: AttemptRecord[];
  /** The reproducing run, or the last run that executed. */
  final: CandidateRun | null;
  usage: LlmUsage;
}

function renderContext(bundle: ContextBundle | null): string {
  if (!bundle || !bundle.chunks.length) return '(no repository context: write the script from the report alone)';
  return bundle.chunks
    .map(
      (c) =>
        `# ${c.path}:${c.startLine}-${c.endLine}${c.symbol ? ` (${c.symbol})` : ''} — ${c.reasons.slice(0, 2).join(', ')}\n\`\`\`python\n${c.text}\n\`\`\``,
    )
    .join('\n\n');
}

function renderReport(r: ReportResult): string {
  const b = r.bug;
  const expected = r.reading.expected
    .map((s) => `- ${s.kind}: ${s.exception ? `${s.exception.type}: ${s.exception.message.split('\n')[0]}` : s.evidence.slice(0, 300)}`)
    .join('\n');
  return [
    `Title: ${b.title}`,
    `Core problem: ${b.coreProblem}`,
    `Observed: ${b.observed}`,
    `Expected behaviour: ${b.expected}`,
    b.steps.length ? `Steps:\n${b.steps.map((s, i) => `${i + 1}. ${s}`).join('\n')}` : '',
    `Environment: framework ${b.environment.framework ?? 'not stated'}; versions ` +
      `${b.environment.versions.map((v) => `${v.name}==${v.version}`).join(', ') || 'not stated'}; ` +
      `hardware ${b.environment.hardware}; data ${b.environment.data}`,
    expected ? `Symptoms the run must show (checked by code):\n${expected}` : '',
  ]
    .filter(Boolean)
    .join('\n');
}

function renderPlan(p: ReproPlan): string {
  const steps = p.steps.map((s) => `- ${s.kind}: ${s.description}`).join('\n');
  const blockers = p.blockers.length
    ? `\nNot available here: ${p.blockers.map((b) => b.what).join('; ')}. Work around it with synthetic data or by leaving that part out.`
    : '';
  return `${steps}${blockers}`;
}

/** What one candidate failed at, for the record and the next prompt. */
interface Verdict {
  outcome: AttemptOutcome;
  stage: string;
  feedback: string;
  run: CandidateRun | null;
  /** The environment lacks what the report is about: tier 1 ends with exit_env, the model is told nothing. */
  envLacks?: string[];
}

/**
 * Tier 1: generate → structural check (tree-sitter) → static check (pyflakes, pylint -E) → relevance
 * check (and no faked bug) → run → symptom match → refine with everything as feedback. At most
 * `attemptsPerBundle` attempts per context bundle, then the next bundle; caps on attempts, tokens,
 * cost and wall clock end the loop with exit_budget. A malformed answer is fed back once, then
 * counted as a failed attempt.
 */
export async function runTier1(input: Tier1Input, deps: Tier1Deps, signal?: AbortSignal): Promise<Tier1Result> {
  const now = deps.now ?? Date.now;
  const { budget, report } = input;
  const attempts: AttemptRecord[] = [];
  let usage: LlmUsage = { inputTokens: 0, outputTokens: 0, costUsd: 0 };
  let final: CandidateRun | null = null;
  let n = input.firstAttempt;
  const bundles: (ContextBundle | null)[] = input.bundles.length ? input.bundles.slice(0, budget.maxBundles) : [null];
  const system = renderPrompt(deps.prompts.system, {});
  const total = (): LlmUsage => addUsage(usage, input.usageSoFar);

  const overBudget = (): string | null => {
    const t = total();
    if (attempts.length >= budget.maxAttempts) return `the cap of ${budget.maxAttempts} tier-1 attempts was reached`;
    if (t.inputTokens + t.outputTokens >= budget.maxTokens)
      return `the token budget (${budget.maxTokens}) is spent (${t.inputTokens + t.outputTokens} used)`;
    if (t.costUsd >= budget.maxCostUsd) return `the cost budget ($${budget.maxCostUsd}) is spent ($${t.costUsd.toFixed(4)} used)`;
    if (now() >= budget.deadline) return 'the wall-clock budget is spent';
    return null;
  };

  const record = async (a: AttemptRecord): Promise<void> => {
    attempts.push(a);
    deps.log.info({ attempt: a.n, outcome: a.outcome, bundle: a.bundle }, 'tier-1 attempt finished');
    await deps.onAttempt?.(a);
  };

  const complete = async (messages: LlmMessage[]): Promise<{ text: string; tokens: number }> => {
    const response = await deps.llm.complete({ system, messages }, signal);
    usage = addUsage(usage, response.usage);
    return { text: response.text, tokens: response.usage.inputTokens + response.usage.outputTokens };
  };

  for (const bundle of bundles) {
    const first = renderPrompt(deps.prompts.generate, {
      report: renderReport(report),
      oracle: oracleSection(report.reading),
      plan: renderPlan(input.plan),
      environment:
        Object.entries(input.environment)
          .map(([k, v]) => `${k}: ${v}`)
          .join('\n') || 'unknown',
      snippet: input.snippet.trim() || '# (the report has no code)',
      context: renderContext(bundle),
    });
    let last: { answer: string; verdict: Verdict } | null = null;
    for (let k = 0; k < budget.attemptsPerBundle; k++) {
      const stop = overBudget();
      if (stop) return { status: 'exit_budget', reason: stop, attempts, final, usage };
      if (signal?.aborted) throw new CancelledError('cancelled');
      n += 1;
      await deps.onActivity?.(
        `tier 1 attempt ${n}${bundle ? ` (bundle ${bundle.rank})` : ''}: asking the model, then checking and running its script`,
      );
      const started = now();
      const before = usage.inputTokens + usage.outputTokens;
      // Keep the first prompt and the latest exchange: enough to refine, without the context growing every attempt.
      const messages: LlmMessage[] = [{ role: 'user', content: first }];
      if (last) {
        messages.push({ role: 'assistant', content: last.answer || '(empty answer)' });
        messages.push({
          role: 'user',
          content: renderPrompt(deps.prompts.refine, {
            attempt: n - 1,
            stage: last.verdict.stage,
            feedback: last.verdict.feedback,
            output: last.verdict.run ? outputTail(last.verdict.run.run, 2500) : '(it did not run)',
          }),
        });
      } else if (input.resume) {
        messages.push({ role: 'assistant', content: input.resume.answer }, { role: 'user', content: input.resume.message });
      }
      let answer: string;
      let script: string | null;
      try {
        answer = (await complete(messages)).text;
        script = extractCodeBlock(answer, 'python');
        if (!script?.trim()) {
          // Malformed (no code, empty answer): fed back once within the attempt.
          const fix = renderPrompt(deps.prompts.formatError, {
            error: answer.trim() ? 'it has no ```python code block' : 'it was empty',
            format: 'the complete script in one ```python block',
          });
          const again = (
            await complete([...messages, { role: 'assistant', content: answer || '(empty answer)' }, { role: 'user', content: fix }])
          ).text;
          script = extractCodeBlock(again, 'python');
          if (script?.trim()) answer = again;
        }
      } catch (err) {
        const kind = classifyLlmError(err);
        if (kind === 'cancelled' || signal?.aborted)
          throw err instanceof CancelledError ? err : new CancelledError('cancelled during a model call');
        const message = err instanceof Error ? err.message : String(err);
        if (kind === 'bad_response') {
          await record({
            n,
            tier: 1,
            bundle: bundle?.rank ?? null,
            outcome: 'llm_malformed',
            feedback: `the model's answer could not be read: ${message}`,
            script: null,
            durationMs: now() - started,
            tokens: usage.inputTokens + usage.outputTokens - before,
          });
          last = null;
          continue;
        }
        if (kind === 'context_too_long') {
          await record({
            n,
            tier: 1,
            bundle: bundle?.rank ?? null,
            outcome: 'llm_error',
            feedback: `the prompt is too long for the model (${message}); next bundle`,
            script: null,
            durationMs: now() - started,
          });
          break;
        }
        await record({
          n,
          tier: 1,
          bundle: bundle?.rank ?? null,
          outcome: 'llm_error',
          feedback: message,
          script: null,
          durationMs: now() - started,
        });
        return { status: 'exit_infra', reason: `the model is unavailable: ${message}`, attempts, final, usage };
      }
      if (!script?.trim()) {
        const verdict: Verdict = {
          outcome: 'llm_malformed',
          stage: 'format',
          feedback: 'The answer had no ```python code block, twice. Reply with the complete script in one ```python block.',
          run: null,
        };
        await record({
          n,
          tier: 1,
          bundle: bundle?.rank ?? null,
          outcome: verdict.outcome,
          feedback: verdict.feedback,
          script: null,
          durationMs: now() - started,
          tokens: usage.inputTokens + usage.outputTokens - before,
        });
        last = { answer, verdict };
        continue;
      }
      if (!script.endsWith('\n')) script += '\n';
      const verdict = await judgeCandidate(script, input, deps, signal);
      if (verdict.run) final = verdict.run;
      await record({
        n,
        tier: 1,
        bundle: bundle?.rank ?? null,
        outcome: verdict.outcome,
        feedback: verdict.feedback,
        script,
        durationMs: now() - started,
        tokens: usage.inputTokens + usage.outputTokens - before,
      });
      if (verdict.outcome === 'reproduced') return { status: 'reproduced', reason: verdict.feedback, attempts, final, usage };
      if (verdict.outcome === 'pattern_reproduced') return { status: 'not_reproduced', reason: verdict.feedback, attempts, final, usage };
      if (verdict.outcome === 'infra') return { status: 'exit_infra', reason: verdict.feedback, attempts, final, usage };
      if (verdict.envLacks) return { status: 'exit_env', reason: verdict.feedback, attempts, final, usage };
      last = { answer, verdict };
    }
  }
  const tried =
    bundles.length > 1 || bundles[0] ? `${bundles.length} context bundle${bundles.length === 1 ? '' : 's'}` : 'the report alone';
  return {
    status: 'not_reproduced',
    reason: `no attempt reproduced the bug (${attempts.length} tier-1 attempts over ${tried})`,
    attempts,
    final,
    usage,
  };
}

/** The feedback stages of one candidate, in order; the first failing one decides. */
async function judgeCandidate(script: string, input: Tier1Input, deps: Tier1Deps, signal?: AbortSignal): Promise<Verdict> {
  const parsed = await parsePython(script);
  if (!parsed.ok) {
    const where = parsed.problems.map((p) => `line ${p.line}, column ${p.column}: ${p.text}`).join('\n');
    return {
      outcome: 'syntax_error',
      stage: 'structural (tree-sitter parse)',
      feedback: `The script does not parse as Python:\n${where || 'syntax error'}`,
      run: null,
    };
  }
  const lint = await deps.checker.check(script, signal);
  const errors = lint.findings.filter((f) => f.severity === 'error');
  if (errors.length) {
    return {
      outcome: 'static_error',
      stage: `static (${lint.tools.join(', ')})`,
      feedback: `Static errors:\n${errors
        .slice(0, 15)
        .map((f) => `line ${f.line}: ${f.message} [${f.tool}]`)
        .join('\n')}`,
      run: null,
    };
  }
  const imported = importedModules(script);
  const missing = deps.checkImports ? await deps.checkImports(imported, signal) : imported.filter((m) => input.missingModules.includes(m));
  // A script in another framework is never a reproduction (`import torch as K`); lacking the report's own is the env's.
  const screened = await screenFramework(script, input.report, input.projectPackages, missing, input.reportPackages);
  if (screened) return { ...screened, run: null };
  const network = networkNeeds(script);
  if (missing.length || network.length) {
    const why = [
      ...missing.map((m) => `package \`${m}\` is not installed here`),
      ...network.map((w) => `${w} needs the network, which runs here do not have`),
    ];
    return {
      outcome: 'unavailable_here',
      stage: 'environment',
      feedback: `${why.join('; ')}. Use synthetic data and installed packages only.`,
      run: null,
    };
  }
  const relevance = checkRelevance(script, input.report.reading, input.report.facts);
  if (!relevance.ok) {
    const feedback =
      relevance.outcome === 'faked_bug'
        ? `Rejected as a faked bug: ${relevance.reasons.join('; ')}. Let the library raise or print it.`
        : `Not relevant to the report: ${relevance.reasons.join('; ')}.`;
    return { outcome: relevance.outcome, stage: 'relevance', feedback, run: null };
  }
  const run = await runCandidate(script, { report: input.report.reading, seed: ATTEMPT_SEED, settings: input.budget }, deps, signal);
  if (run.run.infra)
    return { outcome: 'infra', stage: 'run', feedback: `the executor failed: ${run.run.infra.kind}: ${run.run.infra.message}`, run };
  if (run.match.verdict === 'reproduced')
    return { outcome: 'reproduced', stage: 'match', feedback: `reproduced: ${run.match.reasons.join('; ')}`, run };
  // Only values of the reporter's random state differ: no attempt can reach them (docs/verdicts.md), so stop.
  if (run.match.patternOnly) return { outcome: 'pattern_reproduced', stage: 'match', feedback: run.match.reasons.join('; '), run };
  // A behavioural bug whose script asserted none of the report's expectations: say what to assert, in the report's words.
  const hint = run.match.oracle ? null : oracleHint(input.report.reading);
  const feedback = [mismatchFeedback(input.report.reading, run), ...(hint ? [hint] : [])].join('\n');
  return { outcome: 'run_mismatch', stage: 'symptom match', feedback, run };
}
