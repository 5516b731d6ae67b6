import { z } from 'zod';
import { SetupError } from '../errors.js';

/**
 * What a workflow hands the action: GitHub's own variables (GITHUB_*, RUNNER_TEMP) and the step's
 * `with:` inputs, which the runner passes as `INPUT_<NAME>` (upper-cased, spaces to `_`, hyphens kept:
 * `llm-api-key` arrives as `INPUT_LLM-API-KEY`). Read once, here; nothing else reads `INPUT_*`.
 */

/** The inputs action.yml declares, in its order; test/action/action-metadata.test.ts holds the two in step. */
export const ACTION_INPUTS = [
  'github-token',
  'llm-provider',
  'llm-api-key',
  'llm-model',
  'llm-base-url',
  'python',
  'sandbox',
  'max-attempts',
  'max-tokens',
  'max-cost-usd',
  'max-minutes',
  'trigger-label',
  'open-pr',
] as const;
export type ActionInputName = (typeof ACTION_INPUTS)[number];

/** The outputs action.yml declares. */
export const ACTION_OUTPUTS = ['status', 'verdict', 'repro-path', 'evidence-path', 'comment-url'] as const;
export type ActionOutputName = (typeof ACTION_OUTPUTS)[number];

const blankIsUnset = (v: unknown) => (typeof v === 'string' && v.trim() === '' ? undefined : typeof v === 'string' ? v.trim() : v);
const optional = <T extends z.ZodType>(schema: T) => z.preprocess(blankIsUnset, schema.optional());
const positiveInt = z.coerce.number().int().positive();
const bool = z.enum(['true', 'false']).transform((v) => v === 'true');

const Inputs = z.object({
  'github-token': optional(z.string().min(1)),
  'llm-provider': optional(z.enum(['none', 'anthropic', 'openai'])),
  'llm-api-key': optional(z.string().min(1)),
  'llm-model': optional(z.string().min(1).max(200)),
  'llm-base-url': optional(z.url()),
  python: optional(z.string().min(1)),
  sandbox: optional(z.enum(['bwrap', 'none'])),
  'max-attempts': optional(positiveInt.max(50)),
  'max-tokens': optional(positiveInt),
  'max-cost-usd': optional(z.coerce.number().positive()),
  'max-minutes': optional(positiveInt.max(360)),
  'trigger-label': optional(z.string().min(1).max(50)),
  'open-pr': optional(bool),
});
export type ActionInputs = z.infer<typeof Inputs>;

const GithubEnv = z.object({
  GITHUB_EVENT_NAME: z.string().min(1),
  GITHUB_EVENT_PATH: z.string().min(1),
  GITHUB_REPOSITORY: z.string().regex(/^[\w.-]+\/[\w.-]+$/, 'must be owner/name'),
  GITHUB_WORKSPACE: z.string().startsWith('/', 'must be an absolute path'),
  GITHUB_API_URL: z.url().default('https://api.github.com'),
  GITHUB_SERVER_URL: z.url().default('https://github.com'),
  GITHUB_TOKEN: optional(z.string().min(1)),
  GITHUB_OUTPUT: optional(z.string().min(1)),
  GITHUB_RUN_ID: optional(z.string().regex(/^\d+$/)),
  GITHUB_RUN_ATTEMPT: optional(z.string().regex(/^\d+$/)),
  RUNNER_TEMP: optional(z.string().startsWith('/')),
  /** Tests and GHES without rate limits turn Octokit's write throttling off. */
  REPGEN_GITHUB_THROTTLE: optional(z.enum(['true', 'false'])),
});

export interface ActionEnv {
  eventName: string;
  eventPath: string;
  /** `owner/name` of the repository the workflow runs in. */
  repository: string;
  /** The checkout the workflow made: the workspace every script imports the project from. */
  workspace: string;
  apiUrl: string;
  serverUrl: string;
  token: string;
  outputFile: string | null;
  /** `GITHUB_RUN_ID[-ATTEMPT]`: names the run in the progress marker and links to its log. */
  runId: string | null;
  runAttempt: string | null;
  /** Where the action writes repro.py, evidence.json and comment.md (RUNNER_TEMP, else the OS temp dir). */
  tempDir: string | null;
  throttle: boolean;
  inputs: ActionInputs;
}

