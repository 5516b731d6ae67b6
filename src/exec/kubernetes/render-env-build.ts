import type { V1Job } from '@kubernetes/client-node';
import { posix } from 'node:path';
import { InvalidRunRequestError, ProjectEnvUnavailableError } from '../errors.js';
import { chooseImageRule, type KubernetesConfig } from './config.js';
import { containerSecurity, jobMetadata, MANAGED_BY, NETWORK_LABEL, RUN_ID_LABEL, untrustedPodBasics } from './render.js';

/**
 * One step of an env build (a uv command, a repgen.yml build command) as a batch/v1 Job in the repro namespace. Pure,
 * like render.ts. The step runs third-party code (setup.py, build backends), so its pod holds nothing of the worker's:
 * no service-account token, no Service links, an environment of exactly the step's variables (uv-run.ts
 * uvEnvironment: no token, no key), not root, no capability, a read-only root. The only thing it writes is the env
 * cache's `work/` folder (uv's cache and the build folders), from the RWX claim, mounted at the same path as in the
 * worker so every path of the command holds unchanged; finished envs (`envs/`) and compiled locks (`locks/`) are not
 * mounted at all. Its egress is the NetworkPolicy of the `env-build` network label (k8s/components/env-cache: DNS
 * and the package index), or none for a step that installs from uv's cache alone.
 */

export const ENV_BUILD_CONTAINER = 'env-build';
export const ENV_BUILD_ROLE_LABEL = 'repgen.dev/role';
/** The label value k8s/components/env-cache's NetworkPolicy lets reach the index. */
export const ENV_BUILD_NETWORK = 'env-build';
const CACHE_VOLUME = 'env-cache';

/** What one build step is, as the builder describes it (src/env/sandboxed/sandboxed-command.ts SandboxedCommand, less the local sandbox). */
export interface EnvBuildStep {
  argv: string[];
  env: Record<string, string>;
  /** The one folder the step may write: the env cache's `work/` folder or under it. */
  writable: string;
  /** No network at all (installing from uv's cache). */
  offline: boolean;
  /**
   * Paths the step reads. Those of finished envs (`<cacheRoot>/envs/<key>`: the interpreter that compiles the
   * project's extensions) are mounted from the claim read-only, each alone; the rest (uv, the base interpreter) are
   * the image's. @defaultValue []
   */
  readOnly?: string[];
  timeoutMs: number;
  memoryBytes: number;
}

export interface EnvBuildJobOptions {
  /** Lower-case id unique to the step; names the Job `repgen-build-<stepId>`. */
  stepId: string;
  /** The worker's REPGEN_ENV_CACHE: the claim's root as the worker mounts it. */
  cacheRoot: string;
  /** The folder (under `writable`) the step's stdout and stderr go to, as files the worker reads from the claim. */
  outputDir: string;
  /** The pod's uid: the worker's own, so it can publish and remove what the step wrote. */
  runAsUser: number;
}

/** How long a step may wait for its image and node before its deadline counts against the step's own time. */
export const STEP_START_SLACK_SECONDS = 120;

export const STEP_WRAPPER = 'o="$1"; shift; exec "$@" >"$o/out" 2>"$o/err"';

export function renderEnvBuildJob(step: EnvBuildStep, config: KubernetesConfig, options: EnvBuildJobOptions): V1Job {
  const claim = config.envBuildClaim;
  if (!claim) {
    throw new ProjectEnvUnavailableError(
      'an env build on Kubernetes needs a ReadWriteMany claim on the env cache in the repro namespace: ' +
        'set REPGEN_K8S_ENV_BUILD_CLAIM (k8s/components/env-cache)',
    );
  }
  const rule = chooseImageRule(config.images, { gpus: 0, projectEnv: true });
  if (!rule) {
    throw new ProjectEnvUnavailableError(
      'an env build on Kubernetes runs on the image that holds the worker\'s base interpreter and uv: add a row with "projectEnv": true to REPGEN_K8S_IMAGES',
    );
  }
  const work = posix.join(options.cacheRoot, 'work');
  for (const [what, path] of [
    ['the folder the step writes', step.writable],
    ['the step output folder', options.outputDir],
  ] as const) {
    const rel = posix.relative(work, posix.normalize(path));
    if (!posix.isAbsolute(path) || rel.startsWith('..') || posix.isAbsolute(rel)) {
      throw new InvalidRunRequestError(`${what} (${path}) is not under the env cache's work folder ${work}: a build pod writes only there`);
    }
  }
  const name = `repgen-build-${options.stepId}`;
  const labels: Record<string, string> = {
    ...MANAGED_BY,
    'app.kubernetes.io/name': 'repgen-env-build',
    [RUN_ID_LABEL]: options.stepId,
    [ENV_BUILD_ROLE_LABEL]: 'env-build',
    [NETWORK_LABEL]: step.offline ? 'none' : ENV_BUILD_NETWORK,
  };
  const memory = `${Math.ceil(step.memoryBytes / 1024 ** 2)}Mi`;
  const resources = { cpu: config.cpu, memory, 'ephemeral-storage': config.ephemeralStorage };
  const [command, ...args] = ['/bin/sh', '-c', STEP_WRAPPER, 'repgen-build-step', options.outputDir, ...step.argv];
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: jobMetadata(name, labels, config),
    spec: {
      backoffLimit: 0,
      activeDeadlineSeconds: Math.ceil(step.timeoutMs / 1000) + STEP_START_SLACK_SECONDS,
      ttlSecondsAfterFinished: config.ttlSecondsAfterFinished,
      template: {
        metadata: { labels },
        spec: {
          ...untrustedPodBasics(config),
          securityContext: {
            runAsNonRoot: true,
            runAsUser: options.runAsUser,
            runAsGroup: options.runAsUser,
            seccompProfile: { type: 'RuntimeDefault' },
          },
          containers: [
            {
              name: ENV_BUILD_CONTAINER,
              image: rule.image,
              imagePullPolicy: 'IfNotPresent',
              command: [command as string],
              args,
              workingDir: step.writable,
              // Exactly the step's variables: the image's own ENV lines aside, nothing else reaches setup.py.
              env: Object.entries(step.env).map(([k, v]) => ({ name: k, value: v })),
              resources: { requests: { ...resources }, limits: { ...resources } },
              securityContext: containerSecurity(options.runAsUser),
              volumeMounts: [
                { name: CACHE_VOLUME, mountPath: work, subPath: 'work' },
                ...envMounts(step.readOnly ?? [], options.cacheRoot),
                { name: 'tmp', mountPath: '/tmp' },
              ],
            },
          ],
          volumes: [
            { name: CACHE_VOLUME, persistentVolumeClaim: { claimName: claim } },
            { name: 'tmp', emptyDir: { sizeLimit: '1Gi' } },
          ],
        },
      },
    },
  };
}

/** Finished envs the step reads, each mounted alone and read-only at its own path; anything else is the image's. */
function envMounts(paths: readonly string[], cacheRoot: string) {
  const envs = posix.join(cacheRoot, 'envs');
  return [...new Set(paths.map((p) => posix.normalize(p)))]
    .filter((p) => {
      const rel = posix.relative(envs, p);
      return rel !== '' && !rel.startsWith('..') && !posix.isAbsolute(rel) && !rel.includes('/');
    })
    .map((p) => ({ name: CACHE_VOLUME, mountPath: p, subPath: posix.relative(cacheRoot, p), readOnly: true }));
}
