import { z } from 'zod';

/**
 * The ScriptExecutor port: *where* a candidate script runs (a local sandbox, a Kubernetes Job).
 * An executor reports what happened and never decides what it means; `src/symptoms/` does that.
 */

export const ScriptFile = z.object({
  /** Relative path inside the run's working directory (no `..`, not absolute). */
  path: z
    .string()
    .min(1)
    .refine((p) => !p.startsWith('/') && !p.split(/[\\/]/).includes('..'), 'must be a relative path inside the work dir'),
  content: z.string(),
});
export type ScriptFile = z.infer<typeof ScriptFile>;

export const RunLimits = z.object({
  /** Wall-clock limit; the whole process tree is killed when it passes. @defaultValue 120000 */
  timeoutMs: z.number().int().positive().default(120_000),
  /** Address-space / memory limit of the script. @defaultValue 4096 */
  memoryMb: z.number().int().positive().default(4096),
  /** CPU-time limit (seconds of CPU, all threads). @defaultValue 600 */
  cpuSeconds: z.number().int().positive().default(600),
  /** Bytes kept of each of stdout and stderr; the rest is counted, not kept. @defaultValue 1000000 */
  maxOutputBytes: z.number().int().positive().default(1_000_000),
});
export type RunLimits = z.infer<typeof RunLimits>;

/** Where the workspace appears inside the sandbox when the request names no mountPath. */
export const DEFAULT_WORKSPACE_MOUNT = '/workspace';

/** Top-level folders a workspace may not be mounted on or under: the sandbox's own system and scratch mounts. */
const RESERVED_MOUNT_ROOTS = [
  'bin',
  'boot',
  'dev',
  'etc',
  'lib',
  'lib32',
  'lib64',
  'libx32',
  'proc',
  'root',
  'run',
  'sbin',
  'sys',
  'tmp',
  'usr',
  'var',
];

/**
 * The project checkout a run may import and read but never change: the local sandbox bind-mounts `hostPath`
 * read-only at `mountPath` and puts it first on PYTHONPATH; the script's own cwd stays a fresh writable dir.
 */
export const Workspace = z
  .object({
    /** Absolute host path of the checkout (a directory). */
    hostPath: z
      .string()
      .startsWith('/', 'must be an absolute path')
      .refine((p) => !p.split('/').includes('..'), 'must not contain ..'),
    /**
     * Absolute path inside the sandbox, plain segments only, not on or under a system folder (/usr, /tmp, /proc …).
     * @defaultValue '/workspace'
     */
    mountPath: z
      .string()
      .regex(/^(\/[A-Za-z0-9_][A-Za-z0-9._-]*)+$/, 'must be an absolute path of plain segments')
      .refine((p) => !RESERVED_MOUNT_ROOTS.includes(p.split('/')[1] ?? ''), 'must not be on or under a system folder')
      .optional(),
  })
  .strict();
export type Workspace = z.infer<typeof Workspace>;

export const RunRequest = z.object({
  /** Files written into a fresh working directory before the run. */
  files: z.array(ScriptFile).min(1),
  /** Which of `files` to run. */
  entry: z.string().min(1),
  /** Interpreter; when omitted the executor's configured one (REPGEN_PYTHON). */
  interpreter: z.string().min(1).optional(),
  /**
   * The project's built environment `interpreter` belongs to: its venv folder, under the env cache root. A local run
   * binds the folder read-only; a Kubernetes run mounts it from the env cache volume (REPGEN_K8S_ENV_CACHE_CLAIM).
   */
  interpreterEnv: z.object({ dir: z.string().startsWith('/'), cacheRoot: z.string().startsWith('/') }).optional(),
  args: z.array(z.string()).default([]),
  /** Variables set for the script. Nothing else of the host environment reaches it but `envAllowlist`. */
  env: z.record(z.string(), z.string()).default({}),
  /** Names of host variables passed through (e.g. LANG). Secrets must never be listed. */
  envAllowlist: z.array(z.string()).default([]),
  limits: RunLimits.default(RunLimits.parse({})),
  /** Network access. Off: a fresh network namespace locally, deny-all egress on Kubernetes. @defaultValue false */
  network: z.boolean().default(false),
  /** Seed exported as REPGEN_SEED and PYTHONHASHSEED for the script. */
  seed: z.number().int().min(0).optional(),
  /** GPUs wanted (only the Kubernetes executor can honour more than 0). @defaultValue 0 */
  gpus: z.number().int().min(0).default(0),
  /** Container image (Kubernetes); ignored locally. */
  image: z.string().optional(),
  /**
   * Framework and library versions the report names (`{ torch: '2.1.0', python: '3.10' }`). The Kubernetes
   * executor picks its image from them through its image table when `image` is not set; ignored locally.
   */
  versions: z.record(z.string(), z.string()).optional(),
  /** Shell commands run before the script, in the working dir (repo config `setup`). */
  setup: z.array(z.string()).default([]),
  /**
   * The project checkout at the ref, importable and readable by the script, never writable. The script
   * finds it at `workspace.mountPath` (also in $REPGEN_WORKSPACE) and first on PYTHONPATH.
   */
  workspace: Workspace.optional(),
  /** Labels tying the run to its RepGen job and issue (Kubernetes labels; log metadata locally). */
  labels: z.record(z.string(), z.string()).default({}),
});
export type RunRequest = z.infer<typeof RunRequest>;
export type RunRequestInput = z.input<typeof RunRequest>;

