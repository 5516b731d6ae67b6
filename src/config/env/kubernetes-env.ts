import { z } from 'zod';
import { doc, intMin, jsonSetting } from './define.js';

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
  REPGEN_K8S_NAMESPACE: doc(z.string().regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/).default('repgen-repro'), { description: "namespace of the repro Jobs (the worker's Role is limited to it)" }),
  REPGEN_K8S_IMAGES: doc(jsonSetting(z.array(ImageRule).min(1)).optional(), { description: 'image table, JSON `[{match, gpu?, image}]`; first match wins', shown: 'PyTorch/TensorFlow table' }),
  REPGEN_K8S_PYTHON: doc(z.string().min(1).default('python'), { description: "interpreter inside the image; also runs RepGen's runner" }),
  REPGEN_K8S_CPU: doc(z.string().regex(/^\d+(\.\d+)?m?$/).default('2'), { description: 'CPU limit (and request) of a repro container' }),
  REPGEN_K8S_EPHEMERAL_STORAGE: doc(z.string().regex(/^\d+(Ki|Mi|Gi|Ti)?$/).default('10Gi'), { description: 'ephemeral-storage limit and the writable emptyDir size' }),
  REPGEN_K8S_GPU_RESOURCE: doc(z.string().min(1).default('nvidia.com/gpu'), { description: 'extended resource name of a GPU' }),
  REPGEN_K8S_GPU_NODE_SELECTOR: doc(jsonSetting(z.record(z.string(), z.string())).optional(), { description: 'node selector of GPU runs, JSON', shown: '`{"nvidia.com/gpu.present":"true"}`' }),
  REPGEN_K8S_GPU_TOLERATIONS: doc(jsonSetting(z.array(Toleration)).optional(), { description: 'tolerations of GPU runs, JSON', shown: 'tolerate `nvidia.com/gpu`' }),
  REPGEN_K8S_SCHEDULE_TIMEOUT_SECONDS: doc(intMin(1).default(600), { description: 'how long a pod may stay unscheduled before the run is given up' }),
  REPGEN_K8S_IMAGE_PULL_GRACE_SECONDS: doc(intMin(0).default(60), { description: 'how long image pull errors are tolerated' }),
  REPGEN_K8S_DEADLINE_SLACK_SECONDS: doc(intMin(1).default(900), { description: "added to the script's timeout for the Job's activeDeadlineSeconds" }),
  REPGEN_K8S_TTL_SECONDS: doc(intMin(0).default(300), { description: 'ttlSecondsAfterFinished of each Job' }),
  REPGEN_K8S_RUN_AS_USER: doc(intMin(1).default(1000), { description: 'uid/gid of the repro container (never root)' }),
  REPGEN_K8S_IMAGE_PULL_SECRET: doc(z.string().min(1).optional(), { description: 'imagePullSecret name (referenced, never read)', shown: '—' }),
  REPGEN_K8S_PRIORITY_CLASS: doc(z.string().min(1).optional(), { description: 'priorityClassName of repro pods', shown: '—' }),
  REPGEN_K8S_KUEUE_QUEUE: doc(z.string().min(1).optional(), { description: 'Kueue LocalQueue; Jobs then carry `kueue.x-k8s.io/queue-name`', shown: '—' }),
});
export type KubernetesEnv = z.infer<typeof KubernetesEnv>;
