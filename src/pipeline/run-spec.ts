import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { allowedIndexes } from '../config/env/environment-env.js';
import type { SandboxMode } from '../config/env/exec-env.js';
import { pipFindLinks } from '../config/pip-find-links.js';
import { ContextEnv } from '../config/env/context-env.js';
import { LlmProviderName } from '../config/env/llm-env.js';
import type { OperatorEnv } from '../config/operator-env.js';
import type { RepoConfig } from '../config/repo-config.js';
import type { FixAdviceFor } from './stages/env/fix-advice.js';
import type { ContextSettings } from '../context/settings.js';
import { SetupError } from '../errors.js';
import { localExecConfigFrom } from '../exec/config.js';
import type { ExecConfig } from '../exec/index.js';
import { kubernetesConfigFrom, type KubernetesConfig } from '../exec/kubernetes/config.js';
import type { ExecPolicy } from '../exec/with-policy.js';
import { llmSettingsFrom, type LlmSettings } from '../llm/settings.js';
import { reproSettingsFrom, type ReproSettings } from './settings.js';

/**
 * One run spec, resolved in one place: the operator's environment (parsed once by `readOperatorEnv`), the
 * repository's `.github/repgen.yml` and the request (`/repgen --max-cost …`, the CLI's flags) give every
 * setting of a run. The operator's caps are ceilings: the repository and the request may only lower them.
 * Pure: nothing here reads the environment, and nothing downstream re-reads or re-defaults a setting.
 */

export const CAP_NAMES = ['attempts', 'tokens', 'costUsd', 'minutes'] as const;
export type CapName = (typeof CAP_NAMES)[number];

/** Caps a repository or a request asks for; each is honoured only below the operator's. */
export const CapAsk = z
  .object({
    attempts: z.number().int().min(1).optional(),
    tokens: z.number().int().min(1).optional(),
    /** 0: no model spend at all (the run is tier 0 only). */
    costUsd: z.number().min(0).optional(),
    minutes: z.number().positive().optional(),
  })
  .strict();
export type CapAsk = z.infer<typeof CapAsk>;

/** What one run asks for on top of the operator's settings and the repository's config. */
export const RunRequest = z
  .object({
    caps: CapAsk.default({}),
    /** Provider (`--llm`, `/repgen --llm anthropic`); unset: the operator's choice. */
    provider: LlmProviderName.optional(),
    /** Model of the provider (`--model`, `/repgen --llm MODEL`). */
    model: z.string().min(1).max(100).optional(),
    /** A GPU for this run (`/repgen --gpu`). */
    gpu: z.boolean().default(false),
    /** `false`: no candidate fix after a reproduction (`--no-suggest-fix`). Absent: the repository's and operator's choice. */
    suggestFix: z.boolean().optional(),
    /** The queue's job id: a label on every script run. */
    jobId: z.string().min(1).optional(),
  })
  .strict();
export type RunRequest = z.infer<typeof RunRequest>;
export type RunRequestInput = z.input<typeof RunRequest>;

/** One cap as resolved: its value, the operator's ceiling, and who set the value. */
export interface Cap {
  value: number;
  ceiling: number;
  from: 'operator' | 'repo' | 'request';
}

export interface RunSpec {
  /** The pipeline's budgets and limits, caps applied. */
  settings: ReproSettings;
  llm: LlmSettings;
  executor: ExecConfig;
  context: ContextSettings;
  /** Imposed on every script run by `withPolicy` (src/exec/with-policy.ts). */
  policy: ExecPolicy;
  caps: Record<CapName, Cap>;
  /** What the resolution decided that a reader of the result should know (a cap held, the model turned off). */
  notes: string[];
  /** The project's environment: whether and how it is built (REPGEN_ENV*, repgen.yml `environment:`). */
  env: EnvSettings;
}