/** The `INPUT_*` variable the runner sets for an input (the rule of @actions/core's getInput). */
export function inputVariable(name: string): string {
  return `INPUT_${name.replace(/ /g, '_').toUpperCase()}`;
}

/** Reads and validates the Actions environment; a bad or missing value is a SetupError naming it. */
export function readActionEnv(env: NodeJS.ProcessEnv): ActionEnv {
  const gh = GithubEnv.safeParse(env);
  if (!gh.success) throw new SetupError(`invalid ${describe(gh.error)} (is this running inside GitHub Actions?)`);
  const raw = Object.fromEntries(ACTION_INPUTS.map((name) => [name, env[inputVariable(name)]]));
  const inputs = Inputs.safeParse(raw);
  if (!inputs.success) throw new SetupError(`invalid input ${describe(inputs.error)}`);
  const e = gh.data;
  const token = inputs.data['github-token'] ?? e.GITHUB_TOKEN;
  if (!token) throw new SetupError('no GitHub token: pass `github-token` (default ${{ github.token }}) or set GITHUB_TOKEN');
  return {
    eventName: e.GITHUB_EVENT_NAME,
    eventPath: e.GITHUB_EVENT_PATH,
    repository: e.GITHUB_REPOSITORY,
    workspace: e.GITHUB_WORKSPACE,
    apiUrl: e.GITHUB_API_URL.replace(/\/+$/, ''),
    serverUrl: e.GITHUB_SERVER_URL.replace(/\/+$/, ''),
    token,
    outputFile: e.GITHUB_OUTPUT ?? null,
    runId: e.GITHUB_RUN_ID ?? null,
    runAttempt: e.GITHUB_RUN_ATTEMPT ?? null,
    tempDir: e.RUNNER_TEMP ?? null,
    throttle: e.REPGEN_GITHUB_THROTTLE !== 'false',
    inputs: inputs.data,
  };
}

function describe(error: z.ZodError): string {
  const issue = error.issues[0];
  return `${String(issue?.path[0] ?? 'setting')}: ${issue?.message ?? 'bad value'}`;
}

/**
 * The operator's settings as the pipeline reads them (REPGEN_*, the model's key), from the step's
 * environment with the inputs laid over it. The workflow is the operator here: its caps are the ceilings
 * a repository's `.github/repgen.yml` may only lower. GitHub's token never reaches this environment.
 */
export function operatorEnv(env: NodeJS.ProcessEnv, inputs: ActionInputs): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = Object.fromEntries(Object.entries(env).filter(([k]) => !k.startsWith('INPUT_') && k !== 'GITHUB_TOKEN'));
  const set = (key: string, value: string | number | undefined): void => {
    if (value !== undefined) out[key] = String(value);
  };
  const provider = inputs['llm-provider'];
  set('REPGEN_LLM_PROVIDER', provider);
  set('REPGEN_LLM_MODEL', inputs['llm-model']);
  // One key input for either provider: the provider input says whose it is (Anthropic's when unset).
  set(provider === 'openai' ? 'OPENAI_API_KEY' : 'ANTHROPIC_API_KEY', provider === 'none' ? undefined : inputs['llm-api-key']);
  set(provider === 'openai' ? 'OPENAI_BASE_URL' : 'ANTHROPIC_BASE_URL', provider === 'none' ? undefined : inputs['llm-base-url']);
  set('REPGEN_PYTHON', inputs.python);
  set('REPGEN_SANDBOX', inputs.sandbox);
  set('REPGEN_MAX_ATTEMPTS', inputs['max-attempts']);
  set('REPGEN_MAX_TOKENS', inputs['max-tokens']);
  set('REPGEN_MAX_COST_USD', inputs['max-cost-usd']);
  set('REPGEN_WALL_CLOCK_MS', inputs['max-minutes'] === undefined ? undefined : inputs['max-minutes'] * 60_000);
  return out;
}
