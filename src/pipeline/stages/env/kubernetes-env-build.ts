// The env builder's adapter for the Kubernetes executor: every step of a build (uv, setup.py, repgen.yml build
// commands) runs as a Job in the repro namespace on the env cache's RWX claim (src/exec/kubernetes/env-build-runner.ts),
// never in the worker's pod, which holds RepGen's secrets and cannot run bubblewrap under a restricted policy.
import type { KubeConfig } from '@kubernetes/client-node';
import { BUILD_MEMORY_BYTES, type BuildStepRunner } from '../../../env/sandboxed/sandboxed-command.js';
import { UvEnvBuilder } from '../../../env/uv-builder.js';
import type { KubernetesConfig } from '../../../exec/kubernetes/config.js';
import { createKubernetesBuildRunner } from '../../../exec/kubernetes/env-build-runner.js';
import { probeSandbox } from '../../../exec/sandbox/sandbox.js';
import type { Logger } from '../../../log.js';

export interface KubernetesEnvBuildOptions {
  config: KubernetesConfig;
  cacheRoot: string;
  uv: string;
  basePython: string;
  workRoot: string;
  log: Logger;
  kubeConfig?: KubeConfig;
  /** How often a step's Job is looked at. @defaultValue 1000 */
  tickMs?: number;
}

/** The build pods' uid: the worker's own, so the worker can publish and remove what they write; never root. */
export function buildPodUid(config: KubernetesConfig): number {
  const me = process.geteuid?.() ?? config.runAsUser;
  return me === 0 ? config.runAsUser : me;
}

/** A BuildStepRunner that hands each step to a Job (no local sandbox: the pod is the boundary). */
export function kubernetesStepRunner(opts: KubernetesEnvBuildOptions): BuildStepRunner {
  const run = createKubernetesBuildRunner({
    config: opts.config,
    cacheRoot: opts.cacheRoot,
    runAsUser: buildPodUid(opts.config),
    log: opts.log,
    ...(opts.kubeConfig ? { kubeConfig: opts.kubeConfig } : {}),
    ...(opts.tickMs ? { tickMs: opts.tickMs } : {}),
  });
  return (cmd) =>
    run(
      {
        argv: cmd.argv,
        env: cmd.env,
        writable: cmd.writable,
        offline: cmd.offline ?? false,
        readOnly: cmd.readOnlyPaths,
        timeoutMs: cmd.timeoutMs,
        memoryBytes: cmd.memoryBytes ?? BUILD_MEMORY_BYTES,
      },
      cmd.signal,
    );
}

/**
 * The uv builder with its steps on Kubernetes, the compile of the project's own C/C++ extensions included: it runs on
 * a copy of the checkout under the cache's `work/` folder, which the build pod mounts, with the env's interpreter
 * mounted read-only from `envs/`.
 */
export async function kubernetesEnvBuilder(opts: KubernetesEnvBuildOptions): Promise<UvEnvBuilder> {
  const none = await probeSandbox('none', { workRoot: opts.workRoot });
  const uid = buildPodUid(opts.config);
  // As root, RepGen hands the cache's folders to the pods' uid, as it does to the local sandbox's.
  const plan = { ...none, runAs: process.geteuid?.() === 0 ? { uid, gid: uid } : null, notes: [] };
  return new UvEnvBuilder({
    cacheRoot: opts.cacheRoot,
    uv: opts.uv,
    basePython: opts.basePython,
    plan,
    runner: kubernetesStepRunner(opts),
  });
}
