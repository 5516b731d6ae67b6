import { z } from 'zod';
import { SetupError } from '../errors.js';
import type { Logger } from '../log.js';
import { LocalExecConfig, readLocalExecConfig } from './config.js';
import { KubernetesExecConfig, readKubernetesConfig } from './kubernetes-config.js';
import type { ScriptExecutor } from './types.js';

export type { ScriptExecutor, RunRequest, RunRequestInput, RunResult } from './types.js';
export { LocalExecConfig, readLocalExecConfig } from './config.js';
export { KubernetesExecConfig, readKubernetesConfig } from './kubernetes-config.js';

/**
 * Which executor runs candidate scripts, chosen by `kind`. Each adapter declares its own config schema next to
 * its code; add one by appending it to the union and a `case` to createExecutor.
 *
 * The Kubernetes kind's `case` does `await import('./kubernetes.js')`, so @kubernetes/client-node loads only
 * when chosen.
 */
export const ExecConfig = z.discriminatedUnion('kind', [LocalExecConfig, KubernetesExecConfig]);
export type ExecConfig = z.infer<typeof ExecConfig>;

export interface ExecutorDeps {
  /** @defaultValue silentLogger */
  log?: Logger;
}

/** Builds the configured executor. Heavy adapters are imported only when their kind is chosen. */
export async function createExecutor(cfg: ExecConfig, deps: ExecutorDeps = {}): Promise<ScriptExecutor> {
  switch (cfg.kind) {
    case 'local': {
      const { createLocalExecutor } = await import('./local.js');
      return createLocalExecutor(cfg, deps);
    }
    case 'kubernetes': {
      // Loads @kubernetes/client-node (and undici) only when a cluster is the executor.
      const { createKubernetesExecutor } = await import('./kubernetes.js');
      return createKubernetesExecutor({ config: cfg, ...(deps.log ? { log: deps.log } : {}) });
    }
  }
}

const ExecutorKindEnv = z.object({ REPGEN_EXECUTOR: z.string().optional() });

/** The executor kinds readExecConfig knows; kept in step with ExecConfig. */
export const EXECUTOR_KINDS = ExecConfig.options.map((o) => o.shape.kind.value);

/** Reads `REPGEN_EXECUTOR` (default `local`) and that executor's own settings. */
export function readExecConfig(env: NodeJS.ProcessEnv = process.env): ExecConfig {
  const kind = ExecutorKindEnv.parse(env).REPGEN_EXECUTOR ?? 'local';
  switch (kind) {
    case 'local':
      return readLocalExecConfig(env);
    case 'kubernetes':
      return readKubernetesConfig(env);
    default:
      throw new SetupError(`unknown REPGEN_EXECUTOR '${kind}' (valid: ${EXECUTOR_KINDS.join(', ')})`);
  }
}
