import type { BuildContextFn, ReproEvidence } from '../pipeline/run-repro.js';
import { runReproWithEvidence } from '../pipeline/run-repro.js';
import { reproSettingsFromEnv, type ReproSettings } from '../pipeline/settings.js';
import type { IssueInput, ProgressFn } from '../pipeline/types.js';
import { createExecutor, readExecConfig, readKubernetesConfig, type ScriptExecutor } from '../exec/index.js';
import { createLlmClient, llmSettingsFromEnv, type LlmProvider } from '../llm/index.js';
import type { LlmClient } from '../llm/types.js';
import type { Logger } from '../log.js';
import type { PreparedWorkspace } from '../workspace/prepare-workspace.js';
import { withRepoPolicy } from '../../workers/wire-pipeline.js';
import type { RunAsk } from './gate-event.js';

/**
 * The action's run: the same stages as `repgen reproduce` and the worker (runReproWithEvidence), with the
 * workflow's checkout as the workspace.
 * TODO(#14): becomes `reproduceIssue(resolveRunSpec(operatorEnv, config, request), ports, signal)` once the
 * run spec lands; until then this is the worker's wiring (workers/wire-pipeline.ts) with two differences:
 * the workspace is passed, and the workflow's caps are ceilings the repository's config may only lower.
 */
export interface ActionPipelineRequest {
  jobId: string;
  issue: IssueInput;
  prepared: PreparedWorkspace;
  ask: RunAsk;
}

export interface ActionPipelineWiring {
  /** The operator's environment (operatorEnv(): the step's env with the inputs laid over it). */
  env: NodeJS.ProcessEnv;
  log: Logger;
  /** Tests inject these; a real run builds them from `env` and the repository's config. */
  executor?: ScriptExecutor;
  llm?: LlmClient | null;
  buildContext?: BuildContextFn;
}

export async function runActionPipeline(request: ActionPipelineRequest, wiring: ActionPipelineWiring, progress: ProgressFn, signal: AbortSignal): Promise<ReproEvidence> {
  const { ask } = request;
  const settings = actionSettings(wiring.env, ask);
  const { llm, reason } = await llmFor(ask.llm, wiring);
  const base = wiring.executor ?? (await createExecutor(ask.config.executor.kind === 'kubernetes' ? readKubernetesConfig(wiring.env) : readExecConfig(wiring.env), { log: wiring.log }));
  const executor = withRepoPolicy(base, { config: ask.config, gpu: ask.gpu, jobId: request.jobId });
  const buildContext = wiring.buildContext ?? (await contextBuilder(wiring));
  const { workspace } = request.prepared;
  return runReproWithEvidence(
    { issue: request.issue, repoDir: workspace.hostPath, workspace, settings },
    { executor, llm, llmReason: reason, buildContext, log: wiring.log, progress },
    signal,
  );
}

/**
 * The workflow's settings (REPGEN_* and the cap inputs) with a present `.github/repgen.yml` allowed to lower
 * its caps, never to raise them. An absent file changes nothing (its defaults are not the repository's choice).
 */
export function actionSettings(env: NodeJS.ProcessEnv, ask: Pick<RunAsk, 'config' | 'configFromFile'>): ReproSettings {
  const operator = reproSettingsFromEnv(env);
  if (!ask.configFromFile) return operator;
  const caps = ask.config.caps;
  return {
    ...operator,
    maxAttempts: Math.min(operator.maxAttempts, caps.attempts),
    maxTokens: Math.min(operator.maxTokens, caps.tokens),
    // A repository's `costUsd: 0` means "no model spend"; the settings need a positive number.
    maxCostUsd: Math.min(operator.maxCostUsd, Math.max(caps.costUsd, 0.0001)),
    wallClockMs: Math.min(operator.wallClockMs, caps.minutes * 60_000),
  };
}

async function llmFor(asked: string | null, wiring: ActionPipelineWiring): Promise<{ llm: LlmClient | null; reason: string }> {
  if (wiring.llm !== undefined) return { llm: wiring.llm, reason: wiring.llm ? `${wiring.llm.provider} ${wiring.llm.model}` : 'no LLM configured' };
  // `/repgen --llm X`: a provider name picks the provider, anything else is a model of the configured one.
  const overrides = asked === null ? {} : ['none', 'anthropic', 'openai'].includes(asked) ? { provider: asked as LlmProvider } : { model: asked };
  const settings = llmSettingsFromEnv(wiring.env, overrides);
  const llm = await createLlmClient(settings, { log: wiring.log });
  return { llm, reason: llm ? `${llm.provider} ${llm.model}` : (settings.reason ?? 'no LLM configured') };
}

async function contextBuilder(wiring: ActionPipelineWiring): Promise<BuildContextFn> {
  const { buildContext } = await import('../context/index.js');
  return (input) => buildContext(input, { env: wiring.env, log: wiring.log });
}
