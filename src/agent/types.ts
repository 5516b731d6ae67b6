import { z } from 'zod';

/**
 * The agent's statuses: what ended one attempt, and what ended the agent's run. The pipeline maps the
 * second onto its own `ExitStatus`; the comment names the first (`ATTEMPT_NAMES` in src/publish/).
 */

/** What ended one attempt, in the order of the feedback stages that can end it. */
export const AttemptOutcome = z.enum([
  /** Tier 0: the report's code uses names it never defines, so it was not run. */
  'incomplete_code',
  'syntax_error',
  'static_error',
  /** It needs a package or the network that this runner lacks, so it was not run. */
  'unavailable_here',
  'irrelevant',
  'faked_bug',
  'llm_error',
  /** The model's answer had no readable script. */
  'llm_malformed',
  /** The executor failed (scheduling, sandbox); says nothing about the script. */
  'infra',
  /** It ran and did not show the report's bug. */
  'run_mismatch',
  /** It ran and showed the report's pattern, but not values that depend on the reporter's random state. */
  'pattern_reproduced',
  'reproduced',
]);
export type AttemptOutcome = z.infer<typeof AttemptOutcome>;

export const AttemptRecord = z.object({
  n: z.number().int().min(1),
  tier: z.union([z.literal(0), z.literal(1)]),
  /** Context bundle rank used, null when none. */
  bundle: z.number().int().nullable(),
  outcome: AttemptOutcome,
  /** The feedback given to the next attempt (or why this one passed). */
  feedback: z.string(),
  script: z.string().nullable(),
  /** Tier 0: the recorded edits made to the report's code. (Added by the agent; optional.) */
  edits: z.array(z.string()).optional(),
  /** Wall clock of the attempt, model call and run included. (Added by the agent; optional.) */
  durationMs: z.number().min(0).optional(),
  /** Tokens the attempt's model calls used. (Added by the agent; optional.) */
  tokens: z.number().int().min(0).optional(),
});
export type AttemptRecord = z.infer<typeof AttemptRecord>;

/**
 * What ended the agent's run; `skipped` when there was nothing to run (no code, no model); `exit_env` when the
 * environment lacks the framework or project the report is about, so no script here could be a reproduction.
 */
export const AgentStatus = z.enum(['reproduced', 'not_reproduced', 'exit_budget', 'exit_infra', 'exit_env', 'skipped']);
export type AgentStatus = z.infer<typeof AgentStatus>;
