import { z } from 'zod';
import { ImageRule, KubernetesEnv, Toleration, WorkspaceUrl } from '../../config/env/kubernetes-env.js';
import { parseEnv } from '../../config/operator-env.js';

/**
 * Settings of the Kubernetes executor, read from the environment once (`readKubernetesSettings(env)`).
 * JSON-valued settings (image table, node selector, tolerations) are parsed and validated here so that a
 * typo fails at startup with the variable's name, never at the first GPU run.
 */

export { ImageRule, Toleration } from '../../config/env/kubernetes-env.js';

/**
 * The built-in table: official PyTorch and TensorFlow images. The PyTorch images carry CUDA but run on CPU nodes
 * too, so one image per torch version serves both; TensorFlow ships separate `-gpu` images. Keras 2 is the
 * `tf.keras` of TensorFlow ≤ 2.15, Keras 3 ships with TensorFlow ≥ 2.16 (a Keras 3 run on the torch or JAX backend
 * names that framework's version too, and its row comes first when it names torch). JAX has no official image: a
 * CPU run gets a plain Python image and the environment builder installs jax; for GPUs, add a row of your own.
 */
export const DEFAULT_IMAGE_TABLE: ImageRule[] = [
  { match: { tensorflow: '2.20' }, gpu: true, image: 'tensorflow/tensorflow:2.20.0-gpu' },
  { match: { tensorflow: '2.20' }, gpu: false, image: 'tensorflow/tensorflow:2.20.0' },
  { match: { tensorflow: '2.19' }, gpu: true, image: 'tensorflow/tensorflow:2.19.0-gpu' },
  { match: { tensorflow: '2.19' }, gpu: false, image: 'tensorflow/tensorflow:2.19.0' },
  { match: { tensorflow: '2.18' }, gpu: true, image: 'tensorflow/tensorflow:2.18.0-gpu' },
  { match: { tensorflow: '2.18' }, gpu: false, image: 'tensorflow/tensorflow:2.18.0' },
  { match: { tensorflow: '2.17' }, gpu: true, image: 'tensorflow/tensorflow:2.17.0-gpu' },
  { match: { tensorflow: '2.17' }, gpu: false, image: 'tensorflow/tensorflow:2.17.0' },
  { match: { tensorflow: '2.16' }, gpu: true, image: 'tensorflow/tensorflow:2.16.1-gpu' },
  { match: { tensorflow: '2.16' }, gpu: false, image: 'tensorflow/tensorflow:2.16.1' },
  { match: { tensorflow: '2.15' }, gpu: true, image: 'tensorflow/tensorflow:2.15.0-gpu' },
  { match: { tensorflow: '2.15' }, gpu: false, image: 'tensorflow/tensorflow:2.15.0' },
  { match: { tensorflow: '*' }, gpu: true, image: 'tensorflow/tensorflow:2.15.0-gpu' },
  { match: { tensorflow: '*' }, gpu: false, image: 'tensorflow/tensorflow:2.15.0' },
  { match: { keras: '2' }, gpu: true, image: 'tensorflow/tensorflow:2.15.0-gpu' },
  { match: { keras: '2' }, gpu: false, image: 'tensorflow/tensorflow:2.15.0' },
  { match: { keras: '3', jax: '*' }, gpu: false, image: 'python:3.11-slim' },
  { match: { keras: '3', torch: '*' }, image: 'pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime' },
  { match: { keras: '3' }, gpu: true, image: 'tensorflow/tensorflow:2.18.0-gpu' },
  { match: { keras: '3' }, gpu: false, image: 'tensorflow/tensorflow:2.18.0' },
  { match: { jax: '*' }, gpu: false, image: 'python:3.11-slim' },
  { match: { torch: '1.13' }, image: 'pytorch/pytorch:1.13.1-cuda11.6-cudnn8-runtime' },
  { match: { torch: '2.0' }, image: 'pytorch/pytorch:2.0.1-cuda11.7-cudnn8-runtime' },
  { match: { torch: '2.1' }, image: 'pytorch/pytorch:2.1.2-cuda12.1-cudnn8-runtime' },
  { match: { torch: '2.2' }, image: 'pytorch/pytorch:2.2.2-cuda12.1-cudnn8-runtime' },
  { match: { torch: '2.3' }, image: 'pytorch/pytorch:2.3.1-cuda12.1-cudnn8-runtime' },
  { match: { torch: '2.4' }, image: 'pytorch/pytorch:2.4.1-cuda12.1-cudnn9-runtime' },
  { match: { torch: '2.5' }, image: 'pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime' },
  { match: {}, image: 'pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime' },
];

