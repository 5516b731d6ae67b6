import type { V1ConfigMap, V1EnvVar, V1Job } from '@kubernetes/client-node';
import { stringify } from 'yaml';
import { InvalidRunRequestError, ProjectEnvUnavailableError } from '../errors.js';
import { chooseImageRule, type KubernetesConfig } from './config.js';
import { RUNNER_PY, type RunnerRequest } from './runner.js';
import { buildPortableEnv } from '../sandbox/script-env.js';
import { FETCH_WORKSPACE_PY } from './workspace.js';
import { DEFAULT_WORKSPACE_MOUNT, type RunRequest } from '../types.js';

/**
 * RunRequest → the two objects a run creates: a ConfigMap (runner, request, script files) and a batch/v1 Job.
 * Pure: no API calls, so `repgen k8s render` prints exactly what the executor would apply.
 */

/** Where things live inside the repro container. The root filesystem is read-only; these are volumes. */
export const PATHS = { config: '/repgen', work: '/work', tmp: '/tmp', shm: '/dev/shm' } as const;
export const CONTAINER_NAME = 'repro';
export const RUN_ID_LABEL = 'repgen.dev/run-id';
export const NETWORK_LABEL = 'repgen.dev/network';
/** Pods that fetch a workspace: the NetworkPolicy lets them reach the worker's workspace port, nothing else. */
export const WORKSPACE_LABEL = 'repgen.dev/workspace';
export const WORKSPACE_INIT_NAME = 'workspace';
export const MANAGED_BY = { 'app.kubernetes.io/managed-by': 'repgen', 'app.kubernetes.io/name': 'repgen-repro' } as const;

/** A ConfigMap holds at most 1 MiB; leave room for the runner and metadata. */
export const MAX_CONFIGMAP_BYTES = 900_000;

export interface RenderedRun {
  name: string;
  namespace: string;
  image: string;
  configMap: V1ConfigMap;
  job: V1Job;
  /** Caveats for the result's isolation notes (refused env names). */
  notes: string[];
}

export interface RenderOptions {
  /** Lower-case id unique to the run; names the Job and ConfigMap `repgen-<runId>`. */
  runId: string;
  /** Host environment for `envAllowlist` (the worker's own env). @defaultValue {} */
  hostEnv?: NodeJS.ProcessEnv;
  /** The worker's one-time offer of the request's workspace (workspace.ts); required when the request has one. */
  workspace?: { url: string; token: string };
}

/** Kubernetes label values: ≤ 63 chars of [A-Za-z0-9._-], alphanumeric at both ends. */
export function toLabelValue(value: string): string {
  const cleaned = value.replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^[^A-Za-z0-9]+/, '');
  return cleaned.slice(0, 63).replace(/[^A-Za-z0-9]+$/, '');
}

/** `job` → `repgen.dev/job`; a key that already has a prefix keeps it. Invalid names are cleaned, not rejected. */
export function toLabelKey(key: string): string {
  const [prefix, name] = key.includes('/') ? [key.slice(0, key.indexOf('/')), key.slice(key.indexOf('/') + 1)] : ['repgen.dev', key];
  const cleanPrefix =
    prefix
      .toLowerCase()
      .replace(/[^a-z0-9.-]+/g, '-')
      .slice(0, 253) || 'repgen.dev';
  return `${cleanPrefix}/${toLabelValue(name) || 'label'}`;
}

function requestLabels(labels: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(labels)) out[toLabelKey(k)] = toLabelValue(v);
  return out;
}

/**
 * The container's environment: the local executor's (buildPortableEnv), except PATH, which stays the image's
 * own (conda images keep python in /opt/conda/bin). Returns notes for names it refused.
 */
export function buildContainerEnv(
  request: RunRequest,
  hostEnv: NodeJS.ProcessEnv,
  outDir: string,
  cpu?: string,
): { env: V1EnvVar[]; notes: string[] } {
  const threads = cpu === undefined ? undefined : cpuThreads(cpu);
  const { env, notes } = buildPortableEnv({ ...request, hostEnv, home: PATHS.work, tmpDir: PATHS.tmp, threads });
  // Set last: the runner and the result collection rely on these, a request must not move them.
  env.REPGEN_WORKDIR = PATHS.work;
  env.REPGEN_OUT = outDir;
  return { env: Object.entries(env).map(([name, value]) => ({ name, value })), notes };
}

