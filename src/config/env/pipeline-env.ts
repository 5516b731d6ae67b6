import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { doc, flag, intRange, posInt } from './define.js';
import { DEFAULT_PYTHON } from './exec-env.js';

/**
 * The run's budgets and limits. One set of defaults, here: 15 attempts (the paper's 5 per context bundle
 * × 3 bundles), 400 000 tokens (about 25 000 per attempt, report and plan included), $5 (400k tokens of
 * the dearest listed model, mostly input, stays under it, so tokens bind first) and 30 minutes. The
 * `ceiling` ones are the operator's: a repository or a `/repgen` flag may only ask for less.
 */
export const PIPELINE_DEFAULTS = {
  attemptsPerBundle: 5,
  maxBundles: 3,
  maxAttempts: 15,
  maxTokens: 400_000,
  maxCostUsd: 5,
  wallClockMs: 1_800_000,
  runTimeoutMs: 120_000,
  runMemoryMb: 4096,
  confirmRuns: 3,
  bisectMaxSteps: 20,
  bisectMaxMinutes: 30,
  staticPython: DEFAULT_PYTHON,
  maxIssueChars: 200_000,
  maxLlmIssueChars: 30_000,
  contextTop: 8,
  contextTokenBudget: 6000,
  candidateCodeChars: 8000,
  /** Script runs of one job at once (the confirmation re-runs): the cores, so a lone CLI run uses the machine. */
  parallelRuns: Math.max(1, availableParallelism()),
  probeCacheDir: join(tmpdir(), 'repgen-probe-cache'),
} as const;

const D = PIPELINE_DEFAULTS;