/** The executor's variables: declared once, in the operator's environment schema. */
export const KubernetesSettings = KubernetesEnv;
export type KubernetesSettingsEnv = KubernetesEnv;

export const DEFAULT_GPU_NODE_SELECTOR: Record<string, string> = { 'nvidia.com/gpu.present': 'true' };
export const DEFAULT_GPU_TOLERATIONS: Toleration[] = [{ key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoSchedule' }];

/** The executor's resolved settings (what the renderer and the adapter use); `kind` selects it in the factory. */
export const KubernetesExecConfig = z
  .object({
    kind: z.literal('kubernetes'),
    /** @defaultValue 'repgen-repro' */
    namespace: z
      .string()
      .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/)
      .default('repgen-repro'),
    /** @defaultValue DEFAULT_IMAGE_TABLE */
    images: z.array(ImageRule).min(1).default(DEFAULT_IMAGE_TABLE),
    /** @defaultValue 'python' */
    python: z.string().min(1).default('python'),
    /** @defaultValue '2' */
    cpu: z.string().default('2'),
    /** @defaultValue '10Gi' */
    ephemeralStorage: z.string().default('10Gi'),
    /** @defaultValue 'nvidia.com/gpu' */
    gpuResource: z.string().min(1).default('nvidia.com/gpu'),
    /** @defaultValue DEFAULT_GPU_NODE_SELECTOR */
    gpuNodeSelector: z.record(z.string(), z.string()).default(DEFAULT_GPU_NODE_SELECTOR),
    /** @defaultValue DEFAULT_GPU_TOLERATIONS */
    gpuTolerations: z.array(Toleration).default(DEFAULT_GPU_TOLERATIONS),
    /** @defaultValue 600000 */
    scheduleTimeoutMs: z.number().int().positive().default(600_000),
    /** @defaultValue 60000 */
    imagePullGraceMs: z.number().int().min(0).default(60_000),
    /** @defaultValue 900 */
    deadlineSlackSeconds: z.number().int().positive().default(900),
    /** @defaultValue 300 */
    ttlSecondsAfterFinished: z.number().int().min(0).default(300),
    /** @defaultValue 1000 */
    runAsUser: z.number().int().positive().default(1000),
    imagePullSecret: z.string().min(1).optional(),
    priorityClassName: z.string().min(1).optional(),
    kueueQueue: z.string().min(1).optional(),
    /** Output files up to this size that are UTF-8 text come back with their content. @defaultValue 65536 */
    inlineFileBytes: z.number().int().min(0).default(65_536),
    /** At most this many files of $REPGEN_OUT are listed. @defaultValue 200 */
    maxOutputFiles: z.number().int().positive().default(200),
    /** Where repro pods reach the worker's workspace server; unset, a run with a workspace is refused. */
    workspaceUrl: WorkspaceUrl.optional(),
    /** The port the worker's workspace server listens on. @defaultValue 8472 */
    workspacePort: z.number().int().min(1).max(65_535).default(8472),
    /** The PVC holding the worker's env cache; unset, a run in a project env is refused. */
    envCacheClaim: z.string().min(1).optional(),
    /** The RWX claim env builds run their steps on (src/exec/kubernetes/env-build-runner.ts); unset, the worker builds. */
    envBuildClaim: z.string().min(1).optional(),
  })
  .strict();
export type KubernetesConfig = z.infer<typeof KubernetesExecConfig>;
export type KubernetesConfigInput = z.input<typeof KubernetesExecConfig>;

/** Reads and validates the executor's settings; a bad value is a SetupError naming the variable. */
export function readKubernetesConfig(env: NodeJS.ProcessEnv = process.env): KubernetesConfig {
  return kubernetesConfigFrom(parseEnv(KubernetesEnv, env, (name, message) => `invalid Kubernetes setting ${name}: ${message}`));
}

/** The executor's settings from the parsed operator environment (src/config/operator-env.ts). */
export function kubernetesConfigFrom(s: KubernetesEnv): KubernetesConfig {
  return KubernetesExecConfig.parse({
    kind: 'kubernetes',
    namespace: s.REPGEN_K8S_NAMESPACE,
    images: s.REPGEN_K8S_IMAGES,
    python: s.REPGEN_K8S_PYTHON,
    cpu: s.REPGEN_K8S_CPU,
    ephemeralStorage: s.REPGEN_K8S_EPHEMERAL_STORAGE,
    gpuResource: s.REPGEN_K8S_GPU_RESOURCE,
    gpuNodeSelector: s.REPGEN_K8S_GPU_NODE_SELECTOR,
    gpuTolerations: s.REPGEN_K8S_GPU_TOLERATIONS,
    scheduleTimeoutMs: s.REPGEN_K8S_SCHEDULE_TIMEOUT_SECONDS * 1000,
    imagePullGraceMs: s.REPGEN_K8S_IMAGE_PULL_GRACE_SECONDS * 1000,
    deadlineSlackSeconds: s.REPGEN_K8S_DEADLINE_SLACK_SECONDS,
    ttlSecondsAfterFinished: s.REPGEN_K8S_TTL_SECONDS,
    runAsUser: s.REPGEN_K8S_RUN_AS_USER,
    imagePullSecret: s.REPGEN_K8S_IMAGE_PULL_SECRET,
    priorityClassName: s.REPGEN_K8S_PRIORITY_CLASS,
    kueueQueue: s.REPGEN_K8S_KUEUE_QUEUE,
    workspaceUrl: s.REPGEN_K8S_WORKSPACE_URL,
    workspacePort: s.REPGEN_K8S_WORKSPACE_PORT,
    envCacheClaim: s.REPGEN_K8S_ENV_CACHE_CLAIM,
    envBuildClaim: s.REPGEN_K8S_ENV_BUILD_CLAIM,
  });
}

/** Reports say "PyTorch 2.1" or "tf 2.15"; the table speaks pip names. */
const PACKAGE_ALIASES: Record<string, string> = { pytorch: 'torch', tf: 'tensorflow', 'tensorflow-gpu': 'tensorflow', jax: 'jax' };

function packageKey(name: string): string {
  const k = name.trim().toLowerCase();
  return PACKAGE_ALIASES[k] ?? k;
}

/** True when `version` is `prefix` or starts with it at a dot boundary ("2.1" fits "2.1.0", not "2.10"). */
function versionFits(prefix: string, version: string | undefined): boolean {
  if (version === undefined) return false;
  if (prefix === '*') return true;
  const v = version.trim().replace(/^v/, '').replace(/\+.*$/, '');
  return v === prefix || v.startsWith(`${prefix}.`);
}

/**
 * Picks the image for a run: the request's own image wins (repo config override), else the first table row
 * whose versions and GPU flag fit. Returns null when nothing fits (the caller reports it).
 */
export function chooseImage(
  table: ImageRule[],
  request: { image?: string | undefined; gpus: number; versions?: Record<string, string> | undefined; projectEnv?: boolean },
): string | null {
  return chooseImageRule(table, request)?.image ?? null;
}

/**
 * The row `chooseImage` picks (a request's own image is a row of its own, not known to run project envs). A run in
 * a project env takes only rows marked `projectEnv`: the venv runs on the worker's base interpreter.
 */
export function chooseImageRule(
  table: ImageRule[],
  {
    image,
    gpus,
    versions,
    projectEnv,
  }: { image?: string | undefined; gpus: number; versions?: Record<string, string> | undefined; projectEnv?: boolean },
): ImageRule | null {
  if (image) return { match: {}, image };
  const wanted = Object.fromEntries(Object.entries(versions ?? {}).map(([k, v]) => [packageKey(k), v]));
  for (const rule of table) {
    if (rule.gpu !== undefined && rule.gpu !== gpus > 0) continue;
    if (projectEnv && !rule.projectEnv) continue;
    // A project env holds the versions the run needs: its row is chosen by the GPU flag alone.
    if (projectEnv || Object.entries(rule.match).every(([pkg, prefix]) => versionFits(prefix, wanted[packageKey(pkg)]))) return rule;
  }
  return null;
}