/** Threads that fit a container's CPU limit (a Kubernetes quantity: `2`, `1.5`, `500m`): at least one. */
export function cpuThreads(cpu: string): number | undefined {
  const m = /^(\d+(?:\.\d+)?)(m?)$/.exec(cpu.trim());
  if (!m) return undefined;
  const cores = Number(m[1]) / (m[2] === 'm' ? 1000 : 1);
  return Math.max(1, Math.floor(cores));
}

/** Builds the ConfigMap and Job for a run. Throws InvalidRunRequestError for what no cluster could run. */
export function renderRun(request: RunRequest, config: KubernetesConfig, options: RenderOptions): RenderedRun {
  if (!request.files.some((f) => f.path === request.entry)) {
    throw new InvalidRunRequestError(`entry '${request.entry}' is not among the request's files`);
  }
  const projectEnv = projectEnvMount(request, config);
  const rule = chooseImageRule(config.images, {
    image: request.image,
    gpus: request.gpus,
    versions: request.versions,
    projectEnv: projectEnv !== null,
  });
  if (projectEnv && !rule?.projectEnv) {
    throw new ProjectEnvUnavailableError(
      `this run needs the project's environment (${projectEnv.mountPath}), and ${rule ? `the image ${rule.image}` : 'no image'} can run it: ` +
        'add a row with "projectEnv": true to REPGEN_K8S_IMAGES for an image with the worker\'s base interpreter (REPGEN_PYTHON) at the same path',
    );
  }
  const image = rule?.image ?? null;
  if (!image) {
    throw new InvalidRunRequestError(
      `no image in the image table fits ${JSON.stringify(request.versions ?? {})} (gpus=${request.gpus}); set REPGEN_K8S_IMAGES or the repo config's image`,
    );
  }
  if (request.workspace && !options.workspace) {
    throw new InvalidRunRequestError(
      "a Kubernetes run with a workspace needs the worker's workspace server (set REPGEN_K8S_WORKSPACE_URL)",
    );
  }
  const name = `repgen-${options.runId}`;
  const gpu = request.gpus > 0;
  const outDir = `${PATHS.work}/.repgen/out`;
  const workspaceMount = request.workspace ? (request.workspace.mountPath ?? DEFAULT_WORKSPACE_MOUNT) : null;
  const containerEnv = buildContainerEnv(
    workspaceMount
      ? {
          ...request,
          env: {
            ...request.env,
            PYTHONPATH: [workspaceMount, request.env.PYTHONPATH].filter(Boolean).join(':'),
            REPGEN_WORKSPACE: workspaceMount,
          },
        }
      : request,
    options.hostEnv ?? {},
    outDir,
    config.cpu,
  );
  const runner: RunnerRequest = {
    entry: request.entry,
    args: request.args,
    interpreter: request.interpreter ?? config.python,
    setup: request.setup,
    timeoutMs: request.limits.timeoutMs,
    cpuSeconds: request.limits.cpuSeconds,
    maxOutputBytes: request.limits.maxOutputBytes,
    inlineFileBytes: config.inlineFileBytes,
    maxOutputFiles: config.maxOutputFiles,
    files: request.files.map((f, i) => ({ key: `file-${i}`, path: f.path })),
  };
  const data: Record<string, string> = { 'runner.py': RUNNER_PY, 'request.json': JSON.stringify(runner, null, 2) };
  request.files.forEach((f, i) => {
    data[`file-${i}`] = f.content;
  });
  if (workspaceMount) data['fetch_workspace.py'] = FETCH_WORKSPACE_PY;
  const size = Object.values(data).reduce((n, v) => n + Buffer.byteLength(v), 0);
  if (size > MAX_CONFIGMAP_BYTES) {
    throw new InvalidRunRequestError(`the run's files take ${size} bytes; a Kubernetes run holds at most ${MAX_CONFIGMAP_BYTES}`);
  }

  const labels: Record<string, string> = {
    ...requestLabels(request.labels),
    ...MANAGED_BY,
    [RUN_ID_LABEL]: options.runId,
    // Selected by the optional egress allowlist NetworkPolicy; everything else in the namespace has no egress.
    [NETWORK_LABEL]: request.network ? 'allowlist' : 'none',
    ...(workspaceMount ? { [WORKSPACE_LABEL]: 'fetch' } : {}),
  };
  const annotations = { 'repgen.dev/entry': request.entry, 'repgen.dev/labels': JSON.stringify(request.labels) };
  const memory = `${request.limits.memoryMb}Mi`;
  const resources: Record<string, string> = { cpu: config.cpu, memory, 'ephemeral-storage': config.ephemeralStorage };
  if (gpu) resources[config.gpuResource] = String(request.gpus);
  // Past the script's own timeout (enforced by the runner) the deadline also covers scheduling, pull and setup.
  const activeDeadlineSeconds = Math.ceil(request.limits.timeoutMs / 1000) + config.deadlineSlackSeconds;

  const configMap: V1ConfigMap = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, namespace: config.namespace, labels, annotations },
    data,
  };
  const job: V1Job = {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { ...jobMetadata(name, labels, config), annotations },
    spec: {
      backoffLimit: 0,
      activeDeadlineSeconds,
      ttlSecondsAfterFinished: config.ttlSecondsAfterFinished,
      template: {
        metadata: { labels, annotations },
        spec: {
          ...untrustedPodBasics(config),
          ...(gpu ? { nodeSelector: config.gpuNodeSelector, tolerations: config.gpuTolerations } : {}),
          securityContext: {
            runAsNonRoot: true,
            runAsUser: config.runAsUser,
            runAsGroup: config.runAsUser,
            fsGroup: config.runAsUser,
            seccompProfile: { type: 'RuntimeDefault' },
          },
          ...(workspaceMount && options.workspace
            ? {
                // Runs to completion before the script's container starts; its token is the only credential in
                // the pod, set on this container alone and used up by its one fetch.
                initContainers: [
                  {
                    name: WORKSPACE_INIT_NAME,
                    image,
                    imagePullPolicy: 'IfNotPresent',
                    command: [runner.interpreter, `${PATHS.config}/fetch_workspace.py`, workspaceMount],
                    env: [
                      { name: 'REPGEN_WORKSPACE_URL', value: options.workspace.url },
                      { name: 'REPGEN_WORKSPACE_TOKEN', value: options.workspace.token },
                      { name: 'HOME', value: PATHS.tmp },
                    ],
                    resources: { requests: { cpu: '500m', memory: '512Mi' }, limits: { cpu: '1', memory: '1Gi' } },
                    securityContext: containerSecurity(config.runAsUser),
                    volumeMounts: [
                      { name: 'repgen', mountPath: PATHS.config, readOnly: true },
                      { name: 'workspace', mountPath: workspaceMount },
                      { name: 'tmp', mountPath: PATHS.tmp },
                      ...(projectEnv ? [projectEnv] : []),
                    ],
                  },
                ],
              }
            : {}),
          containers: [
            {
              name: CONTAINER_NAME,
              image,
              imagePullPolicy: 'IfNotPresent',
              command: [runner.interpreter, `${PATHS.config}/runner.py`, PATHS.config],
              workingDir: PATHS.work,
              env: containerEnv.env,
              resources: { requests: { ...resources }, limits: { ...resources } },
              securityContext: containerSecurity(config.runAsUser),
              volumeMounts: [
                { name: 'repgen', mountPath: PATHS.config, readOnly: true },
                { name: 'work', mountPath: PATHS.work },
                { name: 'tmp', mountPath: PATHS.tmp },
                { name: 'dshm', mountPath: PATHS.shm },
                ...(workspaceMount ? [{ name: 'workspace', mountPath: workspaceMount, readOnly: true }] : []),
                ...(projectEnv ? [projectEnv] : []),
              ],
            },
          ],
          volumes: [
            { name: 'repgen', configMap: { name, defaultMode: 0o444 } },
            { name: 'work', emptyDir: { sizeLimit: config.ephemeralStorage } },
            { name: 'tmp', emptyDir: { sizeLimit: '1Gi' } },
            // PyTorch DataLoader workers share tensors through /dev/shm; the runtime's default is 64 MiB.
            { name: 'dshm', emptyDir: { medium: 'Memory', sizeLimit: `${Math.max(64, Math.floor(request.limits.memoryMb / 2))}Mi` } },
            ...(workspaceMount ? [{ name: 'workspace', emptyDir: { sizeLimit: config.ephemeralStorage } }] : []),
            // The worker's env cache, read-only: the pod sees only its own env's folder (the mount's subPath).
            ...(projectEnv && config.envCacheClaim
              ? [{ name: PROJECT_ENV_VOLUME, persistentVolumeClaim: { claimName: config.envCacheClaim, readOnly: true } }]
              : []),
          ],
        },
      },
    },
  };
  return { name, namespace: config.namespace, image, configMap, job, notes: containerEnv.notes };
}

