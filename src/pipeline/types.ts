import { z } from 'zod';
import { AttemptRecord } from '../agent/types.js';
import { BisectResult } from '../bisect/types.js';
import { EnvBuildFailure, EnvCandidate, Substitution, VersionDecision } from '../env/types.js';
import { MatchResult, MetricSeries, Symptom } from '../symptoms/types.js';
import type { Cap, CapName } from './run-spec.js';
import { CandidateFixRecord } from './stages/candidate-fix/types.js';

/**
 * The contract between the pipeline (stages 0-6) and whoever drives it: the CLI (`repgen reproduce`)
 * and the BullMQ worker run the same `runRepro(input, deps, signal)`.
 */

export const ExitStatus = z.enum(['reproduced', 'not_reproduced', 'needs_info', 'exit_budget', 'exit_infra', 'exit_env']);
export type ExitStatus = z.infer<typeof ExitStatus>;

export const StageName = z.enum(['intake', 'context', 'report', 'plan', 'agent', 'confirm', 'publish']);
export type StageName = z.infer<typeof StageName>;

// Issue and attempt records belong to the layers that make them (report, agent); re-exported for the pipeline's callers.
export { IssueInput } from '../report/types.js';
export { AttemptOutcome, AttemptRecord } from '../agent/types.js';

/**
 * The headline verdict of a run, finer than the exit status (docs/verdicts.md): a flaky reproduction and a
 * reproduced pattern end `not_reproduced`; a report needing its own data, `needs_info`; no model, `not_reproduced`;
 * a project or dependency that fails to import here (environment_failed), `not_reproduced`.
 */
export const Verdict = z.enum([
  'reproduced',
  'flaky',
  'pattern_reproduced',
  'not_reproduced',
  'needs_info',
  'needs_data',
  'no_model',
  'environment_failed',
  'exit_budget',
  'exit_infra',
]);
export type Verdict = z.infer<typeof Verdict>;

/** One seeded confirmation run, as the comment tells it. */
export const ConfirmationRun = z.object({ seed: z.number().int(), verdict: z.string(), reasons: z.array(z.string()) });
export type ConfirmationRun = z.infer<typeof ConfirmationRun>;

/** The env a run used, as evidence.json records it: enough to recreate it (the lock) and to judge it (cached, time). */
export const EnvOutcome = z.object({
  python: z.string().nullable(),
  lockHash: z.string().nullable(),
  pins: z.record(z.string(), z.string()),
  substitutions: z.array(Substitution),
  cached: z.boolean(),
  buildMs: z.number().int().min(0),
  /** The lock as `name==version` lines (the repro PR adds it as requirements-repro.txt). */
  lock: z.string(),
  failure: EnvBuildFailure.nullable(),
  /** Each key package's version and the source that decided it (user, report, project, era, base, wheelhouse). */
  decisions: z.array(VersionDecision).optional(),
  /** The candidates the import ladder built, each with why it was accepted or rejected (issue 39). */
  candidates: z.array(EnvCandidate).optional(),
});
export type EnvOutcome = z.infer<typeof EnvOutcome>;

export const ReproOutcome = z.object({
  status: ExitStatus,
  /** One sentence saying what happened, for the top of the comment and the CLI. */
  summary: z.string(),
  script: z.string().nullable(),
  /** "reproduced k/n runs" from the confirmation stage. */
  confirmation: z.object({ reproducedRuns: z.number().int().min(0), totalRuns: z.number().int().min(0) }).nullable(),
  expected: z.array(Symptom),
  observed: z.array(Symptom),
  match: MatchResult.nullable(),
  /** Observed metric series of the final run (drawn as a chart for silent bugs). */
  metrics: z.array(MetricSeries).default([]),
  /** The final run's output excerpt. */
  outputExcerpt: z.string().default(''),
  environment: z.record(z.string(), z.string()),
  attempts: z.array(AttemptRecord),
  /** For needs_info: exactly what the report lacks. */
  needsInfo: z.array(z.string()).default([]),
  usage: z.object({ inputTokens: z.number().int(), outputTokens: z.number().int(), costUsd: z.number() }),
  durationMs: z.number().min(0),
  /** What this runner cannot give the report (no network for a download, a package not installed). (Added; optional.) */
  blockers: z.array(z.string()).optional(),
  /** Things worth knowing about how the run went (issue cut, context skipped, model fell back). (Added; optional.) */
  notes: z.array(z.string()).optional(),
  /** The headline verdict (verdicts engineer; optional: absent means the status says it all). */
  verdict: Verdict.optional(),
  /** What the reporter expected to happen (report.bug.expected), '' when the report does not say. */
  reporterExpected: z.string().optional(),
  /** The last line of the reporter's pasted output (what they saw), '' when none. */
  reportedOutput: z.string().optional(),
  /** Versions the report names (torch 2.4.0…), to compare with the run's environment. */
  reportVersions: z.array(z.object({ name: z.string(), version: z.string() })).optional(),
  /** Each seeded confirmation run: what it showed. */
  confirmationRuns: z.array(ConfirmationRun).optional(),
  /** Whether `script` actually ran (a needs-info or not-run script is never shown as "the reproduction"). */
  scriptRan: z.boolean().optional(),
  /** The regression bisected from a working ref to the issue's (`--bisect`, `/repgen bisect`, a version the report says worked). */
  bisect: BisectResult.optional(),
  /** The project's environment (issue 27): what was built or reused for every run, or why it could not be. */
  env: EnvOutcome.optional(),
  /** The fix check's verdict when one ran (`--verify-fix`, a PR): the comment says it. Its runs are in evidence.fixCheck. */
  fixCheck: z
    .object({
      ref: z.string(),
      sha: z.string().nullable(),
      verdict: z.enum(['fixed', 'still_reproduces', 'inconclusive']),
      reason: z.string(),
    })
    .optional(),
  /**
   * The candidate fix's answer (issue 41): does a generated change make the reproduction pass? Its attempts and runs
   * are in evidence.candidateFix; the diff is shown folded in the comment, generated and not reviewed.
   */
  candidateFix: CandidateFixRecord.pick({ answer: true, result: true, summary: true, diff: true })
    .extend({
      /** One sentence for the comment when a suspect oracle sent the loop back (evidence.candidateFix.reattempt has it all). */
      reattempt: z.string().optional(),
      /** Runs of the reproduction with the fix-sensitive change, each of which passed (the regression-test PR says it). */
      runs: z.int().min(0).optional(),
    })
    .optional(),
});
export type ReproOutcome = z.infer<typeof ReproOutcome>;

/** Progress sink: one call per stage start/finish. The CLI prints a line; the App edits its comment. */
export type ProgressFn = (stage: StageName, message: string) => void | Promise<void>;

/** What the run settled on, as the result states it: every cap with who set it, and why a setting moved. */
export interface SpecSummary {
  caps: Record<CapName, Cap>;
  executor: string;
  llm: string;
  notes: string[];
}