/** How a job's environment is built (src/pipeline/stages/env/default-env-ports.ts). */
export interface EnvSettings {
  mode: 'auto' | 'off';
  cacheRoot: string;
  /** Ceiling of the project's extension build (REPGEN_ENV_EXTENSION_MINUTES). */
  extensionTimeoutMs: number;
  /** Envs the import ladder builds at most (REPGEN_ENV_MAX_CANDIDATES). @defaultValue 3 */
  maxCandidates?: number;
  /** Disk a build's folder may hold (REPGEN_ENV_BUILD_MAX_MB). */
  buildMaxMb: number;
  /** Keep a scope's uv cache once its env is built (REPGEN_ENV_KEEP_UV_CACHE). @defaultValue false */
  keepUvCache?: boolean;
  findLinks: string[];
  allowedIndexes: string[];
  /** The interpreter every venv is made from, and runs use when no env is built (REPGEN_PYTHON). */
  basePython: string;
  gpu: boolean;
  repoEnvironment: RepoConfig['environment'] | null;
  /** The user's pins where they run RepGen (`repgen reproduce --with`/`--python`): they beat every other source. */
  userPins?: { packages: string[]; python: string | null; label: string } | null;
  /** Where the reader of an env failure can act: repgen.yml keys (the App, the Action), or the CLI's flags. */
  advice?: FixAdviceFor;
  /** The local sandbox the builds run in (the executor's). */
  sandbox: { mode: SandboxMode; workRoot: string; sandboxUid: number; readOnlyPaths?: string[] };
  /** With the Kubernetes executor and REPGEN_K8S_ENV_BUILD_CLAIM: each build step is a Job there, not a local sandbox. */
  kubernetes: KubernetesConfig | null;
}

/** `/repgen --llm X`: a provider name picks the provider; anything else is a model of the operator's provider. */
export function llmChoice(text: string | null | undefined): Pick<RunRequest, 'provider' | 'model'> {
  if (!text) return {};
  const provider = LlmProviderName.safeParse(text);
  return provider.success ? { provider: provider.data } : { model: text };
}

const UNIT: Record<CapName, (v: number) => string> = {
  attempts: (v) => `${v} attempts`,
  tokens: (v) => `${v} tokens`,
  costUsd: (v) => `$${v}`,
  minutes: (v) => `${v} min`,
};

export function resolveRunSpec(operatorEnv: OperatorEnv, repoConfig: RepoConfig | null, request: RunRequestInput = {}): RunSpec {
  const parsedRequest = RunRequest.safeParse(request);
  if (!parsedRequest.success) throw new SetupError(`invalid run request: ${z.prettifyError(parsedRequest.error)}`);
  const req = parsedRequest.data;
  const op = operatorEnv;
  const ceilings: Record<CapName, number> = {
    attempts: op.REPGEN_MAX_ATTEMPTS,
    tokens: op.REPGEN_MAX_TOKENS,
    costUsd: op.REPGEN_MAX_COST_USD,
    minutes: op.REPGEN_WALL_CLOCK_MS / 60_000,
  };
  const notes: string[] = [];
  const caps = Object.fromEntries(
    CAP_NAMES.map((name) => {
      const cap = lowest(ceilings[name], repoConfig?.caps[name], req.caps[name]);
      for (const [who, asked] of [
        ['the repository config', repoConfig?.caps[name]],
        ['the request', req.caps[name]],
      ] as const) {
        if (asked !== undefined && asked > cap.ceiling)
          notes.push(`${who} asked for ${UNIT[name](asked)} (${name}); the operator's ceiling of ${UNIT[name](cap.ceiling)} applies`);
      }
      return [name, cap];
    }),
  ) as Record<CapName, Cap>;

  const settings = reproSettingsFrom(op, {
    maxAttempts: caps.attempts.value,
    maxTokens: caps.tokens.value,
    // 0 dollars means no model (below); the budget itself must stay positive.
    maxCostUsd: caps.costUsd.value > 0 ? caps.costUsd.value : Number.MIN_VALUE,
    wallClockMs: Math.max(1, Math.round(caps.minutes.value * 60_000)),
    // Off when the operator, the repository or the request says so: each may only turn it off.
    suggestFix: op.REPGEN_SUGGEST_FIX && repoConfig?.suggestFix !== false && req.suggestFix !== false,
  });
  if (op.REPGEN_SUGGEST_FIX && !settings.suggestFix)
    notes.push(
      `no candidate fix: turned off by ${repoConfig?.suggestFix === false ? 'the repository config (suggestFix: false)' : 'the request'}`,
    );
  let llm = llmSettingsFrom(op, { provider: req.provider, model: req.model });
  if (caps.costUsd.value === 0 && llm.provider !== 'none') {
    const reason = `no LLM: caps.costUsd is 0 (${caps.costUsd.from === 'repo' ? 'the repository config' : 'the request'})`;
    llm = { ...llm, provider: 'none', reason, apiKey: undefined, baseURL: undefined };
    notes.push(reason);
  }
  const executor = executorFor(op, repoConfig);
  const allow = repoConfig?.network.allow ?? [];
  const policy: ExecPolicy = {
    ...(repoConfig?.executor.image ? { image: repoConfig.executor.image } : {}),
    minGpus: req.gpu || repoConfig?.gpu ? 1 : 0,
    setup: repoConfig?.setup ?? [],
    network: executor.kind === 'kubernetes' && allow.length > 0,
    labels: req.jobId ? { 'repgen-job': req.jobId.slice(0, 63) } : {},
    maxTimeoutMs: settings.runTimeoutMs,
    maxMemoryMb: settings.runMemoryMb,
  };
  if (allow.length > 0 && executor.kind !== 'kubernetes')
    notes.push('network.allow needs the Kubernetes executor; the local sandbox stays offline');
  const local = executor.kind === 'local' ? executor : localExecConfigFrom(op);
  const env: EnvSettings = {
    mode: op.REPGEN_ENV,
    cacheRoot: op.REPGEN_ENV_CACHE ?? join(local.workRoot, 'repgen-envs'),
    extensionTimeoutMs: op.REPGEN_ENV_EXTENSION_MINUTES * 60_000,
    maxCandidates: op.REPGEN_ENV_MAX_CANDIDATES,
    buildMaxMb: op.REPGEN_ENV_BUILD_MAX_MB,
    keepUvCache: op.REPGEN_ENV_KEEP_UV_CACHE,
    findLinks: op.REPGEN_ENV_FIND_LINKS ?? pipFindLinks(),
    allowedIndexes: allowedIndexes(op),
    basePython: local.python,
    gpu: policy.minGpus > 0,
    repoEnvironment: repoConfig?.environment ?? null,
    sandbox: { mode: local.sandbox, workRoot: local.workRoot, sandboxUid: local.sandboxUid, readOnlyPaths: local.readOnlyPaths },
    kubernetes: executor.kind === 'kubernetes' && executor.envBuildClaim ? executor : null,
  };
  return { settings, llm, executor, context: contextSettings(op), policy, caps, notes, env };
}