const PROJECT_ENV_VOLUME = 'project-env';

/**
 * Where a run in the project's built env gets it: the env's folder, from the env cache volume, at the same path the
 * worker built it at (the venv's interpreter and `.pth` name that path). Null for a run on the image's own Python.
 */
function projectEnvMount(
  request: RunRequest,
  config: KubernetesConfig,
): { name: string; mountPath: string; subPath: string; readOnly: true } | null {
  const env = request.interpreterEnv;
  if (!env) return null;
  const subPath = env.dir.startsWith(`${env.cacheRoot}/`) ? env.dir.slice(env.cacheRoot.length + 1) : '';
  if (!subPath || subPath.split('/').some((p) => p === '..' || p === '.' || p === '')) {
    throw new InvalidRunRequestError(`the project env ${env.dir} does not lie under its cache root ${env.cacheRoot}`);
  }
  if (!config.envCacheClaim) {
    throw new ProjectEnvUnavailableError(
      `this run needs the project's environment (${env.dir}), which a repro pod can only get from the env cache volume: ` +
        "set REPGEN_K8S_ENV_CACHE_CLAIM to the PersistentVolumeClaim holding the worker's REPGEN_ENV_CACHE (k8s/components/env-cache)",
    );
  }
  return { name: PROJECT_ENV_VOLUME, mountPath: env.dir, subPath, readOnly: true };
}

