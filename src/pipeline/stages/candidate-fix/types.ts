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

/**
 * The loop sent back once after an oracle_suspect candidate (issue 41 item 2), and what came of it:
 *   fix_sensitive   a new reproduction, confirmed, that the same patch turns green: it replaces the suspect one
 *   still_fails     a new reproduction, confirmed, that still fails with the patch: the suspect one stays
 *   no_evidence     a new reproduction, confirmed, against which the patch gave no evidence: the suspect one stays
 *   not_confirmed   a new script showed the bug once but the confirmation runs did not hold it
 *   not_reproduced  no new script showed the bug (the round's own end: mismatch, budget, infrastructure)
 *   not_made        nothing was left to make it with (the attempt cap, the model's budget, the time)
 */
export const OracleReattempt = z.object({
  /** The candidate whose finding sent the loop back. */
  candidate: z.int().min(1),
  status: z.enum(['fix_sensitive', 'still_fails', 'no_evidence', 'not_confirmed', 'not_reproduced', 'not_made']),
  /** One sentence: why this status. */
  reason: z.string(),
  /** The suspect reproduction: its attempt's number (0 when unknown) and script. */
  suspectAttempt: z.int().min(0),
  suspectScript: z.string(),
  /** The message the loop got, as sent (empty when the round was not made). */
  feedback: z.string(),
  /** The numbers of the round's attempts (they continue the run's). */
  attempts: z.array(z.int()),
  /** The round's reproduction, when one showed the bug. */
  script: z.string().nullable(),
  confirmation: z.object({ reproducedRuns: z.int(), totalRuns: z.int() }).nullable(),
  /** The same patch against the new reproduction (no new model call). */
  rerun: CandidateAttempt.nullable(),
  /** The new reproduction replaced the suspect one in the outcome (confirmed, and the patch turns it green). */
  adopted: z.boolean(),
  /** What the round's model calls used (counted in the step's usage). */
  usage: z.object({ inputTokens: z.int(), outputTokens: z.int(), costUsd: z.number() }),
});
export type OracleReattempt = z.infer<typeof OracleReattempt>;

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
  /** The loop's second round after an oracle_suspect candidate; absent when none was suspect. */
  reattempt: OracleReattempt.optional(),
});
export type CandidateFixRecord = z.infer<typeof CandidateFixRecord>;
