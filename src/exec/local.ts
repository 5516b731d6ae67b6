import { spawn, type SpawnOptions } from 'node:child_process';
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
export function createLocalExecutor(configInput: Omit<LocalExecConfigInput, 'kind'> & { kind?: 'local' } = {}, deps: LocalExecutorDeps = {}): ScriptExecutor {
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

  async function run(input: RunRequestInput, signal?: AbortSignal): Promise<RunResult> {
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
    const isolation = describeIsolation(plan, req.network);
    if (signal?.aborted) return abortedResult(req.limits.maxOutputBytes, isolation, 0);

    let workdir: string;
    try {
      workdir = await mkdtemp(join(config.workRoot, 'repgen-run-'));
    } catch (err) {
      throw new SetupError(`cannot create a work dir under ${config.workRoot} (REPGEN_WORK_ROOT): ${(err as Error).message}`);
    }
    try {
      return await runIn(workdir, req, interpreter, launcher, plan, isolation, signal);
    } finally {
      if (!config.keepWorkdir) await removeWorkdir(workdir);
      else log.info({ workdir }, 'kept run work dir');
    }
  }

  async function runIn(
    workdir: string,
    req: RunRequest,
    interpreter: string,
    launcher: string | null,
    plan: SandboxPlan,
    isolation: Isolation,
    signal: AbortSignal | undefined,
  ): Promise<RunResult> {
    const outDir = join(workdir, 'out');
    await mkdir(outDir);
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

    const scriptArgv = [interpreter, req.entry, ...req.args];
    const target =
      req.setup.length > 0
        ? ['/bin/sh', '-c', `set -e\n${req.setup.join('\n')}\nexec "$@"`, 'repgen-setup', ...scriptArgv]
        : scriptArgv;
    const launcherArgs = [
      String(req.limits.cpuSeconds),
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
    log.debug({ sandbox: plan.kind, network: req.network, labels: req.labels }, 'starting script');
    let result;
    try {
      const spawnArgs = sandboxSpawn(plan, { file, args }, cgroup, { cwd: workdir, env, detached: true });
      result = await spawnAndWatch(spawnArgs, workdir, req, plan, signal);
      if (cgroup && (await cgroup.oomKills()) > 0) {
        result.oomKilled = true;
        result.notes.push(`killed by the kernel: the run's ${req.limits.memoryMb} MB memory limit (whole process tree) was reached`);
      }
    } finally {
      await cgroup?.remove();
    }

    const collected = await collectOutputFiles(outDir, { inlineBytes: config.inlineFileBytes, maxFiles: config.maxOutputFiles });
    const notes = [...result.notes, ...collected.notes];
    if (req.gpus > 0) notes.push(`${req.gpus} GPU(s) requested: the local executor runs on CPU only`);
    const { notes: _ignored, ...rest } = result;
    return { ...rest, files: collected.files, isolation, ...(notes.length ? { notes } : {}) };
  }

  function spawnAndWatch(
    { file, args, options }: { file: string; args: string[]; options: SpawnOptions },
    workdir: string,
    req: RunRequest,
    plan: SandboxPlan,
    signal: AbortSignal | undefined,
  ): Promise<Omit<RunResult, 'files' | 'isolation'> & { notes: string[] }> {
    const cap = req.limits.maxOutputBytes;
    const stdout = createOutputCapture(cap);
    const stderr = createOutputCapture(cap);
    const output = createOutputCapture(cap);
    const reportChunks: Buffer[] = [];
    const started = performance.now();

    return new Promise((resolveRun) => {
      // detached: the child leads its own process group, so one kill(-pid) reaches all it did not move away.
      const child = spawn(file, args, options);
      writeSeccomp(plan, child);
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
      // The launcher writes two short lines; anything beyond the cap is not the launcher's and is dropped.
      let reportBytes = 0;
      reportStream?.on('data', (chunk: Buffer) => {
        if (reportBytes >= REPORT_CAP_BYTES) return;
        reportChunks.push(chunk.subarray(0, REPORT_CAP_BYTES - reportBytes));
        reportBytes += chunk.length;
      });
      reportStream?.on('error', () => undefined);

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
        const cpuMs = report.exit?.cpuMs ?? null;
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

  return { name: 'local', run };
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
