// Stage 5b's call (src/pipeline/run-repro.ts): the candidate fix of issue 41 with the run's budget left, its prompt, and
// the scratch copies; and its record in the evidence and the outcome.
import type { LlmClient, LlmUsage } from '../llm/types.js';
import { loadPrompts } from '../prompts/load-prompts.js';
import type { ReportResult } from '../report/index.js';
import type { ReproEvidence } from './build-evidence.js';
import type { ReproDeps } from './ports.js';
import type { ReproSettings } from './settings.js';
import { createPatchedCopies, runCandidateFix, type CandidateFixRecord } from './stages/candidate-fix/index.js';
import type { ConfirmResult } from './stages/confirm/index.js';

type FixInput = Parameters<typeof runCandidateFix>[0];

export async function candidateFixStep(
  input: {
    final: FixInput['final'];
    confirm: ConfirmResult | null;
    report: ReportResult;
    bundles: FixInput['bundles'];
    workspace: FixInput['workspace'];
    settings: ReproSettings;
    /** What the run has spent so far: the step gets what the caps leave. */
    spent: LlmUsage;
    started: number;
  },
  deps: ReproDeps & { llm: LlmClient; now: () => number },
  signal?: AbortSignal,
): Promise<CandidateFixRecord> {
  const s = input.settings;
  const prompt = (await loadPrompts(['candidate-fix'] as const))['candidate-fix'];
  return runCandidateFix(
    {
      final: input.final,
      confirmedSeeds: (input.confirm?.runs ?? []).filter((r) => r.verdict === 'reproduced').map((r) => r.seed),
      report: input.report,
      bundles: input.bundles,
      workspace: input.workspace,
      settings: { runTimeoutMs: s.runTimeoutMs, runMemoryMb: s.runMemoryMb },
      codeChars: s.candidateCodeChars,
      budget: {
        tokens: s.maxTokens - input.spent.inputTokens - input.spent.outputTokens,
        costUsd: s.maxCostUsd - input.spent.costUsd,
        deadline: input.started + s.wallClockMs,
      },
    },
    {
      llm: deps.llm,
      executor: deps.executor,
      prompt,
      copies: deps.patchedCopies ?? createPatchedCopies(),
      log: deps.log,
      progress: (m) => deps.progress('confirm', m),
      now: deps.now,
    },
    signal,
  );
}

/** The evidence with the candidate fix's record, and its one-line answer in the outcome for the comment. */
export function withCandidateFix(evidence: ReproEvidence, candidate: CandidateFixRecord | null): ReproEvidence {
  if (!candidate) return evidence;
  const { answer, result, summary, diff } = candidate;
  return { ...evidence, candidateFix: candidate, outcome: { ...evidence.outcome, candidateFix: { answer, result, summary, diff } } };
}
