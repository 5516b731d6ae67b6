import { readOperatorEnv, type OperatorEnv } from '../src/config/operator-env.js';
import { createExecutor, type ExecConfig, type ScriptExecutor } from '../src/exec/index.js';
import { withPolicy } from '../src/exec/with-policy.js';
import type { PipelineRequest, RunPipeline } from '../src/github/process-repro-job.js';
import { createLlmClient } from '../src/llm/index.js';
import type { LlmClient } from '../src/llm/types.js';
import type { Logger } from '../src/log.js';
import { runRepro, type BuildContextFn } from '../src/pipeline/run-repro.js';
import { llmChoice, resolveRunSpec, type RunSpec } from '../src/pipeline/run-spec.js';

/**
 * The worker's pipeline: the same `runRepro` as `repgen reproduce`, with one run spec per job
 * (`resolveRunSpec`: the operator's settings as ceilings, the repository's `.github/repgen.yml` and the
 * `/repgen` flags below them) and the repository's policy imposed on every script run by `withPolicy`.
 */
export interface PipelineWiring {
  env: NodeJS.ProcessEnv;
  log: Logger;
  /** Tests inject these; production builds them from the run spec. */
  executor?: ScriptExecutor;
  llm?: LlmClient | null;
  buildContext?: BuildContextFn;
}

/** Picks the executor of a kind; close() stops those it made (the local warm pool's sandboxes) at shutdown. */
export type ExecutorChooser = ((cfg: ExecConfig) => Promise<ScriptExecutor>) & { close(): Promise<void> };

/** The executor of each kind, made once per process: reproductions and fix checks share them. */
export function executorChooser(wiring: Pick<PipelineWiring, 'log' | 'executor'>): ExecutorChooser {
  const executors = new Map<string, Promise<ScriptExecutor>>();
  const choose = (cfg: ExecConfig): Promise<ScriptExecutor> => {
    if (wiring.executor) return Promise.resolve(wiring.executor);
    let made = executors.get(cfg.kind);
    if (!made) {
      made = createExecutor(cfg, { log: wiring.log });
      executors.set(cfg.kind, made);
    }
    return made;
  };
  const close = async (): Promise<void> => {
    const made = await Promise.allSettled([...executors.values()]);
    executors.clear();
    await Promise.all(made.map((m) => (m.status === 'fulfilled' ? m.value.close?.().catch(() => undefined) : undefined)));
  };
  return Object.assign(choose, { close });
}

export function wirePipeline(wiring: PipelineWiring, executorFor = executorChooser(wiring)): RunPipeline {
  // Read once: a bad variable stops the worker at start, not at its first job.
  const operator: OperatorEnv = readOperatorEnv(wiring.env);
  return async (request, progress, signal) => {
    const spec = specFor(operator, request);
    for (const note of spec.notes) wiring.log.info({ jobId: request.jobId, note }, 'run spec');
    const { llm, reason } = await llmFor(spec, wiring);
    const executor = withPolicy(await executorFor(spec.executor), spec.policy);
    const buildContext = wiring.buildContext ?? (await contextBuilder(spec, wiring.log));
    return runRepro(
      { issue: request.issue, repoDir: request.repoDir, settings: spec.settings },
      { executor, llm, llmReason: reason, buildContext, log: wiring.log, progress },
      signal,
    );
  };
}

/** The job's run spec: operator ceilings, the repository's config, the `/repgen` flags. */
export function specFor(operator: OperatorEnv, request: Pick<PipelineRequest, 'config' | 'gpu' | 'jobId' | 'llm'>): RunSpec {
  return resolveRunSpec(operator, request.config, { gpu: request.gpu, jobId: request.jobId, ...llmChoice(request.llm) });
}

async function llmFor(spec: RunSpec, wiring: PipelineWiring): Promise<{ llm: LlmClient | null; reason: string }> {
  if (wiring.llm !== undefined)
    return { llm: wiring.llm, reason: wiring.llm ? `${wiring.llm.provider} ${wiring.llm.model}` : 'no LLM configured' };
  const llm = await createLlmClient(spec.llm, { log: wiring.log });
  return { llm, reason: llm ? `${llm.provider} ${llm.model}` : (spec.llm.reason ?? 'no LLM configured') };
}

async function contextBuilder(spec: RunSpec, log: Logger): Promise<BuildContextFn> {
  const { buildContext } = await import('../src/context/index.js');
  return (input) => buildContext(input, { settings: spec.context, log });
}