/** The YAML `kubectl apply -f -` would take: the ConfigMap, then the Job. */
export function renderYaml(run: RenderedRun): string {
  return [run.configMap, run.job].map((doc) => stringify(doc, { lineWidth: 0, aliasDuplicateObjects: false })).join('---\n');
}

/** A Job's name, namespace and labels; with Kueue, the queue label that admits it. */
export function jobMetadata(name: string, labels: Record<string, string>, config: KubernetesConfig) {
  return {
    name,
    namespace: config.namespace,
    labels: { ...labels, ...(config.kueueQueue ? { 'kueue.x-k8s.io/queue-name': config.kueueQueue } : {}) },
  };
}

/**
 * What every pod that runs untrusted code (a script, an env build step) has: no restarts, no service-account token,
 * no Service links (they would put every Service's address in its environment), a short grace, the operator's
 * priority class and pull secret.
 */
export function untrustedPodBasics(config: KubernetesConfig) {
  return {
    restartPolicy: 'Never',
    automountServiceAccountToken: false,
    enableServiceLinks: false,
    terminationGracePeriodSeconds: 5,
    ...(config.priorityClassName ? { priorityClassName: config.priorityClassName } : {}),
    ...(config.imagePullSecret ? { imagePullSecrets: [{ name: config.imagePullSecret }] } : {}),
  };
}

/** Every container of a run: not root, no privilege, no capability, read-only root, the runtime's seccomp profile. */
export function containerSecurity(runAsUser: number) {
  return {
    runAsNonRoot: true,
    runAsUser,
    allowPrivilegeEscalation: false,
    privileged: false,
    readOnlyRootFilesystem: true,
    capabilities: { drop: ['ALL'] },
    seccompProfile: { type: 'RuntimeDefault' },
  };
}
