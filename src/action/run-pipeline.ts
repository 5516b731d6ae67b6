import type { BuildContextFn, ReproEvidence } from '../pipeline/run-repro.js';
import { runReproWithEvidence } from '../pipeline/run-repro.js';
import { llmChoice, resolveRunSpec, type RunSpec } from '../pipeline/run-spec.js';
import type { ReproSettings } from '../pipeline/settings.js';
import { readOperatorEnv } from '../config/operator-env.js';
import type { IssueInput, ProgressFn } from '../pipeline/types.js';
import { createExecutor, type ScriptExecutor } from '../exec/index.js';
import { withPolicy } from '../exec/with-policy.js';
import { createLlmClient } from '../llm/index.js';
import type { LlmClient } from '../llm/types.js';
import type { Logger } from '../log.js';
import type { PreparedWorkspace } from '../workspace/prepare-workspace.js';
import type { RunAsk } from './gate-event.js';

/**
 * The action's run: the same stages as `repgen reproduce` and the worker (runReproWithEvidence), with the
 * workflow's checkout as the workspace.
 * TODO(#14): becomes `reproduceIssue(spec, ports, signal)` once the ports land; the spec is already the one
 * run spec (`resolveRunSpec`), with the workflow's checkout as the workspace.
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

export async function runActionPipeline(
  request: ActionPipelineRequest,
  wiring: ActionPipelineWiring,
  progress: ProgressFn,
  signal: AbortSignal,
): Promise<ReproEvidence> {
  const spec = actionSpec(wiring.env, request.ask, request.jobId);
  for (const note of spec.notes) wiring.log.info({ note }, 'run spec');
  const { llm, reason } = await llmFor(spec, wiring);
  const base = wiring.executor ?? (await createExecutor(spec.executor, { log: wiring.log }));
  const executor = withPolicy(base, spec.policy);
  const buildContext = wiring.buildContext ?? (await contextBuilder(spec, wiring.log));
  const { workspace } = request.prepared;
  return runReproWithEvidence(
    { issue: request.issue, repoDir: workspace.hostPath, workspace, settings: spec.settings },
    { executor, llm, llmReason: reason, buildContext, log: wiring.log, progress },
    signal,
  );
}

/**
 * The run spec (src/pipeline/run-spec.ts): the workflow's settings (REPGEN_* and the cap inputs) are the
 * ceilings; a present `.github/repgen.yml` may lower its caps, never raise them. An absent file changes nothing.
 */
export function actionSpec(
  env: NodeJS.ProcessEnv,
  ask: Pick<RunAsk, 'config' | 'configFromFile' | 'gpu' | 'llm'>,
  jobId?: string,
): RunSpec {
  return resolveRunSpec(readOperatorEnv(env), ask.configFromFile ? ask.config : null, {
    gpu: ask.gpu,
    ...(jobId ? { jobId } : {}),
    ...llmChoice(ask.llm),
  });
}

/** The settings of {@link actionSpec} (kept for the action's tests). */
export function actionSettings(env: NodeJS.ProcessEnv, ask: Pick<RunAsk, 'config' | 'configFromFile'>): ReproSettings {
  return resolveRunSpec(readOperatorEnv(env), ask.configFromFile ? ask.config : null, {}).settings;
}

async function llmFor(spec: RunSpec, wiring: ActionPipelineWiring): Promise<{ llm: LlmClient | null; reason: string }> {
  if (wiring.llm !== undefined)
    return { llm: wiring.llm, reason: wiring.llm ? `${wiring.llm.provider} ${wiring.llm.model}` : 'no LLM configured' };
  const llm = await createLlmClient(spec.llm, { log: wiring.log });
  return { llm, reason: llm ? `${llm.provider} ${llm.model}` : (spec.llm.reason ?? 'no LLM configured') };
}

async function contextBuilder(spec: RunSpec, log: Logger): Promise<BuildContextFn> {
  const { buildContext } = await import('../context/index.js');
  return (input) => buildContext(input, { settings: spec.context, log });
}
