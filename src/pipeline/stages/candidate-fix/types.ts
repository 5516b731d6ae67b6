import { z } from 'zod';

/**
 * A candidate fix's record in evidence.json (issue 41). What one candidate showed against the reproduction:
 *   fix_sensitive   the reproduction passes with the patch in every run, and failed without it (the confirmation)
 *   oracle_suspect  it still shows the bug with a patch that makes the report's expectation true: the independent
 *                   expectation check fails without the patch and passes with it
 *   still_fails     it still shows the bug, and nothing says the patch made the report's expectation true
 *   no_evidence     the patch was refused, did not apply, broke the import, or the run failed another way: counted
 *                   neither for nor against the reproduction
 */
export const CandidateResult = z.enum(['fix_sensitive', 'oracle_suspect', 'still_fails', 'no_evidence']);
export type CandidateResult = z.infer<typeof CandidateResult>;

/** Why a candidate gave no evidence. */
export const NoEvidenceKind = z.enum(['bad_answer', 'refused', 'does_not_apply', 'breaks_import', 'fails_otherwise', 'infra']);
export type NoEvidenceKind = z.infer<typeof NoEvidenceKind>;

/** One run of the reproduction (or the expectation check) against the patched copy. */
export const CandidateRunRecord = z.object({
  seed: z.number().int(),
  /** passed (exit 0), reproduces (the report's bug), fails_otherwise, infra: as a fix check reads a run. */
  outcome: z.enum(['passed', 'reproduces', 'fails_otherwise', 'infra']),
  exitCode: z.number().int().nullable(),
  /** The end of its output. */
  outputExcerpt: z.string(),
});
export type CandidateRunRecord = z.infer<typeof CandidateRunRecord>;

/** The independent run of the report's expectation (the model's check script), without and with the patch. */
export const ExpectationCheck = z.object({
  script: z.string(),
  /** Exit 0 without the patch: the check does not see the bug, so it cannot vouch for the patch. */
  unpatched: z.enum(['passed', 'failed', 'infra']),
  patched: z.enum(['passed', 'failed', 'infra']).nullable(),
  unpatchedExcerpt: z.string(),
  patchedExcerpt: z.string(),
});
export type ExpectationCheck = z.infer<typeof ExpectationCheck>;

export const CandidateAttempt = z.object({
  n: z.int().min(1),
  result: CandidateResult,
  /** For no_evidence: what stopped it. */
  noEvidence: NoEvidenceKind.nullable(),
  /** One sentence: why this result. */
  reason: z.string(),
  /** The diff as the model wrote it (bounded by the diff limits; '' when it gave none). */
  diff: z.string(),
  /** The files it changes, as the diff names them. */
  files: z.array(z.string()),
  runs: z.array(CandidateRunRecord),
  check: ExpectationCheck.nullable(),
  /** What the import of the patched modules said, when it failed. */
  importFailure: z.string().nullable(),
});
export type CandidateAttempt = z.infer<typeof CandidateAttempt>;

/** How the candidate compares with the real fix, when one is known (`--verify-fix`, a bench case's fix commit). */
export const RealFixComparison = z.object({
  ref: z.string(),
  /** Python files the real fix changes (the buggy checkout against the fixed one). */
  fixFiles: z.array(z.string()),
  candidateFiles: z.array(z.string()),
  sameFiles: z.array(z.string()),
  /** `file:function` the real fix changes (the enclosing def/class of each changed line at the buggy ref). */
  fixFunctions: z.array(z.string()),
  candidateFunctions: z.array(z.string()),
  sameFunctions: z.array(z.string()),
  /** The reproduction at the real fix: fixed, still_reproduces, inconclusive (the fix check's verdict). */
  fixVerdict: z.string().nullable(),
  /** The reproduction with the candidate: its result. */
  candidateResult: CandidateResult,
  /** Why the comparison is missing parts (a tree that could not be read). */
  note: z.string().optional(),
});
export type RealFixComparison = z.infer<typeof RealFixComparison>;

/** The step's record: not tried (and why), or its attempts and the result they add up to. */
export const CandidateFixRecord = z.object({
  /** 'yes' fix-sensitive; 'no' a candidate ran and the reproduction still fails; 'no_evidence'; 'not_tried'. */
  answer: z.enum(['yes', 'no', 'no_evidence', 'not_tried']),
  /** The best attempt's result; null when not tried. */
  result: CandidateResult.nullable(),
  /** One sentence for the comment and the CLI. */
  summary: z.string(),
  attempts: z.array(CandidateAttempt),
  /** The diff the comment shows: the fix-sensitive one, else the last that ran; null when none ran. */
  diff: z.string().nullable(),
  usage: z.object({ inputTokens: z.int(), outputTokens: z.int(), costUsd: z.number() }),
  durationMs: z.number().min(0),
  comparison: RealFixComparison.optional(),
});
export type CandidateFixRecord = z.infer<typeof CandidateFixRecord>;
