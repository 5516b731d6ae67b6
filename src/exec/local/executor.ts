import { performance } from 'node:perf_hooks';
import { SetupError } from '../../errors.js';
import { silentLogger, type Logger } from '../../log.js';
import { LocalExecConfig, type LocalExecConfigInput } from '../config.js';
import { InvalidRunRequestError } from '../errors.js';
import { ensureNativeLauncher } from '../sandbox/launcher-native.js';
import { ensureDir, resolveInterpreter } from '../sandbox/fs.js';
import {
  abortedResult,
  describeIsolation,
  finishRun,
  prepareSandbox,
  writeRequestFiles,
  type RunContext,
  type RunShape,
} from '../sandbox/run.js';
import { interpreterFingerprint } from './fingerprint.js';
import { createWarmPool } from '../warm/pool.js';
import { makeOwnedDir, removeOwnedDir } from '../sandbox/reap-work-dirs.js';
import { probeSandbox } from '../sandbox/sandbox.js';
import { RunRequest, type Isolation, type RunRequestInput, type RunResult, type ScriptExecutor } from '../types.js';
import { stoppedForDisk, workDirQuota, type WorkDirQuota } from './work-dir-quota.js';

export { resolveInterpreter } from '../sandbox/fs.js';

export interface LocalExecutorDeps {
  /** @defaultValue silentLogger */
  log?: Logger;
  /** The environment allowlisted names are read from. @defaultValue process.env */
  hostEnv?: NodeJS.ProcessEnv;
}

/** The local executor: a ScriptExecutor, plus warmUp() for its warm pool. */
export type LocalExecutor = ScriptExecutor & {
  close(): Promise<void>;
  warmUp(input: RunRequestInput): Promise<boolean>;
  prepare(): Promise<void>;
  environmentKey(): Promise<string | null>;
};

/**
 * The local adapter of ScriptExecutor: each run gets a fresh throwaway work dir, a clean environment, a sandbox
 * (bubblewrap: no network unless asked, a pid namespace so a kill reaches every process), rlimits and a cgroup for
 * CPU, memory and processes, a wall-clock timeout and capped output. What the sandbox could not enforce is said in
 * `result.isolation`, never silently skipped.
 *
 * The parts: ../sandbox/run.ts prepares a run's sandbox and collects its result, ../sandbox/watch.ts watches the process
 * tree, ../warm/pool.ts keeps sandboxes started ahead (REPGEN_WARM_POOL), ../sandbox/fs.ts the host-side files.
 */
