import { spawn } from 'node:child_process';
import { buildSandboxArgv, OUTER_ENV, sandboxSpawn, writeSeccomp, type SandboxPlan } from '../../exec/sandbox/sandbox.js';
import { createRunCgroup, type RunCgroup } from '../../exec/sandbox/cgroup.js';
import { workDirQuota } from '../../exec/local/work-dir-quota.js';
import { BUILD_DISK_MB, BUILD_FILE_BYTES, buildLimitNote, limitsArgv, type BuildLimits } from './build-limits.js';
import { FORWARDER_PY } from './index-proxy.js';

/**
 * One command of an env build (uv, a build command) run in the project's sandbox: bwrap with its usual read-only
 * system view, `writable` the one host folder it may write (the uv cache and the env being built live under it, so
 * hard links between them work), a cleared environment, and the network reduced to the index proxy when one is
 * given: a fresh network namespace whose only way out is the proxy socket (src/env/sandboxed/index-proxy.ts).
 */
export interface SandboxedCommand {
  plan: SandboxPlan;
  argv: string[];
  /** The whole environment inside (bwrap --clearenv): nothing of RepGen's own environment is passed on. */
  env: Record<string, string>;
  writable: string;
  readOnlyPaths: string[];
  /** The index proxy's socket (under `writable`), or null to share the host's network. */
  proxySocket: string | null;
  /** No network at all (a fresh namespace with loopback only, no forwarder): installs from uv's cache. */
  offline?: boolean;
  /** A cgroup for the tree. Off only for a step that runs no third-party code (uv linking from its cache). @defaultValue true */
  limits?: boolean;
  /** The interpreter that runs the forwarder when `proxySocket` is set. */
  forwarderPython: string;
  timeoutMs: number;
  /** Memory ceiling of the step's cgroup, and of each of its processes (build-limits.ts). @defaultValue BUILD_MEMORY_BYTES */
  memoryBytes?: number;
  /** Disk the `writable` folder may hold, in MB (REPGEN_ENV_BUILD_MAX_MB). @defaultValue BUILD_DISK_MB */
  diskMb?: number;
  /** The rlimits of each process (build-limits.ts); each unset one takes its default. */
  rlimits?: Partial<Omit<BuildLimits, 'memoryBytes' | 'diskMb'>>;
  signal: AbortSignal;
}

/**
 * Where an env build's steps run: {@link runSandboxed} here (bubblewrap), or a Job per step on Kubernetes
 * (src/exec/kubernetes/env-build-runner.ts, wired by src/pipeline/stages/env/default-env-ports.ts).
 */
export type BuildStepRunner = (cmd: SandboxedCommand) => Promise<CommandOutcome>;

export interface CommandOutcome {
  code: number | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  aborted: boolean;
}

const MAX_LOG = 1 << 20;

/** Memory of one build step's whole process tree (the cgroup's ceiling). @defaultValue 8 GiB */
export const BUILD_MEMORY_BYTES = 8 * 1024 ** 3;
/** Processes and threads of one build step (a compiler's jobs, uv's workers). */
export const BUILD_PIDS = 2048;

/** The limits a step runs under: its own where set, else the defaults (CPU: twice the wall-clock ceiling, for threads). */
export function stepLimits(cmd: Pick<SandboxedCommand, 'memoryBytes' | 'diskMb' | 'rlimits' | 'timeoutMs'>): BuildLimits {
  return {
    cpuSeconds: cmd.rlimits?.cpuSeconds ?? Math.ceil((2 * cmd.timeoutMs) / 1000),
    memoryBytes: cmd.memoryBytes ?? BUILD_MEMORY_BYTES,
    fileBytes: cmd.rlimits?.fileBytes ?? BUILD_FILE_BYTES,
    processes: cmd.rlimits?.processes ?? BUILD_PIDS,
    diskMb: cmd.diskMb ?? BUILD_DISK_MB,
  };
}

