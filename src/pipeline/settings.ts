import { z } from 'zod';
import { PIPELINE_DEFAULTS as D, PipelineEnv } from '../config/env/pipeline-env.js';

/** Settings of one reproduction run. Our own config: strict. Defaults: src/config/env/pipeline-env.ts, the one set. */
export const ReproSettings = z
  .object({
    /** Tier-1 attempts on one context bundle before moving to the next (the paper's policy). @defaultValue 5 */
    attemptsPerBundle: z.int().positive().default(D.attemptsPerBundle),
    /** Context bundles tried at most. @defaultValue 3 */
    maxBundles: z.int().positive().default(D.maxBundles),
    /** Tier-1 attempts in all, whatever the bundles. @defaultValue 15 */
    maxAttempts: z.int().positive().default(D.maxAttempts),
    /** Tokens (input + output) the run may spend. @defaultValue 400000 */
    maxTokens: z.int().positive().default(D.maxTokens),
    /** Dollars the run may spend on the model. @defaultValue 5 */
    maxCostUsd: z.number().positive().default(D.maxCostUsd),
    /** Wall clock of the whole run, all stages. @defaultValue 1800000 (30 min) */
    wallClockMs: z.int().positive().default(D.wallClockMs),
    /** Time limit of one script run. @defaultValue 120000 */
    runTimeoutMs: z.int().positive().default(D.runTimeoutMs),
    /** Memory limit of one script run. @defaultValue 4096 */
    runMemoryMb: z.int().positive().default(D.runMemoryMb),
    /** Seeded re-runs of the final script. @defaultValue 3 */
    confirmRuns: z.int().min(0).max(20).default(D.confirmRuns),
    /** Runs of a bisection at most, GOOD included; 0 never bisects. @defaultValue 20 */
    bisectMaxSteps: z.int().min(0).max(100).default(D.bisectMaxSteps),
    /** Wall-clock minutes of a bisection at most. @defaultValue 30 */
    bisectMaxMinutes: z.int().min(1).max(1440).default(D.bisectMaxMinutes),
    /** Script runs of one job at once: the confirmation re-runs go in parallel up to it. @defaultValue the cores */
    parallelRuns: z.int().min(1).max(64).default(D.parallelRuns),
    /** Disk cache of the environment probe; null: in-process only. @defaultValue '<tmpdir>/repgen-probe-cache' */
    probeCacheDir: z.string().min(1).nullable().default(D.probeCacheDir),
    /** Python used for the static check (pyflakes, pylint -E). @defaultValue '/usr/bin/python3' */
    staticPython: z.string().min(1).default(D.staticPython),
    /** Run `pylint -E` in the static check when installed (about 1.5 s a script). @defaultValue true */
    pylint: z.boolean().default(true),
    /** Characters of an issue read; the rest is cut and the cut said. @defaultValue 200000 */
    maxIssueChars: z.int().positive().default(D.maxIssueChars),
    /** Characters of an issue sent to the model. @defaultValue 30000 */
    maxLlmIssueChars: z.int().positive().default(D.maxLlmIssueChars),
    /** Context: chunks per bundle and tokens per bundle. @defaultValue 8 and 6000 */
    contextTop: z.int().positive().default(D.contextTop),
    contextTokenBudget: z.int().positive().default(D.contextTokenBudget),
    /**
     * Run tier 0 (the report's own code, completed without a model) before tier 1. Off measures the model alone
     * (a bench of tier 1, recording its sessions); it never helps a real run. @defaultValue true
     */
    tier0: z.boolean().default(true),
    /**
     * After a reproduction against the project's checkout, ask the model for a candidate fix and run the reproduction
     * against it in a scratch copy (issue 41: fix-sensitive or not). Its tokens count in maxTokens and maxCostUsd.
     * @defaultValue true
     */
    suggestFix: z.boolean().default(true),
    /**
     * Characters of code the candidate fix's prompt shows: the enclosing functions of the failure's project frames and
     * of the calls the reproduction makes, numbered, then the context bundle's chunks not already shown. @defaultValue 8000
     */
    candidateCodeChars: z.int().positive().max(200_000).default(D.candidateCodeChars),
  })
  .strict();
export type ReproSettings = z.infer<typeof ReproSettings>;
export type ReproSettingsInput = z.input<typeof ReproSettings>;

/** ReproSettings from the parsed operator environment (src/config/operator-env.ts); `overrides` win. */
export function reproSettingsFrom(e: PipelineEnv, overrides: ReproSettingsInput = {}): ReproSettings {
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
    bisectMaxSteps: e.REPGEN_BISECT_MAX_STEPS,
    bisectMaxMinutes: e.REPGEN_BISECT_MAX_MINUTES,
    parallelRuns: e.REPGEN_PARALLEL_RUNS,
    probeCacheDir: e.REPGEN_PROBE_CACHE_DIR === 'off' ? null : e.REPGEN_PROBE_CACHE_DIR,
    staticPython: e.REPGEN_STATIC_PYTHON,
    pylint: e.REPGEN_PYLINT,
    maxIssueChars: e.REPGEN_MAX_ISSUE_CHARS,
    maxLlmIssueChars: e.REPGEN_MAX_LLM_ISSUE_CHARS,
    contextTop: e.REPGEN_CONTEXT_TOP,
    contextTokenBudget: e.REPGEN_CONTEXT_TOKENS,
    tier0: e.REPGEN_TIER0,
    suggestFix: e.REPGEN_SUGGEST_FIX,
    candidateCodeChars: e.REPGEN_CANDIDATE_CODE_CHARS,
    ...Object.fromEntries(Object.entries(overrides).filter(([, v]) => v !== undefined)),
  });
}
