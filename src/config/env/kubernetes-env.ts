import { z } from 'zod';
import { doc, intMin, intRange, jsonSetting } from './define.js';

/**
 * Where repro pods fetch the checkout from: the worker's own workspace port. http(s) only, because the init
 * container's fetcher speaks nothing else; a URL with a path or credentials would be glued to offer ids or
 * leak into every Job spec, so neither is accepted.
 */
export const WorkspaceUrl = z
  .url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' })
  // zod runs every check even after z.url fails; an unparsable value is already reported by it.
  .refine((u) => !URL.canParse(u) || (new URL(u).username === '' && new URL(u).password === ''), 'must not carry credentials')
  .refine(
    (u) => !URL.canParse(u) || (/^\/*$/.test(new URL(u).pathname) && new URL(u).search === '' && new URL(u).hash === ''),
    'must be scheme://host:port, without a path or query',
  )
  // Kubernetes leaves `$(POD_IP)` as it is when POD_IP is not defined above it in the container's env.
  .refine(
    (u) => !URL.canParse(u) || /^(\[[0-9a-f:.]+\]|[a-z0-9]([a-z0-9.-]*[a-z0-9])?)$/.test(new URL(u).hostname),
    'host must be a DNS name or an IP address (an unexpanded $(POD_IP)?)',
  );

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
    /**
     * The image has the worker's base interpreter (REPGEN_PYTHON) at the same path and Python version, so a project
     * env the worker built (a venv over that interpreter) runs in it. Only such rows serve runs in a project env.
     */
    projectEnv: z.boolean().optional(),
  })
  .strict();
export type ImageRule = z.infer<typeof ImageRule>;

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

/**
 * Settings of the Kubernetes executor. JSON-valued ones (image table, node selector, tolerations) are parsed
 * here so that a typo fails at startup with the variable's name, never at the first GPU run.
 */
export const KubernetesEnv = z.object({
  REPGEN_K8S_NAMESPACE: doc(
    z
      .string()
      .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/)
      .default('repgen-repro'),
    { description: "namespace of the repro Jobs (the worker's Role is limited to it)" },
  ),
  REPGEN_K8S_IMAGES: doc(jsonSetting(z.array(ImageRule).min(1)).optional(), {
    description: 'image table, JSON `[{match, gpu?, image}]`; first match wins',
    shown: 'PyTorch/TensorFlow table',
  }),
  REPGEN_K8S_PYTHON: doc(z.string().min(1).default('python'), { description: "interpreter inside the image; also runs RepGen's runner" }),
  REPGEN_K8S_CPU: doc(
    z
      .string()
      .regex(/^\d+(\.\d+)?m?$/)
      .default('2'),
    { description: 'CPU limit (and request) of a repro container' },
  ),
  REPGEN_K8S_EPHEMERAL_STORAGE: doc(
    z
      .string()
      .regex(/^\d+(Ki|Mi|Gi|Ti)?$/)
      .default('10Gi'),
    { description: 'ephemeral-storage limit and the writable emptyDir size' },
  ),
  REPGEN_K8S_GPU_RESOURCE: doc(z.string().min(1).default('nvidia.com/gpu'), { description: 'extended resource name of a GPU' }),
  REPGEN_K8S_GPU_NODE_SELECTOR: doc(jsonSetting(z.record(z.string(), z.string())).optional(), {
    description: 'node selector of GPU runs, JSON',
    shown: '`{"nvidia.com/gpu.present":"true"}`',
  }),
  REPGEN_K8S_GPU_TOLERATIONS: doc(jsonSetting(z.array(Toleration)).optional(), {
    description: 'tolerations of GPU runs, JSON',
    shown: 'tolerate `nvidia.com/gpu`',
  }),
  REPGEN_K8S_SCHEDULE_TIMEOUT_SECONDS: doc(intMin(1).default(600), {
    description: 'how long a pod may stay unscheduled before the run is given up',
  }),
  REPGEN_K8S_IMAGE_PULL_GRACE_SECONDS: doc(intMin(0).default(60), { description: 'how long image pull errors are tolerated' }),
  REPGEN_K8S_DEADLINE_SLACK_SECONDS: doc(intMin(1).default(900), {
    description: "added to the script's timeout for the Job's activeDeadlineSeconds",
  }),
  REPGEN_K8S_TTL_SECONDS: doc(intMin(0).default(300), { description: 'ttlSecondsAfterFinished of each Job' }),
  REPGEN_K8S_RUN_AS_USER: doc(intMin(1).default(1000), { description: 'uid/gid of the repro container (never root)' }),
  REPGEN_K8S_IMAGE_PULL_SECRET: doc(z.string().min(1).optional(), {
    description: 'imagePullSecret name (referenced, never read)',
    shown: '—',
  }),
  REPGEN_K8S_PRIORITY_CLASS: doc(z.string().min(1).optional(), { description: 'priorityClassName of repro pods', shown: '—' }),
  REPGEN_K8S_WORKSPACE_URL: doc(WorkspaceUrl.optional(), {
    description:
      "URL repro pods reach the worker's workspace port at (`http://$(POD_IP):8472` in k8s/); unset: runs with the checkout are refused",
    shown: '—',
  }),
  REPGEN_K8S_WORKSPACE_PORT: doc(intRange(1, 65_535).default(8472), {
    description: "port the worker's workspace server listens on (one-time tar offers of the checkout)",
  }),
  REPGEN_K8S_ENV_CACHE_CLAIM: doc(
    z
      .string()
      .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, 'a PersistentVolumeClaim name')
      .optional(),
    {
      description:
        "PersistentVolumeClaim in the repro namespace holding the worker's REPGEN_ENV_CACHE (k8s/components/env-cache): a run in the " +
        "project's env mounts its venv from it read-only, on an image row with `projectEnv: true`; unset: such runs are refused",
      shown: '—',
    },
  ),
  REPGEN_K8S_ENV_BUILD_CLAIM: doc(
    z
      .string()
      .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, 'a PersistentVolumeClaim name')
      .optional(),
    {
      description:
        "ReadWriteMany PersistentVolumeClaim in the repro namespace on the same files as the worker's REPGEN_ENV_CACHE: each step of " +
        "an env build (uv, setup.py, repgen.yml build commands) runs as a Job there, writing only the cache's `work/` folder, with " +
        'no secret and the egress of k8s/components/env-cache; unset: the worker builds envs in its own sandbox (bubblewrap)',
      shown: '—',
    },
  ),
  REPGEN_K8S_KUEUE_QUEUE: doc(z.string().min(1).optional(), {
    description: 'Kueue LocalQueue; Jobs then carry `kueue.x-k8s.io/queue-name`',
    shown: '—',
  }),
});
export type KubernetesEnv = z.infer<typeof KubernetesEnv>;