export const PipelineEnv = z.object({
  REPGEN_MAX_ATTEMPTS: doc(posInt().max(1000).default(D.maxAttempts), {
    description: 'tier-1 attempts in all (`--max-attempts`)',
    ceiling: true,
  }),
  REPGEN_MAX_TOKENS: doc(posInt().default(D.maxTokens), { description: 'LLM tokens (input + output) a run may spend', ceiling: true }),
  REPGEN_MAX_COST_USD: doc(z.coerce.number().positive().default(D.maxCostUsd), {
    description: 'LLM dollars a run may spend',
    ceiling: true,
  }),
  REPGEN_WALL_CLOCK_MS: doc(posInt().default(D.wallClockMs), {
    description: 'wall clock of a whole run, all stages (30 min)',
    ceiling: true,
  }),
  REPGEN_RUN_TIMEOUT_MS: doc(posInt().max(86_400_000).default(D.runTimeoutMs), {
    description: 'time limit of one script run (also `repgen run` without `--timeout`)',
    ceiling: true,
  }),
  REPGEN_RUN_MEMORY_MB: doc(posInt().default(D.runMemoryMb), { description: 'memory limit of one script run', ceiling: true }),
  REPGEN_ATTEMPTS_PER_BUNDLE: doc(posInt().default(D.attemptsPerBundle), {
    description: 'tier-1 attempts on one context bundle before the next (the paper: 5)',
  }),
  REPGEN_MAX_BUNDLES: doc(posInt().default(D.maxBundles), { description: 'context bundles tried at most' }),
  REPGEN_CONFIRM_RUNS: doc(intRange(0, 20).default(D.confirmRuns), {
    description: 'seeded re-runs of a reproducing script ("reproduced k/n runs")',
  }),
  REPGEN_BISECT_MAX_STEPS: doc(intRange(0, 100).default(D.bisectMaxSteps), {
    description:
      'runs of a bisection at most, GOOD included (`--bisect`, `/repgen bisect`, a working version the report names); 0: never bisect',
  }),
  REPGEN_BISECT_MAX_MINUTES: doc(intRange(1, 1440).default(D.bisectMaxMinutes), {
    description: 'wall-clock minutes of a bisection at most; the commits still suspect are then listed',
  }),
  REPGEN_PARALLEL_RUNS: doc(intRange(1, 64).default(D.parallelRuns), {
    description: 'script runs of one job at once (its seeded confirmation re-runs)',
    shown: 'the cores',
  }),
  REPGEN_PROBE_CACHE_DIR: doc(z.string().min(1).default(D.probeCacheDir), {
    description:
      "disk cache of the environment probe (what the interpreter imports), keyed by the interpreter and its sys.path folders' mtimes; `off` disables it",
    shown: '`<tmpdir>/repgen-probe-cache`',
  }),
  REPGEN_STATIC_PYTHON: doc(z.string().min(1).default(D.staticPython), {
    description: 'Python that runs the static check (pyflakes, pylint -E)',
  }),
  REPGEN_PYLINT: doc(flag().default(true), {
    description: 'run `pylint -E` in the static check when installed (about 1.5 s a script)',
    shown: '`true`',
  }),
  REPGEN_MAX_ISSUE_CHARS: doc(posInt().default(D.maxIssueChars), {
    description: 'characters of an issue read; the rest is cut and the cut said',
  }),
  REPGEN_MAX_LLM_ISSUE_CHARS: doc(posInt().default(D.maxLlmIssueChars), { description: 'characters of an issue sent to the model' }),
  REPGEN_CONTEXT_TOP: doc(posInt().default(D.contextTop), { description: 'repository chunks per context bundle' }),
  REPGEN_CONTEXT_TOKENS: doc(posInt().default(D.contextTokenBudget), { description: 'tokens per context bundle' }),
  REPGEN_CANDIDATE_CODE_CHARS: doc(posInt().max(200_000).default(D.candidateCodeChars), {
    description:
      "characters of code the candidate fix's prompt shows: the functions the failure runs through, then context chunks " +
      'not already shown (issue 41)',
  }),
  REPGEN_TIER0: doc(flag().default(true), {
    description:
      '`0`: skip tier 0, so tier 1 (the model) starts from the completed report code without running it; ' +
      'for measuring or recording the model alone (docs/cassettes.md)',
    shown: '`true`',
  }),
  REPGEN_SUGGEST_FIX: doc(flag().default(true), {
    description:
      '`0`: no candidate fix after a reproduction against a checkout (issue 41); on, the model proposes a patch, run ' +
      "against the reproduction in a scratch copy (fix-sensitive or not); its tokens count in the run's caps",
    shown: '`true`',
  }),
});
export type PipelineEnv = z.infer<typeof PipelineEnv>;

/** Settings of the command-line tools (`repgen reproduce`, `run`, `bench`). */
export const CliEnv = z.object({
  REPGEN_CHECKOUT_CACHE_DIR: doc(z.string().min(1).optional(), {
    description: 'where checkouts at a ref are cached (`--ref`, `--verify-fix`, bench mirrors)',
    shown: '`<tmpdir>/repgen-checkouts`',
  }),
  REPGEN_VERBOSE: doc(z.enum(['0', '1']).optional(), {
    description: '`1`: every log line on stderr, not one line per stage',
    shown: '`0`',
  }),
  REPGEN_BENCH_JUDGE: doc(z.string().min(1).optional(), {
    description: '`repgen bench`: the judge.py to use',
    shown: 'DIR/judge.py, DIR/../judge.py',
  }),
  REPGEN_RECORD_CASSETTES: doc(z.string().min(1).optional(), {
    description: "`repgen bench`: record each case's model calls, script runs and outcome as `DIR/<case>.json` (docs/cassettes.md)",
    shown: '—',
  }),
  REPGEN_CASSETTE_NOTE: doc(z.string().optional(), {
    description: '`repgen bench` recording: who answered (kept in each cassette)',
    shown: '—',
  }),
  REPGEN_MAX_ISSUE_BYTES: doc(posInt().default(1_000_000), { description: '`repgen run --issue`: largest issue file read' }),
  REPGEN_MAX_SCRIPT_BYTES: doc(posInt().default(1_000_000), { description: '`repgen run`: largest script file run' }),
});
export type CliEnv = z.infer<typeof CliEnv>;
