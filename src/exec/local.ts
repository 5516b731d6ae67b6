import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { createRunCgroup, type RunCgroup } from './cgroup.js';
import { constants } from 'node:fs';
import { access, chmod, mkdir, mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { SetupError } from '../errors.js';
import { silentLogger, type Logger } from '../log.js';
import { collectOutputFiles } from './collect-output-files.js';
import { LocalExecConfig, type LocalExecConfigInput } from './config.js';
import { InterpreterNotFoundError, InvalidRunRequestError } from './errors.js';
import { killTree } from './kill-tree.js';
import { LAUNCHER_SOURCE, parseLauncherReport } from './launcher.js';
import { ensureNativeLauncher } from './launcher-native.js';
import { parseReady, WARM_SOURCE } from './warm-pool.js';
import { createOutputCapture } from './output-capture.js';
import {
  buildSandboxArgv,
  handWorkdirToSandbox,
  probeSandbox,
  sandboxSpawn,
  unreachableBy,
  writeSeccomp,
  type SandboxPlan,
} from './sandbox.js';
import { buildScriptEnv, SAFE_PATH } from './script-env.js';
import {
  DEFAULT_WORKSPACE_MOUNT,
  RunRequest,
  type InfraFailure,
  type Isolation,
  type RunRequestInput,
  type RunResult,
  type ScriptExecutor,
} from './types.js';

export interface LocalExecutorDeps {
  /** @defaultValue silentLogger */
  log?: Logger;
  /** The environment allowlisted names are read from. @defaultValue process.env */
  hostEnv?: NodeJS.ProcessEnv;
}

/** Once the launcher has exited, how long to wait for pipes held open by leftover processes. */
const PIPE_GRACE_MS = 2_000;

/** CPU seconds a warm interpreter may spend on its imports, on top of the run's own limit. */
const WARM_IMPORT_CPU_S = 300;
/** A pool entry unused this long is stopped. */
const WARM_IDLE_MS = 120_000;
/** Pool entries (one per distinct request shape) kept at once. */
const WARM_MAX_ENTRIES = 4;

/** The launcher's report is two short JSON lines; more than this is not read. */
const REPORT_CAP_BYTES = 64 * 1024;

/** Paths every bwrap sandbox already sees; an interpreter under them needs no extra bind. */
const BOUND_PREFIXES = ['/usr/', '/bin/', '/sbin/', '/lib/', '/lib64/'];

/**
 * The local adapter of ScriptExecutor: each run gets a fresh throwaway work dir, a clean environment, a sandbox
 * (bubblewrap or unshare: no network unless asked, a pid namespace so a kill reaches every process), rlimits for
 * CPU and memory, a wall-clock timeout and capped output. What the sandbox could not enforce is said in
 * `result.isolation`, never silently skipped.
 */
/** The local executor: a ScriptExecutor, plus warmUp() for its warm pool. */
export type LocalExecutor = ScriptExecutor & { close(): Promise<void>; warmUp(input: RunRequestInput): Promise<boolean> };

export function createLocalExecutor(configInput: Omit<LocalExecConfigInput, 'kind'> & { kind?: 'local' } = {}, deps: LocalExecutorDeps = {}): LocalExecutor {
  const config = LocalExecConfig.parse({ ...configInput, kind: 'local' });
  const log = deps.log ?? silentLogger;
  const hostEnv = deps.hostEnv ?? process.env;
  let launcherChoice: Promise<string | null> | undefined;

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
  async function resolveRun(input: RunRequestInput): Promise<{ req: RunRequest; interpreter: string; plan: SandboxPlan; launcher: string | null }> {
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
    return { req, interpreter, plan, launcher };
  }

  /**
   * Starts a pool entry for requests shaped like `input` (unless one is there or warming) and resolves once it is
   * ready: true, or false when the pool is off, cannot serve such a request or the interpreter died. For benchmarks
   * and callers that know what comes next.
   */
  async function warmUp(input: RunRequestInput): Promise<boolean> {
    if (config.warmPool === 'off' || closed) return false;
    const { req, interpreter, plan, launcher } = await resolveRun(input);
    if (warmRefusal(req, plan) !== null) return false;
    const key = warmKey(req, interpreter, launcher);
    if (!pool.has(key) && !warming.has(key)) {
      warming.add(key);
      try {
        const entry = await startWarm(key, req, interpreter, launcher, plan);
        if (pool.has(key)) void entry.discard();
        else pool.set(key, entry);
      } finally {
        warming.delete(key);
      }
    }
    const keepAlive = setInterval(() => undefined, 1000);
    try {
      for (let i = 0; i < 6000 && !pool.has(key); i++) await new Promise((r) => setTimeout(r, 10));
      const entry = pool.get(key);
      return entry ? (await entry.ready) !== null : false;
    } finally {
      clearInterval(keepAlive);
    }
  }

  async function run(input: RunRequestInput, signal?: AbortSignal): Promise<RunResult> {
    const { req, interpreter, plan, launcher } = await resolveRun(input);
    const isolation = describeIsolation(plan, req.network);
    if (signal?.aborted) return abortedResult(req.limits.maxOutputBytes, isolation, 0);

    const extraNotes: string[] = [];
    if (config.warmPool !== 'off') {
      const refusal = warmRefusal(req, plan);
      if (refusal === null) {
        const key = warmKey(req, interpreter, launcher);
        let taken: WarmEntry | string;
        try {
          taken = await takeWarm(key, req, interpreter, launcher, plan);
        } catch (err) {
          taken = `the pool could not start an interpreter: ${(err as Error).message.split('\n')[0]}`;
        }
        refill(key, req, interpreter, launcher, plan);
        if (typeof taken !== 'string') return runWarm(taken, req, plan, signal);
        extraNotes.push(`cold start: ${taken}`);
      } else {
        extraNotes.push(`cold start: ${refusal}`);
      }
    }

    let workdir: string;
    try {
      workdir = await mkdtemp(join(config.workRoot, 'repgen-run-'));
    } catch (err) {
      throw new SetupError(`cannot create a work dir under ${config.workRoot} (REPGEN_WORK_ROOT): ${(err as Error).message}`);
    }
    try {
      return await runIn(workdir, req, interpreter, launcher, plan, isolation, signal, extraNotes);
    } finally {
      if (!config.keepWorkdir) await removeWorkdir(workdir);
      else log.info({ workdir }, 'kept run work dir');
    }
  }

  interface Prepared {
    spawnArgs: { file: string; args: string[]; options: SpawnOptions };
    cgroup: RunCgroup | null;
    outDir: string;
  }

  /**
   * Everything of a run but its files: out dir, environment, launcher and sandbox argv, ownership, cgroup. The cold
   * path writes the files first; a warm pool entry gets them at go time.
   */
  async function prepareSandbox(
    workdir: string,
    req: RunRequest,
    interpreter: string,
    launcher: string | null,
    plan: SandboxPlan,
    isolation: Isolation,
    target: string[],
    cpuSeconds: number,
    stdin: 'pipe' | 'ignore',
  ): Promise<Prepared> {
    const outDir = join(workdir, 'out');
    await mkdir(outDir);
    // bwrap gives the script a private /tmp; elsewhere temporary files stay inside the throwaway work dir.
    let tmpDir: string | undefined;
    if (plan.kind !== 'bwrap') {
      tmpDir = join(workdir, '.tmp');
      await mkdir(tmpDir);
    }
    const workspace = await resolveWorkspace(req, plan);
    if (workspace?.note) isolation.notes.push(workspace.note);
    const { env, notes: envNotes } = buildScriptEnv({
      hostEnv,
      env: req.env,
      envAllowlist: req.envAllowlist,
      seed: req.seed,
      workdir,
      outDir,
      interpreter,
      tmpDir,
      workspace: workspace?.seenAt,
    });
    isolation.notes.push(...envNotes);
    if (isolation.network === 'host' && !req.network) log.warn({ notes: isolation.notes }, 'script runs without network isolation');
    const launcherArgs = [
      String(cpuSeconds),
      String(req.limits.memoryMb * 1024 * 1024),
      String(config.maxFileMb * 1024 * 1024),
      plan.kind === 'none' ? '1' : '0',
      String(config.maxProcesses),
      String(config.maxOpenFiles),
      ...target,
    ];
    const inner = launcher ? [launcher, ...launcherArgs] : [interpreter, '-I', '-S', '-c', LAUNCHER_SOURCE, ...launcherArgs];
    const readOnlyPaths = [...config.readOnlyPaths];
    // The cached launcher lives under the work root, which bwrap's private /tmp would otherwise hide.
    if (launcher) readOnlyPaths.push(launcher);
    if (!BOUND_PREFIXES.some((p) => interpreter.startsWith(p))) readOnlyPaths.push(dirname(dirname(interpreter)));
    const { file, args } = buildSandboxArgv({
      plan,
      network: req.network,
      workdir,
      readOnlyPaths,
      inner,
      workspace: workspace?.mount,
      // Half the memory limit each: tmpfs pages count against the run's cgroup, and ENOSPC reads better than an OOM kill.
      tmpBytes: Math.max(16, Math.floor(req.limits.memoryMb / 2)) * 1024 * 1024,
    });
    await handWorkdirToSandbox(plan, workdir);

    let cgroup: RunCgroup | null = null;
    if (plan.cgroups) {
      try {
        cgroup = await createRunCgroup(plan.cgroups, { memoryBytes: req.limits.memoryMb * 1024 * 1024, pids: config.maxProcesses });
      } catch (err) {
        isolation.notes.push(`no cgroup for this run (${(err as Error).message.split('\n')[0]}): memory is limited per process only`);
      }
    }
    const spawnArgs = sandboxSpawn(plan, { file, args }, cgroup, { cwd: workdir, env, detached: true }, stdin);
    return { spawnArgs, cgroup, outDir };
  }

  async function writeRequestFiles(workdir: string, req: RunRequest): Promise<void> {
    for (const file of req.files) {
      const path = join(workdir, file.path);
      try {
        await mkdir(dirname(path), { recursive: true });
        await writeFile(path, file.content);
      } catch (err) {
        // Two files whose paths collide ('a' and 'a/b.py') are the request's fault; a full disk is not.
        const code = (err as NodeJS.ErrnoException).code;
        if (code === 'EEXIST' || code === 'ENOTDIR' || code === 'EISDIR') {
          throw new InvalidRunRequestError(`invalid run request: cannot write ${file.path}: it collides with another file's path`);
        }
        throw new SetupError(`cannot write ${file.path} into the work dir: ${(err as Error).message}`);
      }
    }
  }

  /** Watches a prepared run to its end, then reads the OOM counter and the output files. */
  async function finishRun(
    prepared: Prepared,
    req: RunRequest,
    plan: SandboxPlan,
    isolation: Isolation,
    signal: AbortSignal | undefined,
    warm?: Parameters<typeof spawnAndWatch>[4],
    extraNotes: string[] = [],
  ): Promise<RunResult> {
    let result;
    try {
      result = await spawnAndWatch(prepared.spawnArgs, req, plan, signal, warm);
      if (prepared.cgroup && (await prepared.cgroup.oomKills()) > 0) {
        result.oomKilled = true;
        result.notes.push(`killed by the kernel: the run's ${req.limits.memoryMb} MB memory limit (whole process tree) was reached`);
      }
    } finally {
      await prepared.cgroup?.remove();
    }
    const collected = await collectOutputFiles(prepared.outDir, { inlineBytes: config.inlineFileBytes, maxFiles: config.maxOutputFiles });
    const notes = [...extraNotes, ...result.notes, ...collected.notes];
    if (req.gpus > 0) notes.push(`${req.gpus} GPU(s) requested: the local executor runs on CPU only`);
    const { notes: _ignored, ...rest } = result;
    return { ...rest, files: collected.files, isolation, ...(notes.length ? { notes } : {}) };
  }

  async function runIn(
    workdir: string,
    req: RunRequest,
    interpreter: string,
    launcher: string | null,
    plan: SandboxPlan,
    isolation: Isolation,
    signal: AbortSignal | undefined,
    extraNotes: string[],
  ): Promise<RunResult> {
    await writeRequestFiles(workdir, req);
    const scriptArgv = [interpreter, req.entry, ...req.args];
    const target =
      req.setup.length > 0
        ? ['/bin/sh', '-c', `set -e\n${req.setup.join('\n')}\nexec "$@"`, 'repgen-setup', ...scriptArgv]
        : scriptArgv;
    const prepared = await prepareSandbox(workdir, req, interpreter, launcher, plan, isolation, target, req.limits.cpuSeconds, 'ignore');
    log.debug({ sandbox: plan.kind, network: req.network, labels: req.labels }, 'starting script');
    return finishRun(prepared, req, plan, isolation, signal, undefined, extraNotes);
  }

  // ---- The warm pool (REPGEN_WARM_POOL) ----

  interface WarmEntry {
    key: string;
    workdir: string;
    prepared: Prepared;
    child: ChildProcess;
    report: Buffer[];
    isolation: Isolation;
    /** Import CPU ms once ready; null when the interpreter died first. */
    ready: Promise<number | null>;
    readyMs: number | null;
    idle: NodeJS.Timeout | null;
    discard(): Promise<void>;
  }
  const pool = new Map<string, WarmEntry>();
  /** Keys whose entry is being prepared (work dir, cgroup) and not yet in the pool. */
  const warming = new Set<string>();

  /** What a pooled sandbox must have been started with to serve this request. */
  function warmKey(req: RunRequest, interpreter: string, launcher: string | null): string {
    const { network, workspace, seed, env, envAllowlist } = req;
    return JSON.stringify([interpreter, launcher, network, workspace ?? null, req.limits.memoryMb, req.limits.cpuSeconds, seed ?? null, env, envAllowlist]);
  }

  /** Why this request cannot run warm, or null. */
  function warmRefusal(req: RunRequest, plan: SandboxPlan): string | null {
    if (plan.kind !== 'bwrap') return 'no bubblewrap sandbox';
    if (req.setup.length > 0) return 'setup commands run before the interpreter';
    if (!req.entry.endsWith('.py')) return 'the entry is not a Python file';
    return null;
  }

  async function startWarm(key: string, req: RunRequest, interpreter: string, launcher: string | null, plan: SandboxPlan): Promise<WarmEntry> {
    const workdir = await mkdtemp(join(config.workRoot, 'repgen-run-'));
    const isolation = describeIsolation(plan, req.network);
    let prepared: Prepared;
    try {
      prepared = await prepareSandbox(
        workdir,
        req,
        interpreter,
        launcher,
        plan,
        isolation,
        [interpreter, '-c', WARM_SOURCE],
        req.limits.cpuSeconds + WARM_IMPORT_CPU_S,
        'pipe',
      );
    } catch (err) {
      await removeWorkdir(workdir);
      throw err;
    }
    const { file, args, options } = prepared.spawnArgs;
    const child = spawn(file, args, options);
    writeSeccomp(plan, child);
    const report: Buffer[] = [];
    collectReport(child, report);
    let seen = '';
    const drain = (): void => undefined;
    child.stderr?.on('data', drain);
    let discarded = false;
    const entry: WarmEntry = {
      key,
      workdir,
      prepared,
      child,
      report,
      isolation,
      readyMs: null,
      idle: null,
      ready: new Promise((resolve) => {
        const onData = (chunk: Buffer): void => {
          seen = (seen + chunk.toString('latin1')).slice(-4096);
          const ms = parseReady(seen);
          if (ms === null) return;
          child.stdout?.off('data', onData);
          child.stdout?.on('data', drain);
          entry.readyMs = ms;
          resolve(ms);
        };
        child.stdout?.on('data', onData);
        child.on('exit', () => {
          resolve(null);
          if (pool.get(key) === entry) pool.delete(key);
          if (entry.readyMs === null || !takenEntries.has(entry)) void entry.discard();
        });
        child.on('error', () => resolve(null));
      }),
      async discard(): Promise<void> {
        if (discarded) return;
        discarded = true;
        if (entry.idle) clearTimeout(entry.idle);
        if (pool.get(key) === entry) pool.delete(key);
        if (child.pid !== undefined && child.exitCode === null && child.signalCode === null) killTree(child.pid);
        await entry.ready;
        await prepared.cgroup?.remove();
        if (!config.keepWorkdir) await removeWorkdir(workdir);
      },
    };
    // Not used for a while: give its memory back.
    entry.idle = setTimeout(() => void entry.discard(), WARM_IDLE_MS);
    entry.idle.unref();
    child.unref();
    for (const s of [child.stdout, child.stderr, child.stdio[3], child.stdin]) (s as { unref?: () => void } | null)?.unref?.();
    return entry;
  }
  const takenEntries = new WeakSet<WarmEntry>();

  /** A ready pool entry for the key: `always` starts one and waits; `auto` takes only one that is ready. */
  async function takeWarm(key: string, req: RunRequest, interpreter: string, launcher: string | null, plan: SandboxPlan): Promise<WarmEntry | string> {
    let entry = pool.get(key);
    if (!entry && config.warmPool === 'always') {
      entry = await startWarm(key, req, interpreter, launcher, plan);
      pool.set(key, entry);
    }
    if (!entry) return 'the pool had no interpreter ready for this request (one is warming for the next run)';
    if (entry.readyMs === null) {
      if (config.warmPool !== 'always') return 'the pooled interpreter was still importing';
      // The entry's handles are unref'd (a warming pool must not keep a CLI alive); this wait must.
      const keepAlive = setInterval(() => undefined, 1000);
      try {
        await entry.ready;
      } finally {
        clearInterval(keepAlive);
      }
    }
    if (entry.readyMs === null || entry.child.exitCode !== null || entry.child.signalCode !== null) {
      void entry.discard();
      return 'the pooled interpreter was gone (killed or failed to start)';
    }
    pool.delete(key);
    takenEntries.add(entry);
    if (entry.idle) clearTimeout(entry.idle);
    return entry;
  }

  /** Starts a pool entry for the key in the background, unless one is there; errors only cost the next run its warmth. */
  function refill(key: string, req: RunRequest, interpreter: string, launcher: string | null, plan: SandboxPlan): void {
    if (config.warmPool !== 'auto' || closed || pool.has(key) || warming.has(key)) return;
    // Few keys at a time: drop the oldest entry beyond the cap.
    while (pool.size >= WARM_MAX_ENTRIES) {
      const oldest = pool.values().next().value as WarmEntry;
      void oldest.discard();
    }
    warming.add(key);
    startWarm(key, req, interpreter, launcher, plan).then(
      (entry) => {
        warming.delete(key);
        if (closed || pool.has(key)) void entry.discard();
        else pool.set(key, entry);
      },
      (err: unknown) => {
        warming.delete(key);
        log.debug({ err: (err as Error).message }, 'warm pool: cannot start an interpreter');
      },
    );
  }

  async function runWarm(
    entry: WarmEntry,
    req: RunRequest,
    plan: SandboxPlan,
    signal: AbortSignal | undefined,
  ): Promise<RunResult> {
    try {
      await writeRequestFiles(entry.workdir, req);
      await handWorkdirToSandbox(plan, entry.workdir);
      entry.child.stdout?.removeAllListeners('data');
      entry.child.stderr?.removeAllListeners('data');
      const go = `${JSON.stringify({ entry: req.entry, args: req.args, cpu: req.limits.cpuSeconds })}\n`;
      log.debug({ sandbox: plan.kind, network: req.network, labels: req.labels, warm: true }, 'starting script');
      return await finishRun(entry.prepared, req, plan, entry.isolation, signal, {
        child: entry.child,
        reportChunks: entry.report,
        go,
        importCpuMs: entry.readyMs ?? 0,
      }, ['warm start: the interpreter had imported torch and numpy in its sandbox before the run']);
    } finally {
      if (entry.child.pid !== undefined && entry.child.exitCode === null && entry.child.signalCode === null) killTree(entry.child.pid);
      if (!config.keepWorkdir) await removeWorkdir(entry.workdir);
      else log.info({ workdir: entry.workdir }, 'kept run work dir');
    }
  }

  /**
   * Spawns the sandbox and watches it to the end. With `warm`, the sandbox was spawned ahead by the pool and waits
   * for its go message: the watch (timer, captures) starts now, and the report lines it already wrote are kept.
   */
  function spawnAndWatch(
    { file, args, options }: { file: string; args: string[]; options: SpawnOptions },
    req: RunRequest,
    plan: SandboxPlan,
    signal: AbortSignal | undefined,
    warm?: { child: ChildProcess; reportChunks: Buffer[]; go: string; importCpuMs: number },
  ): Promise<Omit<RunResult, 'files' | 'isolation'> & { notes: string[] }> {
    const cap = req.limits.maxOutputBytes;
    const stdout = createOutputCapture(cap);
    const stderr = createOutputCapture(cap);
    const output = createOutputCapture(cap);
    const reportChunks: Buffer[] = warm?.reportChunks ?? [];
    const started = performance.now();

    return new Promise((resolveRun) => {
      // detached: the child leads its own process group, so one kill(-pid) reaches all it did not move away.
      const child = warm?.child ?? spawn(file, args, options);
      if (!warm) writeSeccomp(plan, child);
      let timedOut = false;
      let aborted = false;
      let spawnError: Error | null = null;
      let exitInfo: { code: number | null; signal: string | null; at: number } | null = null;
      let settled = false;

      const stop = (): void => {
        if (child.pid !== undefined) killTree(child.pid);
      };
      const timer = setTimeout(() => {
        timedOut = true;
        stop();
      }, req.limits.timeoutMs);
      const onAbort = (): void => {
        aborted = true;
        stop();
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      // An abort while the work dir was being written fired before the listener existed.
      if (signal?.aborted) onAbort();

      child.stdout?.on('data', (chunk: Buffer) => {
        stdout.push(chunk);
        output.push(chunk);
      });
      child.stderr?.on('data', (chunk: Buffer) => {
        stderr.push(chunk);
        output.push(chunk);
      });
      const reportStream = child.stdio[3];
      if (!warm) collectReport(child, reportChunks);
      if (warm) {
        child.stdin?.on('error', () => undefined);
        child.stdin?.end(warm.go);
        if (child.exitCode !== null || child.signalCode !== null) {
          exitInfo = { code: child.exitCode, signal: child.signalCode, at: performance.now() };
          setImmediate(finish);
        }
      }

      child.on('error', (err) => {
        spawnError = err;
        finish();
      });
      child.on('exit', (code, sig) => {
        exitInfo = { code, signal: sig, at: performance.now() };
        // Finished on its own: a limit that fires while the pipes drain must not relabel the run.
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        // Without a pid namespace, processes the script left behind would live on and hold our pipes open.
        if (plan.kind === 'none' && child.pid !== undefined) killTree(child.pid);
        setTimeout(() => {
          for (const s of [child.stdout, child.stderr, reportStream]) s?.destroy();
          finish();
        }, PIPE_GRACE_MS).unref();
      });
      child.on('close', () => finish());

      function finish(): void {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        const durationMs = Math.round(((exitInfo?.at ?? performance.now()) - started) * 10) / 10;
        const report = parseLauncherReport(Buffer.concat(reportChunks).toString('utf8'));
        const notes: string[] = [];
        let infra: InfraFailure | null = null;
        let exitCode: number | null = null;
        let sigName: string | null = null;
        if (aborted) {
          infra = { kind: 'aborted', message: 'run cancelled' };
          sigName = 'SIGKILL';
        } else if (timedOut) {
          sigName = 'SIGKILL';
          notes.push(`killed after the ${req.limits.timeoutMs} ms wall-clock limit`);
        } else if (spawnError) {
          infra = { kind: 'spawn_failed', message: `cannot start ${file}: ${(spawnError as Error).message}` };
        } else if (!report.started) {
          const why = stderr.text().trim().split('\n').slice(0, 3).join(' ') || `exit ${exitInfo?.code ?? exitInfo?.signal ?? 'unknown'}`;
          infra =
            plan.kind === 'none'
              ? { kind: 'spawn_failed', message: `the launcher did not start: ${why}` }
              : { kind: 'sandbox_failed', message: `the ${plan.kind} sandbox did not start: ${why}` };
        } else if (report.execError !== null) {
          infra = { kind: 'spawn_failed', message: `cannot execute the script: ${report.execError}` };
        } else if (report.exit) {
          exitCode = report.exit.exitCode;
          sigName = report.exit.signal;
        } else {
          // Started but never reported: the launcher itself died, so the script's own status is unknown.
          infra = {
            kind: 'sandbox_failed',
            message: `the launcher died before it reported the script's exit (exit ${exitInfo?.code ?? exitInfo?.signal ?? 'unknown'})`,
          };
        }
        // A warm interpreter's CPU before the run (its imports) is not the script's.
        const cpuMs = report.exit ? Math.max(0, report.exit.cpuMs - (warm?.importCpuMs ?? 0)) : null;
        if (sigName === 'SIGXCPU' || (sigName === 'SIGKILL' && !timedOut && !aborted && cpuMs !== null && cpuMs >= req.limits.cpuSeconds * 1000)) {
          notes.push(`stopped by the ${req.limits.cpuSeconds} s CPU-time limit`);
        }
        resolveRun({
          executor: 'local',
          exitCode,
          signal: sigName,
          timedOut,
          // Memory is capped by RLIMIT_DATA: allocations fail inside the script (MemoryError, "can't allocate
          // memory") instead of the kernel killing it, so that failure shows in the output, not here.
          oomKilled: false,
          durationMs,
          cpuMs,
          peakMemoryMb: report.exit?.peakMemoryMb ?? null,
          stdout: stdout.text(),
          stderr: stderr.text(),
          output: output.text(),
          stdoutBytes: stdout.bytes,
          stderrBytes: stderr.bytes,
          stdoutTruncated: stdout.truncated,
          stderrTruncated: stderr.truncated,
          outputCapBytes: cap,
          infra,
          notes,
        });
      }
    });
  }

  let closed = false;
  async function close(): Promise<void> {
    closed = true;
    await Promise.all([...pool.values()].map((e) => e.discard()));
  }

  return { name: 'local', run, close, warmUp };
}

/**
 * Where the script finds the request's workspace. Only bubblewrap can mount it read-only at its mount path;
 * without bubblewrap the script sees the host path itself, and the note says it could write there.
 */
async function resolveWorkspace(
  req: RunRequest,
  plan: SandboxPlan,
): Promise<{ seenAt: string; mount?: { hostPath: string; mountPath: string }; note?: string } | undefined> {
  if (!req.workspace) return undefined;
  const { hostPath } = req.workspace;
  const st = await stat(hostPath).catch(() => null);
  if (!st?.isDirectory()) throw new InvalidRunRequestError(`invalid run request: workspace ${hostPath} is not a directory`);
  if (plan.kind === 'bwrap') {
    const blocked = await unreachableBy(hostPath, plan.runAs, true);
    if (blocked) throw new SetupError(`workspace ${hostPath} is closed to the sandbox's uid: ${blocked} (REPGEN_SANDBOX_UID)`);
    const mountPath = req.workspace.mountPath ?? DEFAULT_WORKSPACE_MOUNT;
    return { seenAt: mountPath, mount: { hostPath, mountPath } };
  }
  return { seenAt: hostPath, note: `workspace ${hostPath} is not read-only: the ${plan.kind} sandbox cannot mount it` };
}

/** Keeps the launcher's report lines (fd 3), up to REPORT_CAP_BYTES: more is not the launcher's and is dropped. */
function collectReport(child: ChildProcess, chunks: Buffer[]): void {
  let bytes = 0;
  const stream = child.stdio[3];
  stream?.on('data', (chunk: Buffer) => {
    if (bytes >= REPORT_CAP_BYTES) return;
    chunks.push(chunk.subarray(0, REPORT_CAP_BYTES - bytes));
    bytes += chunk.length;
  });
  stream?.on('error', () => undefined);
}

/** What the run's isolation will be, with the caveats said out loud. */
function describeIsolation(plan: SandboxPlan, network: boolean): Isolation {
  const notes = [...plan.notes];
  if (plan.kind !== 'none') return { network: network ? 'host' : 'none', sandbox: plan.kind, notes };
  notes.push('no pid namespace: processes that leave the process group are found through /proc only');
  return { network: 'host', sandbox: 'none', notes };
}

function abortedResult(cap: number, isolation: Isolation, durationMs: number): RunResult {
  return {
    executor: 'local',
    exitCode: null,
    signal: null,
    timedOut: false,
    oomKilled: false,
    durationMs,
    cpuMs: null,
    peakMemoryMb: null,
    stdout: '',
    stderr: '',
    output: '',
    stdoutBytes: 0,
    stderrBytes: 0,
    stdoutTruncated: false,
    stderrTruncated: false,
    outputCapBytes: cap,
    files: [],
    isolation,
    infra: { kind: 'aborted', message: 'run cancelled before it started' },
  };
}

/** An absolute path to an executable interpreter, or an InterpreterNotFoundError saying what to set. */
export async function resolveInterpreter(name: string): Promise<string> {
  const candidates = name.includes('/') ? [isAbsolute(name) ? name : resolve(name)] : SAFE_PATH.split(':').map((d) => join(d, name));
  for (const candidate of candidates) {
    try {
      await access(candidate, constants.X_OK);
      if ((await stat(candidate)).isFile()) return candidate;
    } catch {
      // try the next
    }
  }
  throw new InterpreterNotFoundError(
    `Python interpreter not found: ${name} (set REPGEN_PYTHON or pass --python; Debian's torch is under /usr/bin/python3)`,
  );
}

/**
 * mkdir -p with a bounded walk up. Node's recursive mkdir loops forever under /proc (ENOENT for the child, EEXIST
 * for the parent, retry), and the work root is a setting a user can point anywhere.
 */
async function ensureDir(path: string, depth = 0): Promise<void> {
  try {
    await mkdir(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') {
      if ((await stat(path)).isDirectory()) return;
      throw err;
    }
    if (code !== 'ENOENT' || depth >= 32 || dirname(path) === path) throw err;
    await ensureDir(dirname(path), depth + 1);
    await mkdir(path);
  }
}

/** rm -rf that also gets through folders the script made unreadable (chmod 000) when we are not root. */
async function removeWorkdir(workdir: string): Promise<void> {
  try {
    await rm(workdir, { recursive: true, force: true });
    return;
  } catch {
    // fall through: restore permissions, then retry
  }
  async function unlock(dir: string): Promise<void> {
    await chmod(dir, 0o700).catch(() => undefined);
    const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
    for (const e of entries) if (e.isDirectory()) await unlock(join(dir, e.name));
  }
  await unlock(workdir);
  await rm(workdir, { recursive: true, force: true }).catch(() => undefined);
}