export function createLocalExecutor(
  configInput: Omit<LocalExecConfigInput, 'kind'> & { kind?: 'local' } = {},
  deps: LocalExecutorDeps = {},
): LocalExecutor {
  const config = LocalExecConfig.parse({ ...configInput, kind: 'local' });
  const log = deps.log ?? silentLogger;
  const ctx: RunContext = { config, log, hostEnv: deps.hostEnv ?? process.env };
  const pool = createWarmPool(ctx);
  /** warmUp calls whose entry is not yet in the pool's books (their shape is being resolved). */
  const warmUpsResolving = new Set<Promise<void>>();
  let launcherChoice: Promise<string | null> | undefined;
  let closed = false;

  /** The native launcher's path, or null for the Python launcher; decided once per executor. */
  async function chooseLauncher(): Promise<string | null> {
    if (config.launcher === 'python') return null;
    const native = await ensureNativeLauncher(config.workRoot);
    if (native.path !== null) return native.path;
    if (config.launcher === 'native') throw new SetupError(`REPGEN_LAUNCHER=native but ${native.reason}`);
    log.debug({ reason: native.reason }, 'using the Python launcher');
    return null;
  }

  /** The request checked, and what runs it here: interpreter, sandbox plan, launcher. */
  async function resolveRun(input: RunRequestInput): Promise<RunShape> {
    const parsed = RunRequest.safeParse(input);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new InvalidRunRequestError(`invalid run request: ${issue?.path.join('.') || 'request'}: ${issue?.message ?? 'bad value'}`);
    }
    const req = parsed.data;
    if (!req.files.some((f) => f.path === req.entry)) {
      throw new InvalidRunRequestError(`invalid run request: entry '${req.entry}' is not among the files`);
    }
    const interpreter = await resolveInterpreter(req.interpreter ?? config.python);
    const { plan, launcher } = await hostReady();
    return { req, interpreter, plan, launcher };
  }

  /** The sandbox plan and launcher every run needs (each found once per process, unless it failed). */
  async function hostReady(): Promise<{ plan: RunShape['plan']; launcher: string | null }> {
    // Before the probe, which makes its own throwaway dir under the work root.
    try {
      await ensureDir(config.workRoot);
    } catch (err) {
      throw new SetupError(`cannot create a work dir under ${config.workRoot} (REPGEN_WORK_ROOT): ${(err as Error).message}`);
    }
    const plan = await probeSandbox(config.sandbox, { workRoot: config.workRoot, sandboxUid: config.sandboxUid });
    launcherChoice ??= chooseLauncher();
    // A failed choice is not kept: the next run tries again (a compiler may have been installed meanwhile).
    const launcher = await launcherChoice.catch((err: unknown) => {
      launcherChoice = undefined;
      throw err;
    });
    return { plan, launcher };
  }

  /** The host checks `prepare` started: `close` waits for them, so their probe's throwaway dir is gone after it. */
  let preparing: Promise<unknown> = Promise.resolve();
  async function prepare(): Promise<void> {
    if (closed) return;
    const ready = hostReady().catch(() => undefined);
    preparing = Promise.all([preparing, ready]);
    await ready;
  }

  /**
   * Starts a pool entry for requests shaped like `input` (unless one is there or warming) and resolves once it is
   * ready: true, or false when the pool is off, cannot serve such a request or the interpreter died. For benchmarks
   * and callers that know what comes next.
   */
  async function warmUp(input: RunRequestInput): Promise<boolean> {
    if (config.warmPool === 'off' || closed) return false;
    // A run asked for right after its warmUp must find the entry warming: it waits for this resolution first.
    const resolving = resolveRun(input);
    const registered = resolving.then(
      () => undefined,
      () => undefined,
    );
    warmUpsResolving.add(registered);
    try {
      const shape = await resolving;
      return await pool.warmUp(shape, () => warmUpsResolving.delete(registered));
    } finally {
      warmUpsResolving.delete(registered);
    }
  }

  async function run(input: RunRequestInput, signal?: AbortSignal): Promise<RunResult> {
    // The work folder's disk limit stops the run as a cancel would; its note then says why (work-dir-quota.ts).
    const quota = workDirQuota(config.workMaxMb);
    try {
      return stoppedForDisk(await runWatched(input, quota, signal ? AbortSignal.any([signal, quota.signal]) : quota.signal), quota, signal);
    } finally {
      quota.stop();
    }
  }

  async function runWatched(input: RunRequestInput, quota: WorkDirQuota, signal: AbortSignal): Promise<RunResult> {
    if (warmUpsResolving.size) await Promise.all(warmUpsResolving);
    const resolved = await resolveRun(input);
    // The wall-clock limit covers the whole run from here: waiting on a warm interpreter and a cold start after it.
    const shape: RunShape = { ...resolved, deadline: performance.now() + resolved.req.limits.timeoutMs, watchWorkDir: quota.watch };
    const { req, plan } = shape;
    const isolation = describeIsolation(plan, req.network);
    if (signal?.aborted) return abortedResult(req.limits.maxOutputBytes, isolation, 0);

    const extraNotes: string[] = [];
    if (config.warmPool !== 'off' && !closed) {
      const warm = await pool.run(shape, signal);
      if (typeof warm !== 'string') return warm;
      if (signal?.aborted) return abortedResult(req.limits.maxOutputBytes, isolation, 0);
      extraNotes.push(`cold start: ${warm}`);
    }

    let workdir: string;
    try {
      workdir = await makeOwnedDir(config.workRoot, 'repgen-run-', { keep: config.keepWorkdir });
    } catch (err) {
      throw new SetupError(`cannot create a work dir under ${config.workRoot} (REPGEN_WORK_ROOT): ${(err as Error).message}`);
    }
    try {
      quota.watch(workdir);
      return await runCold(workdir, shape, isolation, signal, extraNotes);
    } finally {
      if (!config.keepWorkdir) await removeOwnedDir(workdir);
      else log.info({ workdir }, 'kept run work dir');
    }
  }

  async function runCold(
    workdir: string,
    shape: RunShape,
    isolation: Isolation,
    signal: AbortSignal | undefined,
    extraNotes: string[],
  ): Promise<RunResult> {
    const { req, interpreter, plan } = shape;
    await writeRequestFiles(workdir, req);
    const scriptArgv = [interpreter, req.entry, ...req.args];
    const target =
      req.setup.length > 0 ? ['/bin/sh', '-c', `set -e\n${req.setup.join('\n')}\nexec "$@"`, 'repgen-setup', ...scriptArgv] : scriptArgv;
    const prepared = await prepareSandbox(ctx, workdir, shape, isolation, target, req.limits.cpuSeconds, 'ignore');
    log.debug({ sandbox: plan.kind, network: req.network, labels: req.labels }, 'starting script');
    return finishRun(ctx, prepared, req, plan, isolation, signal, extraNotes, shape.deadline);
  }

  async function close(): Promise<void> {
    closed = true;
    await preparing;
    await pool.close();
  }

  /** The default interpreter's fingerprint (fingerprint.ts); null when it cannot be found or would not answer. */
  async function environmentKey(): Promise<string | null> {
    const interpreter = await resolveInterpreter(config.python).catch(() => null);
    return interpreter ? interpreterFingerprint(interpreter, config.readOnlyPaths) : null;
  }

  return { name: 'local', run, close, warmUp, prepare, environmentKey };
}