export async function runSandboxed(cmd: SandboxedCommand): Promise<CommandOutcome> {
  if (cmd.signal.aborted) return { code: null, stdout: '', stderr: 'cancelled before it started', timedOut: false, aborted: true };
  const limits = stepLimits(cmd);
  // The folder the step writes is on the host's disk, bounded as a run's work folder is (a build's holds uv's cache).
  const quota = workDirQuota(limits.diskMb, { what: "the build's folder", setting: 'REPGEN_ENV_BUILD_MAX_MB', maxEntries: 1_000_000 });
  quota.watch(cmd.writable);
  // Like a run: the whole tree in a cgroup with a memory and process ceiling, where the host gives one.
  const cgroup =
    cmd.plan.cgroups && cmd.limits !== false
      ? await createRunCgroup(cmd.plan.cgroups, { memoryBytes: cmd.memoryBytes ?? BUILD_MEMORY_BYTES, pids: BUILD_PIDS }).catch(() => null)
      : null;
  try {
    const out = await spawnSandboxed(cmd, cgroup, limits, quota.signal);
    const oom = cgroup ? await cgroup.oomKills().catch(() => 0) : 0;
    if (oom > 0)
      out.stderr += `\nrepgen: the build ran out of memory (${Math.round((cmd.memoryBytes ?? BUILD_MEMORY_BYTES) / 1024 ** 3)} GiB ceiling)`;
    else if (quota.reason) out.stderr += `\nrepgen: the build step was ${quota.reason}`;
    else if (!out.timedOut && !out.aborted) {
      const note = buildLimitNote(out, limits);
      if (note) out.stderr += `\n${note}`;
    }
    return out;
  } finally {
    quota.stop();
    await cgroup?.remove().catch(() => undefined);
  }
}

function spawnSandboxed(cmd: SandboxedCommand, cgroup: RunCgroup | null, limits: BuildLimits, disk: AbortSignal): Promise<CommandOutcome> {
  const viaProxy = cmd.proxySocket !== null && !cmd.offline;
  // The limits hold for the step's command and what it starts, not for the forwarder (RepGen's, started before them).
  const limited = [...limitsArgv(cmd.forwarderPython, limits), ...cmd.argv];
  const inner = viaProxy && cmd.proxySocket ? [cmd.forwarderPython, '-I', '-S', '-c', FORWARDER_PY, cmd.proxySocket, ...limited] : limited;
  const argv = buildSandboxArgv({
    plan: cmd.plan,
    network: cmd.proxySocket === null && !cmd.offline,
    workdir: cmd.writable,
    readOnlyPaths: cmd.readOnlyPaths,
    tmpBytes: 512 << 20,
    inner,
    env: cmd.env,
  });
  const base = cmd.plan.kind === 'none' ? { cwd: cmd.writable, env: cmd.env } : { cwd: cmd.writable, env: { ...OUTER_ENV } };
  const { file, args, options } = sandboxSpawn(cmd.plan, argv, cgroup, { ...base, detached: true });
  return new Promise((resolve) => {
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    let aborted = false;
    const child = spawn(file, args, options);
    writeSeccomp(cmd.plan, child);
    const kill = (): void => {
      try {
        if (child.pid) process.kill(-child.pid, 'SIGKILL');
      } catch {
        child.kill('SIGKILL');
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      kill();
    }, cmd.timeoutMs);
    const onAbort = (): void => {
      aborted = true;
      kill();
    };
    cmd.signal.addEventListener('abort', onAbort, { once: true });
    // Past its disk ceiling the step is stopped, as a run past its work folder's (the caller adds the reason).
    disk.addEventListener('abort', kill, { once: true });
    child.stdout?.on('data', (c: Buffer) => {
      if (stdout.length < MAX_LOG) stdout += c.toString('utf8');
    });
    child.stderr?.on('data', (c: Buffer) => {
      stderr += c.toString('utf8');
      if (stderr.length > MAX_LOG) stderr = stderr.slice(-MAX_LOG / 2);
    });
    const finish = (code: number | null, extra = ''): void => {
      clearTimeout(timer);
      cmd.signal.removeEventListener('abort', onAbort);
      disk.removeEventListener('abort', kill);
      resolve({ code, stdout, stderr: stderr + extra, timedOut, aborted });
    };
    child.on('error', (err) => finish(null, `\n${err.message}`));
    child.on('close', (code) => finish(code));
  });
}
