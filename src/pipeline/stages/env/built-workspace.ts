// Runs mount the project with its extensions compiled: every checkout a run names (the ref, the fixing ref,
// a bisection step) is swapped for its built copy (src/env/build/project-build.ts), built once per checkout and job.
import type { ProjectBuildResult } from '../../../env/types.js';
import type { RunRequestInput, RunResult, ScriptExecutor } from '../../../exec/types.js';

/** Builds (or reuses) the copy of one checkout with its extensions compiled. */
export type BuildCheckout = (hostPath: string, signal: AbortSignal) => Promise<ProjectBuildResult>;

/**
 * An executor whose runs see each checkout's built copy instead of the checkout. `done` holds builds already made
 * (the ref, built by the env stage). A checkout whose extensions do not compile gives a run that never
 * started, an infrastructure failure that says so (a fix check is then inconclusive, a bisection step skipped),
 * never a run of the project without its extensions.
 */
export function withBuiltWorkspaces(
  executor: ScriptExecutor,
  build: BuildCheckout,
  done: ReadonlyMap<string, ProjectBuildResult> = new Map(),
): ScriptExecutor {
  const builds = new Map<string, Promise<ProjectBuildResult>>([...done].map(([k, v]) => [k, Promise.resolve(v)]));
  const built = (hostPath: string, signal: AbortSignal): Promise<ProjectBuildResult> => {
    let b = builds.get(hostPath);
    if (!b) {
      b = build(hostPath, signal);
      builds.set(hostPath, b);
      // A cancelled or crashed build is not remembered: the next run tries again.
      b.then(
        (r) => (!r.ok && r.failure.message === 'the build was cancelled' ? builds.delete(hostPath) : undefined),
        () => builds.delete(hostPath),
      );
    }
    return b;
  };
  const swap = (req: RunRequestInput, r: ProjectBuildResult): RunRequestInput =>
    r.ok && req.workspace ? { ...req, workspace: { ...req.workspace, hostPath: r.checkout } } : req;
  return {
    name: executor.name,
    async run(req: RunRequestInput, signal?: AbortSignal): Promise<RunResult> {
      if (!req.workspace) return executor.run(req, signal);
      const r = await built(req.workspace.hostPath, signal ?? new AbortController().signal);
      if (!r.ok) return notStarted(executor.name, r.failure.message, r.failure.logTail);
      return executor.run(swap(req, r), signal);
    },
    ...(executor.close ? { close: () => (executor.close as () => Promise<void>)() } : {}),
    ...(executor.warmUp
      ? {
          warmUp: async (req: RunRequestInput) => {
            const r = req.workspace ? await builds.get(req.workspace.hostPath) : undefined;
            // Only a checkout already built is warmed: warming never starts a compile.
            if (req.workspace && !r?.ok) return false;
            return (executor.warmUp as (x: RunRequestInput) => Promise<boolean>)(r ? swap(req, r) : req);
          },
        }
      : {}),
    ...(executor.environmentKey ? { environmentKey: () => (executor.environmentKey as () => Promise<string | null>)() } : {}),
  };
}

function notStarted(executor: string, message: string, logTail: string): RunResult {
  const text = `repgen: ${message}\n${logTail}`.trim();
  return {
    executor,
    exitCode: null,
    signal: null,
    timedOut: false,
    oomKilled: false,
    durationMs: 0,
    cpuMs: null,
    peakMemoryMb: null,
    stdout: '',
    stderr: text,
    output: text,
    stdoutBytes: 0,
    stderrBytes: Buffer.byteLength(text),
    stdoutTruncated: false,
    stderrTruncated: false,
    outputCapBytes: Math.max(1, Buffer.byteLength(text)),
    files: [],
    isolation: { network: 'none', sandbox: 'none', notes: [] },
    infra: { kind: 'spawn_failed', message: `the project's extensions could not be built for this checkout: ${message}` },
  };
}
