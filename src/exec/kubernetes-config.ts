import { z } from 'zod';
import { SetupError } from '../errors.js';

/**
 * Settings of the Kubernetes executor, read from the environment once (`readKubernetesSettings(env)`).
 * JSON-valued settings (image table, node selector, tolerations) are parsed and validated here so that a
 * typo fails at startup with the variable's name, never at the first GPU run.
 */

/** One row of the image table: the first row whose `match` and `gpu` fit the request wins. */
export const ImageRule = z
  .object({
    /**
     * Package → version prefix the report must name (`{ "torch": "2.1" }` matches torch 2.1.0 and 2.1.2, not
     * 2.10). `"*"` matches any version of the package. An empty object matches every request.
     * @defaultValue {}
     */
    match: z.record(z.string(), z.string()).default({}),
    /** Only for GPU runs (true), only for CPU runs (false), or both (omitted). */
    gpu: z.boolean().optional(),
    image: z.string().min(1),
  })
  .strict();
export type ImageRule = z.infer<typeof ImageRule>;

/**
 * The built-in table: official PyTorch and TensorFlow images. The PyTorch images carry CUDA but run on CPU nodes
 * too, so one image per torch version serves both; TensorFlow ships separate `-gpu` images.
 */
export const DEFAULT_IMAGE_TABLE: ImageRule[] = [
  { match: { tensorflow: '2.15' }, gpu: true, image: 'tensorflow/tensorflow:2.15.0-gpu' },
  { match: { tensorflow: '2.15' }, gpu: false, image: 'tensorflow/tensorflow:2.15.0' },
  { match: { tensorflow: '*' }, gpu: true, image: 'tensorflow/tensorflow:2.15.0-gpu' },
  { match: { tensorflow: '*' }, gpu: false, image: 'tensorflow/tensorflow:2.15.0' },
  { match: { torch: '1.13' }, image: 'pytorch/pytorch:1.13.1-cuda11.6-cudnn8-runtime' },
  { match: { torch: '2.0' }, image: 'pytorch/pytorch:2.0.1-cuda11.7-cudnn8-runtime' },
  { match: { torch: '2.1' }, image: 'pytorch/pytorch:2.1.2-cuda12.1-cudnn8-runtime' },
  { match: { torch: '2.2' }, image: 'pytorch/pytorch:2.2.2-cuda12.1-cudnn8-runtime' },
  { match: { torch: '2.3' }, image: 'pytorch/pytorch:2.3.1-cuda12.1-cudnn8-runtime' },
  { match: { torch: '2.4' }, image: 'pytorch/pytorch:2.4.1-cuda12.1-cudnn9-runtime' },
  { match: { torch: '2.5' }, image: 'pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime' },
  { match: {}, image: 'pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime' },
];

export const Toleration = z
  .object({
    key: z.string().optional(),
    operator: z.enum(['Exists', 'Equal']).optional(),
    value: z.string().optional(),
    effect: z.enum(['NoSchedule', 'PreferNoSchedule', 'NoExecute']).optional(),
    tolerationSeconds: z.number().int().optional(),
  })
  .strict();
export type Toleration = z.infer<typeof Toleration>;

/** A JSON-valued environment variable: parsed, then validated by `schema`. */
function jsonSetting<T extends z.ZodType>(schema: T) {
  return z
    .string()
    .transform((raw, ctx) => {
      try {
        return JSON.parse(raw) as unknown;
      } catch {
        ctx.addIssue({ code: 'custom', message: 'is not valid JSON' });
        return z.NEVER;
      }
    })
    .pipe(schema);
}

const intSetting = (min: number) => z.coerce.number().int().min(min);

