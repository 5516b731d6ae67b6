import { isIP } from 'node:net';
import type { KubeConfig } from '@kubernetes/client-node';
import { z } from 'zod';
import { SetupError } from '../errors.js';
import { silentLogger, type Logger } from '../log.js';
import { LocalExecConfig, readLocalExecConfig } from './config.js';
import { KubernetesExecConfig, readKubernetesConfig, type KubernetesConfig } from './kubernetes/config.js';
import type { ScriptExecutor } from './types.js';

export type { ScriptExecutor, RunRequest, RunRequestInput, RunResult } from './types.js';
export { LocalExecConfig, readLocalExecConfig } from './config.js';
export { KubernetesExecConfig, readKubernetesConfig } from './kubernetes/config.js';

/**
 * Which executor runs candidate scripts, chosen by `kind`. Each adapter declares its own config schema next to
 * its code; add one by appending it to the union and a `case` to createExecutor.
 *
 * The Kubernetes kind's `case` does `await import('./kubernetes/executor.js')`, so @kubernetes/client-node loads only
 * when chosen.
 */
export const ExecConfig = z.discriminatedUnion('kind', [LocalExecConfig, KubernetesExecConfig]);
export type ExecConfig = z.infer<typeof ExecConfig>;

export interface ExecutorDeps {
  /** @defaultValue silentLogger */
  log?: Logger;
  /** Cluster access of the Kubernetes kind (tests). @defaultValue KubeConfig.loadFromDefault() */
  kubeConfig?: KubeConfig;
}

/** Builds the configured executor. Heavy adapters are imported only when their kind is chosen. */
export async function createExecutor(cfg: ExecConfig, deps: ExecutorDeps = {}): Promise<ScriptExecutor> {
  switch (cfg.kind) {
    case 'local': {
      const { createLocalExecutor } = await import('./local/executor.js');
      return createLocalExecutor(cfg, deps);
    }
    case 'kubernetes':
      return createKubernetes(cfg, deps);
  }
}

/**
 * The Kubernetes executor with the worker's workspace server: repro pods fetch the checkout from it (one-time
 * tar offers, kubernetes/workspace.ts). Without REPGEN_K8S_WORKSPACE_URL there is no server, and the renderer
 * refuses a run with a workspace by naming the variable rather than run the script without its project.
 */
async function createKubernetes(cfg: KubernetesConfig, deps: ExecutorDeps): Promise<ScriptExecutor> {
  // Loads @kubernetes/client-node (and undici) only when a cluster is the executor.
  const [{ createKubernetesExecutor }, { WorkspaceServer }] = await Promise.all([
    import('./kubernetes/executor.js'),
    import('./kubernetes/workspace.js'),
  ]);
  const log = deps.log ?? silentLogger;
  const options = { config: cfg, log, ...(deps.kubeConfig ? { kubeConfig: deps.kubeConfig } : {}) };
  if (!cfg.workspaceUrl) {
    log.warn({}, "REPGEN_K8S_WORKSPACE_URL is not set: Kubernetes runs that need the project's checkout will be refused");
    return createKubernetesExecutor(options);
  }
  const host = new URL(cfg.workspaceUrl).hostname.replace(/^\[|\]$/g, '');
  if (!isIP(host)) {
    // k8s/base gives repro pods no DNS, and a Service would send a fetch to a replica that holds no offer.
    log.warn(
      { host },
      'REPGEN_K8S_WORKSPACE_URL names a host, not an IP: repro pods must resolve it and reach this very worker (k8s/ uses the pod IP)',
    );
  }
  const server = new WorkspaceServer({ publicUrl: cfg.workspaceUrl, port: cfg.workspacePort });
  try {
    await server.start();
  } catch (err) {
    throw new SetupError(
      `cannot open the workspace port ${cfg.workspacePort} (REPGEN_K8S_WORKSPACE_PORT): ${err instanceof Error ? err.message : String(err)}`,
    );
  }
  log.info({ port: server.port, url: cfg.workspaceUrl }, 'workspace server listening');
  const executor = createKubernetesExecutor({ ...options, workspaceServer: server });
  return {
    name: executor.name,
    run: (request, signal) => executor.run(request, signal),
    close: async () => {
      await executor.close?.();
      await server.close();
    },
  };
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
