import { createExecutor, readExecConfig, readKubernetesConfig, readLocalExecConfig, type ScriptExecutor } from '../src/exec/index.js';
import type { RunRequestInput } from '../src/exec/types.js';
import type { PipelineRequest, RunPipeline } from '../src/github/process-repro-job.js';
import { createLlmClient, llmSettingsFromEnv, type LlmProvider } from '../src/llm/index.js';
import type { LlmClient } from '../src/llm/types.js';
import type { Logger } from '../src/log.js';
import { runRepro, type BuildContextFn } from '../src/pipeline/run-repro.js';
import { reproSettingsFromEnv } from '../src/pipeline/settings.js';
import type { RepoConfig } from '../src/config/repo-config.js';

/**
 * The worker's pipeline: the same `runRepro` as `repgen reproduce`, with the repository's
 * `.github/repgen.yml` applied — caps become the run's budgets, and executor, image, GPU, setup commands
 * and network are imposed on every script run through `withRepoPolicy`.
 */
export interface PipelineWiring {
  env: NodeJS.ProcessEnv;
  log: Logger;
  /** Tests inject these; production builds them from env and the repo config. */
  executor?: ScriptExecutor;
  llm?: LlmClient | null;
  buildContext?: BuildContextFn;
}

export function wirePipeline(wiring: PipelineWiring): RunPipeline {
  const executors = new Map<string, Promise<ScriptExecutor>>();
  const executorFor = (kind: RepoConfig['executor']['kind']): Promise<ScriptExecutor> => {
    if (wiring.executor) return Promise.resolve(wiring.executor);
    let made = executors.get(kind);
    if (!made) {
      // REPGEN_EXECUTOR picks the default; the repository may ask for the other kind explicitly.
      const cfg = kind === 'kubernetes' ? readKubernetesConfig(wiring.env) : readExecConfig(wiring.env).kind === 'local' ? readLocalExecConfig(wiring.env) : readExecConfig(wiring.env);
      made = createExecutor(cfg, { log: wiring.log });
      executors.set(kind, made);
    }
    return made;
  };
  return async (request, progress, signal) => {
    const config = request.config;
    const settings = reproSettingsFromEnv(wiring.env, {
      maxAttempts: config.caps.attempts,
      maxTokens: config.caps.tokens,
      maxCostUsd: Math.max(config.caps.costUsd, 0.0001),
      wallClockMs: config.caps.minutes * 60_000,
    });
    const { llm, reason } = await llmFor(request, wiring);
    const executor = withRepoPolicy(await executorFor(config.executor.kind), request);
    const buildContext = wiring.buildContext ?? (await contextBuilder(wiring));
    return runRepro(
      { issue: request.issue, repoDir: request.repoDir, settings },
      { executor, llm, llmReason: reason, buildContext, log: wiring.log, progress },
      signal,
    );
  };
}

async function llmFor(request: PipelineRequest, wiring: PipelineWiring): Promise<{ llm: LlmClient | null; reason: string }> {
  if (wiring.llm !== undefined) return { llm: wiring.llm, reason: wiring.llm ? `${wiring.llm.provider} ${wiring.llm.model}` : 'no LLM configured' };
  // `/repgen --llm X`: a provider name picks the provider, anything else is a model of the configured one.
  const overrides = request.llm === null ? {} : ['none', 'anthropic', 'openai'].includes(request.llm) ? { provider: request.llm as LlmProvider } : { model: request.llm };
  const settings = llmSettingsFromEnv(wiring.env, overrides);
  const llm = await createLlmClient(settings, { log: wiring.log });
  return { llm, reason: llm ? `${llm.provider} ${llm.model}` : (settings.reason ?? 'no LLM configured') };
}

async function contextBuilder(wiring: PipelineWiring): Promise<BuildContextFn> {
  const { buildContext } = await import('../src/context/index.js');
  return (input) => buildContext(input, { env: wiring.env, log: wiring.log });
}

/**
 * Imposes the repository's policy on each script run, whatever the agent asked: the image, at least one
 * GPU when the run or the config wants one, the setup commands first. Network: only a Kubernetes
 * executor (whose NetworkPolicy enforces the allowlist) gets it; the local sandbox is all-or-nothing, so
 * an allowlist never turns into the whole host network there.
 */
export function withRepoPolicy(executor: ScriptExecutor, request: Pick<PipelineRequest, 'config' | 'gpu' | 'jobId'>): ScriptExecutor {
  const { config } = request;
  return {
    name: executor.name,
    run: (req: RunRequestInput, signal?: AbortSignal) =>
      executor.run(
        {
          ...req,
          ...(config.executor.image && !req.image ? { image: config.executor.image } : {}),
          gpus: Math.max(req.gpus ?? 0, request.gpu || config.gpu ? 1 : 0),
          setup: [...config.setup, ...(req.setup ?? [])],
          network: config.executor.kind === 'kubernetes' && config.network.allow.length > 0 ? true : (req.network ?? false),
          labels: { ...(req.labels ?? {}), 'repgen-job': request.jobId.slice(0, 63) },
        },
        signal,
      ),
  };
}