export const OutputFile = z.object({ path: z.string(), size: z.number().int().min(0), content: z.string().optional() });
export type OutputFile = z.infer<typeof OutputFile>;

export const Isolation = z.object({
  /** 'none' = the script had no network; 'host' = it shared the host's (asked for, or isolation unavailable). */
  network: z.enum(['none', 'host']),
  /** What enforced it: 'bwrap', 'unshare', 'kubernetes', or 'none'. */
  sandbox: z.string(),
  /** Human-readable caveats, e.g. "bubblewrap not found: network isolation unavailable". */
  notes: z.array(z.string()).default([]),
});
export type Isolation = z.infer<typeof Isolation>;

/** Outcomes that say the infrastructure, not the script, decided the run. */
export const InfraFailure = z.object({
  kind: z.enum(['unschedulable', 'image_pull', 'evicted', 'api_error', 'spawn_failed', 'sandbox_failed', 'aborted']),
  message: z.string(),
});
export type InfraFailure = z.infer<typeof InfraFailure>;

export const RunResult = z.object({
  executor: z.string(),
  /** Exit code; null when killed by a signal or never started. */
  exitCode: z.number().int().nullable(),
  signal: z.string().nullable(),
  timedOut: z.boolean(),
  oomKilled: z.boolean(),
  durationMs: z.number().min(0),
  cpuMs: z.number().min(0).nullable(),
  peakMemoryMb: z.number().min(0).nullable(),
  stdout: z.string(),
  stderr: z.string(),
  /** stdout and stderr interleaved in arrival order (capped at maxOutputBytes too): what symptom reading uses. */
  output: z.string(),
  stdoutBytes: z.number().int().min(0),
  stderrBytes: z.number().int().min(0),
  stdoutTruncated: z.boolean(),
  stderrTruncated: z.boolean(),
  outputCapBytes: z.number().int().positive(),
  /** Files the script wrote under $REPGEN_OUT (small text files carry their content). */
  files: z.array(OutputFile).default([]),
  isolation: Isolation,
  infra: InfraFailure.nullable().default(null),
  /** Caveats about this result that are not about isolation (output files skipped, a limit that fired). */
  notes: z.array(z.string()).optional(),
});
export type RunResult = z.infer<typeof RunResult>;

export interface ScriptExecutor {
  readonly name: string;
  /** Runs one request. Resolves with what happened, also when the script failed; rejects only on bad requests. */
  run(request: RunRequestInput, signal?: AbortSignal): Promise<RunResult>;
  /** Stops what the executor keeps between runs (the local warm pool); runs after it start cold. */
  close?(): Promise<void>;
  /**
   * A fingerprint of what decides which modules a run can import (the interpreter and the folders on its
   * sys.path): equal keys, equal environment probe answers, so the probe may be cached on disk under it.
   * Absent or null when the executor cannot tell (a cluster's image, setup commands): nothing is cached then.
   */
  environmentKey?(): Promise<string | null>;
  /**
   * Gets ready, in the background, for a run shaped like `request` (its files aside) that the caller knows is
   * coming: the local executor starts a pooled sandbox with torch imported (REPGEN_WARM_POOL). Resolves true once
   * ready, false when it will not be (pool off or full, a request it cannot serve). Only a hint: runs never depend
   * on it, and a caller must not wait on it.
   */
  warmUp?(request: RunRequestInput): Promise<boolean>;
  /**
   * Starts, in the background, the host checks every run waits on (the local executor: its sandbox probe and launcher
   * choice), so that they overlap the caller's own work (the env stage) instead of delaying the first run. Never
   * rejects: a check that fails here fails again, and is reported, when a run asks for it.
   */
  prepare?(): Promise<void>;
}
