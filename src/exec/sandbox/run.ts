import { availableParallelism } from 'node:os';
import { mkdir, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { SetupError } from '../../errors.js';
import { holdDir, UntrustedPathError, writeNewFile, type HeldDir } from '../../host/untrusted-tree.js';
import type { Logger } from '../../log.js';
import { createRunCgroup, type RunCgroup } from './cgroup.js';
import { collectOutputFiles } from '../collect-output-files.js';
import type { LocalExecConfig } from '../config.js';
import { InvalidRunRequestError } from '../errors.js';
import { LAUNCHER_SOURCE } from './launcher.js';
import { spawnAndWatch, type SpawnArgs } from './watch.js';
import { buildSandboxArgv, handWorkdirToSandbox, OUTER_ENV, sandboxSpawn, unreachableBy, type SandboxPlan } from './sandbox.js';
import { buildScriptEnv } from './script-env.js';
import { DEFAULT_WORKSPACE_MOUNT, type Isolation, type RunRequest, type RunResult } from '../types.js';

/** What every run of one local executor shares: its settings, its logger, the environment allowlisted names come from. */
export interface RunContext {
  config: LocalExecConfig;
  log: Logger;
  hostEnv: NodeJS.ProcessEnv;
}

/** Paths every bwrap sandbox already sees; an interpreter under them needs no extra bind. */
const BOUND_PREFIXES = ['/usr/', '/bin/', '/sbin/', '/lib/', '/lib64/'];

/** A run's sandbox, ready to spawn. */
export interface Prepared {
  spawnArgs: SpawnArgs;
  cgroup: RunCgroup | null;
  outDir: string;
}

/** What a run is started with inside its sandbox. */
export interface RunShape {
  req: RunRequest;
  interpreter: string;
  /** The native launcher's path, or null for the Python launcher. */
  launcher: string | null;
  plan: SandboxPlan;
  /** performance.now() ms when the run's wall-clock limit ends, counted from the request; unset: from the script's start. */
  deadline?: number;
  /** Told the folder the script writes in once it is known (the work folder's disk limit watches it). */
  watchWorkDir?: (dir: string) => void;
}

/**
 * Everything of a run but its files: out dir, environment, launcher and sandbox argv, ownership, cgroup. The cold
 * path writes the files first; a fork server gets them per run, in a folder of its work dir.
 */
export async function prepareSandbox(
  ctx: RunContext,
  workdir: string,
  { req, interpreter, launcher, plan }: RunShape,
  isolation: Isolation,
  target: string[],
  cpuSeconds: number,
  stdin: 'pipe' | 'ignore',
): Promise<Prepared> {
  const { config, log, hostEnv } = ctx;
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
    files: req.files,
    threads: config.scriptThreads ?? availableParallelism(),
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
    // One file never passes the work folder's own limit (work-dir-quota.ts watches their sum).
    String(Math.min(config.maxFileMb, config.workMaxMb) * 1024 * 1024),
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
    env,
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
  // With bubblewrap the script's env is set inside (--setenv): bwrap and what starts it get PATH only. Without a
  // sandbox the script is the spawned process itself and gets its env directly.
  const outerEnv = plan.kind === 'bwrap' ? { ...OUTER_ENV } : env;
  const spawnArgs = sandboxSpawn(plan, { file, args }, cgroup, { cwd: workdir, env: outerEnv, detached: true }, stdin);
  return { spawnArgs, cgroup, outDir };
}

/**
 * Writes the request's files into the work dir; a collision of two paths is the request's fault. Each file is new
 * (O_EXCL) and no link is followed on the way (src/host/untrusted-tree.ts): a warm server's folder is the sandbox's.
 */
export async function writeRequestFiles(workdir: string | HeldDir, req: RunRequest): Promise<void> {
  const dir = typeof workdir === 'string' ? await holdDir(workdir) : workdir;
  try {
    for (const file of req.files) {
      try {
        await writeNewFile(dir, file.path, file.content);
      } catch (err) {
        // Two files whose paths collide ('a' and 'a/b.py', or one path twice) are the request's fault; a full disk is not.
        const code = (err as NodeJS.ErrnoException).code;
        if (code === 'EEXIST' || code === 'ENOTDIR' || code === 'EISDIR' || err instanceof UntrustedPathError) {
          throw new InvalidRunRequestError(`invalid run request: cannot write ${file.path}: it collides with another file's path`);
        }
        throw new SetupError(`cannot write ${file.path} into the work dir: ${(err as Error).message}`);
      }
    }
  } finally {
    if (typeof workdir === 'string') await dir.close();
  }
}

/** Watches a prepared run to its end, then reads the OOM counter and the output files. */
export async function finishRun(
  ctx: RunContext,
  prepared: Prepared,
  req: RunRequest,
  plan: SandboxPlan,
  isolation: Isolation,
  signal: AbortSignal | undefined,
  extraNotes: string[] = [],
  deadline?: number,
): Promise<RunResult> {
  const { config } = ctx;
  let result;
  try {
    result = await spawnAndWatch(prepared.spawnArgs, req, plan, signal, deadline);
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

/**
 * Where the script finds the request's workspace. Only bubblewrap can mount it read-only at its mount path;
 * without bubblewrap the script sees the host path itself, and the note says it could write there.
 */
export async function resolveWorkspace(
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
export function describeIsolation(plan: SandboxPlan, network: boolean): Isolation {
  const notes = [...plan.notes];
  if (plan.kind !== 'none') return { network: network ? 'host' : 'none', sandbox: plan.kind, notes };
  notes.push('no pid namespace: processes that leave the process group are found through /proc only');
  return { network: 'host', sandbox: 'none', notes };
}

export function abortedResult(cap: number, isolation: Isolation, durationMs: number): RunResult {
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