export const KubernetesSettings = z.object({
  /** Namespace the repro Jobs run in (the worker's Role is limited to it). @defaultValue "repgen-repro" */
  REPGEN_K8S_NAMESPACE: z.string().regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/).default('repgen-repro'),
  /** Image table as JSON (array of `{match, gpu?, image}`); first match wins. @defaultValue DEFAULT_IMAGE_TABLE */
  REPGEN_K8S_IMAGES: jsonSetting(z.array(ImageRule).min(1)).optional(),
  /** Interpreter inside the image; also runs RepGen's small runner. @defaultValue "python" */
  REPGEN_K8S_PYTHON: z.string().min(1).default('python'),
  /** CPU limit (and request) of a repro container, in Kubernetes quantity syntax. @defaultValue "2" */
  REPGEN_K8S_CPU: z.string().regex(/^\d+(\.\d+)?m?$/).default('2'),
  /** Ephemeral-storage limit of a repro container and size limit of its writable emptyDir. @defaultValue "10Gi" */
  REPGEN_K8S_EPHEMERAL_STORAGE: z.string().regex(/^\d+(Ki|Mi|Gi|Ti)?$/).default('10Gi'),
  /** Extended resource name of a GPU. @defaultValue "nvidia.com/gpu" */
  REPGEN_K8S_GPU_RESOURCE: z.string().min(1).default('nvidia.com/gpu'),
  /** Node selector for GPU runs, as a JSON object. @defaultValue {"nvidia.com/gpu.present":"true"} */
  REPGEN_K8S_GPU_NODE_SELECTOR: jsonSetting(z.record(z.string(), z.string())).optional(),
  /** Tolerations for GPU runs, as a JSON array. @defaultValue [{"key":"nvidia.com/gpu","operator":"Exists","effect":"NoSchedule"}] */
  REPGEN_K8S_GPU_TOLERATIONS: jsonSetting(z.array(Toleration)).optional(),
  /** How long a pod may stay unscheduled (no node with a free GPU, quota full) before the run is given up. @defaultValue 600 */
  REPGEN_K8S_SCHEDULE_TIMEOUT_SECONDS: intSetting(1).default(600),
  /** How long image pull errors are tolerated before the run is reported as an image pull failure. @defaultValue 60 */
  REPGEN_K8S_IMAGE_PULL_GRACE_SECONDS: intSetting(0).default(60),
  /**
   * Seconds added to the script's timeout for the Job's activeDeadlineSeconds: scheduling, image pull and
   * setup commands. The runner inside the pod enforces the script's own timeout; the deadline is the backstop.
   * @defaultValue 900
   */
  REPGEN_K8S_DEADLINE_SLACK_SECONDS: intSetting(1).default(900),
  /** ttlSecondsAfterFinished of each Job: the cluster cleans up even if the worker died. @defaultValue 300 */
  REPGEN_K8S_TTL_SECONDS: intSetting(0).default(300),
  /** UID/GID the repro container runs as (never root). @defaultValue 1000 */
  REPGEN_K8S_RUN_AS_USER: intSetting(1).default(1000),
  /** Optional imagePullSecret name (the Secret lives in the repro namespace; it is referenced, never read). */
  REPGEN_K8S_IMAGE_PULL_SECRET: z.string().min(1).optional(),
  /** Optional priorityClassName of repro pods (e.g. a low priority GPU class). */
  REPGEN_K8S_PRIORITY_CLASS: z.string().min(1).optional(),
  /** Kueue LocalQueue name; when set, Jobs carry `kueue.x-k8s.io/queue-name`. */
  REPGEN_K8S_KUEUE_QUEUE: z.string().min(1).optional(),
});
export type KubernetesSettingsEnv = z.infer<typeof KubernetesSettings>;

export const DEFAULT_GPU_NODE_SELECTOR: Record<string, string> = { 'nvidia.com/gpu.present': 'true' };
export const DEFAULT_GPU_TOLERATIONS: Toleration[] = [{ key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoSchedule' }];

/** The executor's resolved settings (what the renderer and the adapter use); `kind` selects it in the factory. */
export const KubernetesExecConfig = z
  .object({
    kind: z.literal('kubernetes'),
    /** @defaultValue 'repgen-repro' */
    namespace: z.string().regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/).default('repgen-repro'),
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
  })
  .strict();
export type KubernetesConfig = z.infer<typeof KubernetesExecConfig>;
export type KubernetesConfigInput = z.input<typeof KubernetesExecConfig>;

/** Reads and validates the executor's settings; a bad value is a SetupError naming the variable. */
export function readKubernetesConfig(env: NodeJS.ProcessEnv = process.env): KubernetesConfig {
  const parsed = KubernetesSettings.safeParse(env);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new SetupError(`invalid Kubernetes setting ${String(issue?.path[0] ?? '')}: ${issue?.message ?? 'invalid'}`);
  }
  const s = parsed.data;
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
  { image, gpus, versions }: { image?: string | undefined; gpus: number; versions?: Record<string, string> | undefined },
): string | null {
  if (image) return image;
  const wanted = Object.fromEntries(Object.entries(versions ?? {}).map(([k, v]) => [packageKey(k), v]));
  for (const rule of table) {
    if (rule.gpu !== undefined && rule.gpu !== gpus > 0) continue;
    if (Object.entries(rule.match).every(([pkg, prefix]) => versionFits(prefix, wanted[packageKey(pkg)]))) return rule.image;
  }
  return null;
}
