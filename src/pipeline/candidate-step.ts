// Stage 5b's call (src/pipeline/run-repro.ts): the candidate fix of issue 41 with the run's budget left, its prompt, and
// the scratch copies; when a candidate finds the reproduction's oracle suspect, the loop's second round
// (oracle-reattempt.ts); and its record in the evidence and the outcome.
import type { AgentResult, CandidateRun } from '../agent/index.js';
import { CancelledError } from '../errors.js';
import type { LlmClient, LlmUsage } from '../llm/types.js';
import { addUsage } from '../llm/usage.js';
import { loadPrompts } from '../prompts/load-prompts.js';
import type { ReportResult } from '../report/index.js';
import type { ReproEvidence } from './build-evidence.js';
import { reattemptOnSuspectOracle, reattemptSentence, type ReattemptPorts } from './oracle-reattempt.js';
import type { ReproDeps } from './ports.js';
import type { ReproSettings } from './settings.js';
import {
  createPatchedCopies,
  runCandidateFix,
  tryCandidate,
  type CandidateFixDeps,
  type CandidateFixInput,
  type CandidateFixRecord,
} from './stages/candidate-fix/index.js';
import type { CandidateAttempt } from './stages/candidate-fix/types.js';
import type { ConfirmResult } from './stages/confirm/index.js';

type FixInput = Parameters<typeof runCandidateFix>[0];

interface StepInput {
  final: FixInput['final'];
  confirm: ConfirmResult | null;
  report: ReportResult;
  bundles: FixInput['bundles'];
  workspace: FixInput['workspace'];
  settings: ReproSettings;
  /** What the run has spent so far: the step gets what the caps leave. */
  spent: LlmUsage;
  started: number;
}

/**
 * The loop's second round, sent when a candidate finds the oracle suspect (without it the finding is only recorded):
 * the first round's result, input and deps, stage 5's runs (made only when the run makes any) and the outcome's test.
 */
interface Reattempt extends Pick<ReattemptPorts, 'agentInput' | 'agentDeps' | 'confirmed'> {
  agent: AgentResult;
  confirm: (final: CandidateRun) => Promise<ConfirmResult>;
}

type StepDeps = ReproDeps & { llm: LlmClient; now: () => number };

/** The step's input for one reproduction (its final run and confirmed seeds), with what the caps leave after `spent`. */
function fixInput(input: StepInput, final: CandidateRun, confirm: ConfirmResult | null, spent: LlmUsage): CandidateFixInput {
  const s = input.settings;
  return {
    final,
    confirmedSeeds: (confirm?.runs ?? []).filter((r) => r.verdict === 'reproduced').map((r) => r.seed),
    report: input.report,
    bundles: input.bundles,
    workspace: input.workspace,
    settings: { runTimeoutMs: s.runTimeoutMs, runMemoryMb: s.runMemoryMb },
    codeChars: s.candidateCodeChars,
    budget: {
      tokens: s.maxTokens - spent.inputTokens - spent.outputTokens,
      costUsd: s.maxCostUsd - spent.costUsd,
      deadline: input.started + s.wallClockMs,
    },
  };
}

/** A model's answer as the step reads it, rebuilt from a candidate's diff and check (neither can hold a fence). Pure. */
function answerOf(c: CandidateAttempt): string {
  return `\`\`\`diff\n${c.diff}\`\`\`\n${c.check ? `\n\`\`\`python\n${c.check.script}\`\`\`\n` : ''}`;
}

export async function candidateFixStep(
  input: StepInput,
  deps: StepDeps,
  reattempt: Reattempt | null,
  signal?: AbortSignal,
): Promise<{ record: CandidateFixRecord; adopted: { agent: AgentResult; confirm: ConfirmResult | null } | null }> {
  const prompts = await loadPrompts(['candidate-fix', 'oracle-reattempt'] as const);
  const progress = (m: string) => deps.progress('confirm', m);
  const fixDeps: CandidateFixDeps = {
    llm: deps.llm,
    executor: deps.executor,
    prompt: prompts['candidate-fix'],
    copies: deps.patchedCopies ?? createPatchedCopies(),
    log: deps.log,
    progress,
    now: deps.now,
  };
  const record = await runCandidateFix(fixInput(input, input.final, input.confirm, input.spent), fixDeps, signal);
  if (!reattempt) return { record, adopted: null };
  const { agent, confirm: confirmRuns, ...ports } = reattempt;
  const confirm = (final: CandidateRun) => (input.settings.confirmRuns > 0 ? confirmRuns(final) : Promise.resolve(null));
  const spent = addUsage(input.spent, record.usage);
  // The same patch and check, no model call; the check's run without the patch is the checkout's, so it is reused.
  const rerun = async (c: CandidateAttempt, n: number, final: CandidateRun, confirm: ConfirmResult | null): Promise<CandidateAttempt> => {
    const known = new Map(c.check ? [[c.check.script, { outcome: c.check.unpatched, excerpt: c.check.unpatchedExcerpt }]] : []);
    return tryCandidate(n, answerOf(c), fixInput(input, final, confirm, spent), fixDeps, known, signal).catch((err: unknown) => {
      if (signal?.aborted || err instanceof CancelledError) throw err;
      const message = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
      return {
        ...c,
        n,
        result: 'no_evidence',
        noEvidence: 'infra',
        reason: `the candidate could not be tried: ${message.slice(0, 300)}`,
        runs: [],
        check: null,
      };
    });
  };
  const findingPrompt = prompts['oracle-reattempt'];
  return reattemptOnSuspectOracle(record, agent, spent, { ...ports, confirm, findingPrompt, rerun, progress, now: deps.now }, signal);
}

/** The evidence with the candidate fix's record, and its one-line answer in the outcome for the comment. */
export function withCandidateFix(evidence: ReproEvidence, candidate: CandidateFixRecord | null): ReproEvidence {
  if (!candidate) return evidence;
  const { answer, result, summary, diff } = candidate;
  const reattempt = candidate.reattempt ? { reattempt: reattemptSentence(candidate.reattempt) } : {};
  // The fix-sensitive attempt whose diff the answer shows (the latest: an adopted re-run comes last).
  const sensitive = answer === 'yes' ? candidate.attempts.findLast((a) => a.result === 'fix_sensitive' && a.diff === diff) : undefined;
  const runs = sensitive ? { runs: sensitive.runs.length } : {};
  return {
    ...evidence,
    candidateFix: candidate,
    outcome: { ...evidence.outcome, candidateFix: { answer, result, summary, diff, ...reattempt, ...runs } },
  };
}
