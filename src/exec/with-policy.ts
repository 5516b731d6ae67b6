import type { RunRequestInput, ScriptExecutor } from './types.js';

/**
 * What every script run of one reproduction gets, whatever the agent asked: resolved once by
 * `resolveRunSpec` (src/pipeline/run-spec.ts) from the operator's settings and the repository's
 * `.github/repgen.yml`, imposed here.
 */
export interface ExecPolicy {
  /** Container image (Kubernetes); an image the request names itself wins. */
  image?: string;
  /** GPUs every run gets at least (the repo config's `gpu`, a `/repgen --gpu`). */
  minGpus: number;
  /** Shell commands run before the agent's own setup (the repo config's `setup`). */
  setup: string[];
  /**
   * The run's network, decided here and nowhere else: on only for a Kubernetes executor with an allowlist
   * (its NetworkPolicy enforces the list); the local sandbox is all-or-nothing, so an allowlist never turns
   * into the whole host network there.
   */
  network: boolean;
  /** Labels on the run (Kubernetes Job labels: the job id, for cleanup and cost reports). */
  labels: Record<string, string>;
  /** Ceilings of one run's limits (the operator's REPGEN_RUN_TIMEOUT_MS and REPGEN_RUN_MEMORY_MB). */
  maxTimeoutMs: number;
  maxMemoryMb: number;
}

/** An executor that imposes `policy` on every request, then hands it to `executor`. */
export function withPolicy(executor: ScriptExecutor, policy: ExecPolicy): ScriptExecutor {
  return {
    name: executor.name,
    run: (req: RunRequestInput, signal?: AbortSignal) => executor.run(applyPolicy(req, policy), signal),
    ...(executor.close ? { close: () => (executor.close as () => Promise<void>)() } : {}),
    // The same policy as run(): a pooled sandbox serves only requests of its exact shape.
    ...(executor.warmUp
      ? { warmUp: (req: RunRequestInput) => (executor.warmUp as (r: RunRequestInput) => Promise<boolean>)(applyPolicy(req, policy)) }
      : {}),
    // Setup commands (pip install …) change what imports, run by run: no key then. The image is part of it.
    ...(executor.environmentKey && policy.setup.length === 0 ? { environmentKey: () => policyKey(executor, policy) } : {}),
  };
}

async function policyKey(executor: ScriptExecutor, policy: ExecPolicy): Promise<string | null> {
  const inner = (await executor.environmentKey?.()) ?? null;
  return inner === null ? null : `${inner}\u0000${policy.image ?? ''}`;
}

/** The request as `policy` lets it run. Pure. */
export function applyPolicy(req: RunRequestInput, policy: ExecPolicy): RunRequestInput {
  const limits = req.limits
    ? {
        ...req.limits,
        ...(req.limits.timeoutMs !== undefined ? { timeoutMs: Math.min(req.limits.timeoutMs, policy.maxTimeoutMs) } : {}),
        ...(req.limits.memoryMb !== undefined ? { memoryMb: Math.min(req.limits.memoryMb, policy.maxMemoryMb) } : {}),
      }
    : { timeoutMs: policy.maxTimeoutMs, memoryMb: policy.maxMemoryMb };
  return {
    ...req,
    ...(policy.image && !req.image ? { image: policy.image } : {}),
    gpus: Math.max(req.gpus ?? 0, policy.minGpus),
    setup: [...policy.setup, ...(req.setup ?? [])],
    network: policy.network,
    labels: { ...(req.labels ?? {}), ...policy.labels },
    limits,
  };
}