/** The smallest of the operator's ceiling and what the repository and the request ask for. */
function lowest(ceiling: number, repo: number | undefined, request: number | undefined): Cap {
  let cap: Cap = { value: ceiling, ceiling, from: 'operator' };
  if (repo !== undefined && repo < cap.value) cap = { value: repo, ceiling, from: 'repo' };
  if (request !== undefined && request < cap.value) cap = { value: request, ceiling, from: 'request' };
  return cap;
}

/** The operator's executor (REPGEN_EXECUTOR), or the Kubernetes one when the repository asks for it. */
function executorFor(op: OperatorEnv, repoConfig: RepoConfig | null): ExecConfig {
  const kind = repoConfig?.executor.kind === 'kubernetes' ? 'kubernetes' : (op.REPGEN_EXECUTOR ?? 'local');
  // A job runs up to REPGEN_PARALLEL_RUNS scripts at once, each forked from a fork server of its own: the pool must hold them.
  if (kind === 'local') {
    const local = localExecConfigFrom(op);
    // ...and its runs share the CPUs: each run's numeric libraries start its share of threads, not one per CPU each.
    const scriptThreads = local.scriptThreads ?? Math.max(1, Math.floor(availableParallelism() / op.REPGEN_PARALLEL_RUNS));
    return { ...local, warmPoolSize: Math.max(local.warmPoolSize, op.REPGEN_PARALLEL_RUNS), scriptThreads };
  }
  if (kind === 'kubernetes') return kubernetesConfigFrom(op);
  throw new SetupError(`unknown REPGEN_EXECUTOR '${kind}' (valid: local, kubernetes)`);
}

function contextSettings(op: OperatorEnv): ContextSettings {
  const entries = Object.keys(ContextEnv.shape).flatMap((k) =>
    op[k as keyof OperatorEnv] === undefined ? [] : [[k, op[k as keyof OperatorEnv]]],
  );
  return Object.fromEntries(entries) as ContextSettings;
}
