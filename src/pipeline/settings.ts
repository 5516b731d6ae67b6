import { z } from 'zod';
import { SetupError } from '../errors.js';

/** Settings of one reproduction run. Our own config: strict. */
export const ReproSettings = z
  .object({
    /** Tier-1 attempts on one context bundle before moving to the next (the paper's policy). @defaultValue 5 */
    attemptsPerBundle: z.int().positive().default(5),
    /** Context bundles tried at most. @defaultValue 3 */
    maxBundles: z.int().positive().default(3),
    /** Tier-1 attempts in all, whatever the bundles. @defaultValue 15 */
    maxAttempts: z.int().positive().default(15),
    /** Tokens (input + output) the run may spend. @defaultValue 400000 */
    maxTokens: z.int().positive().default(400_000),
    /** Dollars the run may spend on the model. @defaultValue 5 */
    maxCostUsd: z.number().positive().default(5),
    /** Wall clock of the whole run, all stages. @defaultValue 1800000 (30 min) */
    wallClockMs: z.int().positive().default(1_800_000),
    /** Time limit of one script run. @defaultValue 120000 */
    runTimeoutMs: z.int().positive().default(120_000),
    /** Memory limit of one script run. @defaultValue 4096 */
    runMemoryMb: z.int().positive().default(4096),
    /** Seeded re-runs of the final script. @defaultValue 3 */
    confirmRuns: z.int().min(0).max(20).default(3),
    /** Python used for the static check (pyflakes, pylint -E). @defaultValue '/usr/bin/python3' */
    staticPython: z.string().min(1).default('/usr/bin/python3'),
    /** Run `pylint -E` in the static check when installed (about 1.5 s a script). @defaultValue true */
    pylint: z.boolean().default(true),
    /** Characters of an issue read; the rest is cut and the cut said. @defaultValue 200000 */
    maxIssueChars: z.int().positive().default(200_000),
    /** Characters of an issue sent to the model. @defaultValue 30000 */
    maxLlmIssueChars: z.int().positive().default(30_000),
    /** Context: chunks per bundle and tokens per bundle. @defaultValue 8 and 6000 */
    contextTop: z.int().positive().default(8),
    contextTokenBudget: z.int().positive().default(6000),
  })
  .strict();
export type ReproSettings = z.infer<typeof ReproSettings>;
export type ReproSettingsInput = z.input<typeof ReproSettings>;

const bool = z.enum(['1', '0', 'true', 'false', 'yes', 'no']).transform((v) => ['1', 'true', 'yes'].includes(v));

/** Environment variables read by {@link reproSettingsFromEnv}. Outside data: extra variables are ignored. */
const ReproEnv = z.object({
  REPGEN_ATTEMPTS_PER_BUNDLE: z.coerce.number().int().positive().optional(),
  REPGEN_MAX_BUNDLES: z.coerce.number().int().positive().optional(),
  REPGEN_MAX_ATTEMPTS: z.coerce.number().int().positive().optional(),
  REPGEN_MAX_TOKENS: z.coerce.number().int().positive().optional(),
  REPGEN_MAX_COST_USD: z.coerce.number().positive().optional(),
  REPGEN_WALL_CLOCK_MS: z.coerce.number().int().positive().optional(),
  REPGEN_RUN_TIMEOUT_MS: z.coerce.number().int().positive().optional(),
  REPGEN_RUN_MEMORY_MB: z.coerce.number().int().positive().optional(),
  REPGEN_CONFIRM_RUNS: z.coerce.number().int().min(0).max(20).optional(),
  REPGEN_STATIC_PYTHON: z.string().min(1).optional(),
  REPGEN_PYLINT: bool.optional(),
  REPGEN_MAX_ISSUE_CHARS: z.coerce.number().int().positive().optional(),
  REPGEN_MAX_LLM_ISSUE_CHARS: z.coerce.number().int().positive().optional(),
  REPGEN_CONTEXT_TOP: z.coerce.number().int().positive().optional(),
  REPGEN_CONTEXT_TOKENS: z.coerce.number().int().positive().optional(),
});

/** Reads ReproSettings from the environment; `overrides` (CLI flags) win. Throws SetupError naming a bad variable. */
export function reproSettingsFromEnv(env: NodeJS.ProcessEnv = process.env, overrides: ReproSettingsInput = {}): ReproSettings {
  const cleaned = Object.fromEntries(Object.entries(env).filter(([k, v]) => k.startsWith('REPGEN_') && v !== undefined && v !== ''));
  const parsed = ReproEnv.safeParse(cleaned);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new SetupError(`invalid ${String(issue?.path[0] ?? 'setting')}: ${issue?.message ?? 'invalid value'}`);
  }
  const e = parsed.data;
  return ReproSettings.parse({
    attemptsPerBundle: e.REPGEN_ATTEMPTS_PER_BUNDLE,
    maxBundles: e.REPGEN_MAX_BUNDLES,
    maxAttempts: e.REPGEN_MAX_ATTEMPTS,
    maxTokens: e.REPGEN_MAX_TOKENS,
    maxCostUsd: e.REPGEN_MAX_COST_USD,
    wallClockMs: e.REPGEN_WALL_CLOCK_MS,
    runTimeoutMs: e.REPGEN_RUN_TIMEOUT_MS,
    runMemoryMb: e.REPGEN_RUN_MEMORY_MB,
    confirmRuns: e.REPGEN_CONFIRM_RUNS,
    staticPython: e.REPGEN_STATIC_PYTHON,
    pylint: e.REPGEN_PYLINT,
    maxIssueChars: e.REPGEN_MAX_ISSUE_CHARS,
    maxLlmIssueChars: e.REPGEN_MAX_LLM_ISSUE_CHARS,
    contextTop: e.REPGEN_CONTEXT_TOP,
    contextTokenBudget: e.REPGEN_CONTEXT_TOKENS,
    ...Object.fromEntries(Object.entries(overrides).filter(([, v]) => v !== undefined)),
  });
}
