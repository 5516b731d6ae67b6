import { z } from 'zod';
import { SetupError } from '../errors.js';
import { AppEnv } from './app-env.js';
import { ContextEnv } from './env/context-env.js';
import { EnvironmentEnv } from './env/environment-env.js';
import { setVariables, type SettingMeta } from './env/define.js';
import { ExecEnv } from './env/exec-env.js';
import { KubernetesEnv } from './env/kubernetes-env.js';
import { LlmEnv } from './env/llm-env.js';
import { CliEnv, PipelineEnv } from './env/pipeline-env.js';

/**
 * The operator's settings: every environment variable RepGen reads, in one zod schema. Entry points parse
 * it once (`readOperatorEnv`) and hand the result on; `resolveRunSpec` (src/pipeline/run-spec.ts) turns it,
 * the repository's config and the request into one run spec. Outside data, so unknown variables are
 * dropped (and listed by `unknownRepgenVariables`, so a typo does not pass in silence).
 */
export const ENV_GROUPS = [
  { title: 'Run budgets and limits', anchor: 'run-budgets-and-limits', schema: PipelineEnv },
  { title: 'Models', anchor: 'models', schema: LlmEnv },
  { title: 'Executor and local sandbox', anchor: 'executor-and-local-sandbox', schema: ExecEnv },
  { title: 'Kubernetes executor', anchor: 'kubernetes-executor', schema: KubernetesEnv },
  { title: 'Repository context', anchor: 'repository-context', schema: ContextEnv },
  { title: 'Project environments', anchor: 'project-environments', schema: EnvironmentEnv },
  { title: 'Command line', anchor: 'command-line', schema: CliEnv },
  { title: 'App, queue and worker', anchor: 'app-queue-and-worker', schema: AppEnv },
] as const;

export const OperatorEnv = z.object({
  ...PipelineEnv.shape,
  ...LlmEnv.shape,
  ...ExecEnv.shape,
  ...KubernetesEnv.shape,
  ...ContextEnv.shape,
  ...EnvironmentEnv.shape,
  ...CliEnv.shape,
  ...AppEnv.shape,
});
export type OperatorEnv = z.infer<typeof OperatorEnv>;

/** Names RepGen sets for a script inside its sandbox or pod, never read from the operator. */
export const SANDBOX_VARIABLES: ReadonlySet<string> = new Set([
  'REPGEN_OUT',
  'REPGEN_SEED',
  'REPGEN_WORKSPACE',
  'REPGEN_WORKSPACE_URL',
  'REPGEN_WORKSPACE_TOKEN',
  'REPGEN_PROBE',
]);

/** Parses the environment; a bad value is a SetupError naming the variable. */
export function readOperatorEnv(env: NodeJS.ProcessEnv = process.env): OperatorEnv {
  return parseEnv(OperatorEnv, env, (name, message) => `invalid ${name}: ${message}`);
}

/** Parses `env` with one group of the schema; `say` words the error. Shared by the older per-module readers. */
export function parseEnv<S extends z.ZodObject>(
  schema: S,
  env: NodeJS.ProcessEnv,
  say: (name: string, message: string) => string,
): z.infer<S> {
  const parsed = schema.safeParse(setVariables(env));
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  throw new SetupError(say(String(issue?.path[0] ?? 'setting'), issue?.message ?? 'invalid value'));
}

/** REPGEN_* variables that are set but that RepGen does not read (typos such as REPGEN_MAX_COST). */
export function unknownRepgenVariables(env: NodeJS.ProcessEnv): string[] {
  const known = new Set(Object.keys(OperatorEnv.shape));
  return Object.keys(setVariables(env))
    .filter((k) => k.startsWith('REPGEN_') && !known.has(k) && !SANDBOX_VARIABLES.has(k))
    .sort();
}

/** One row of the settings table. */
export interface SettingRow {
  name: string;
  default: string;
  description: string;
  ceiling: boolean;
}

/** The table's rows of one group: description and default from the schema itself. */
export function settingRows(schema: z.ZodObject): SettingRow[] {
  return Object.entries(schema.shape).map(([name, field]) => {
    const meta = (z.globalRegistry.get(field as z.ZodType) ?? {}) as Partial<SettingMeta>;
    return {
      name,
      default: meta.shown ?? shownDefault(field as z.ZodType),
      description: meta.description ?? '',
      ceiling: meta.ceiling === true,
    };
  });
}

function shownDefault(field: z.ZodType): string {
  const def = (field as unknown as { _zod: { def: { type: string; defaultValue?: unknown } } })._zod.def;
  if (def.type !== 'default') return '—';
  const value = typeof def.defaultValue === 'function' ? (def.defaultValue as () => unknown)() : def.defaultValue;
  return `\`${typeof value === 'string' ? value : JSON.stringify(value)}\``;
}
