import { spawn } from 'node:child_process';
import { buildSandboxArgv, OUTER_ENV, sandboxSpawn, writeSeccomp, type SandboxPlan } from '../exec/sandbox.js';
import { FORWARDER_PY } from './index-proxy.js';

/**
 * One command of an env build (uv, a build command) run in the project's sandbox: bwrap with its usual read-only
 * system view, `writable` the one host folder it may write (the uv cache and the env being built live under it, so
 * hard links between them work), a cleared environment, and the network reduced to the index proxy when one is
 * given: a fresh network namespace whose only way out is the proxy socket (src/env/index-proxy.ts).
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
  /** The interpreter that runs the forwarder when `proxySocket` is set. */
  forwarderPython: string;
  timeoutMs: number;
  signal: AbortSignal;
}

export interface CommandOutcome {
  code: number | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  aborted: boolean;
}

const MAX_LOG = 1 << 20;

export function runSandboxed(cmd: SandboxedCommand): Promise<CommandOutcome> {
  if (cmd.signal.aborted)
    return Promise.resolve({ code: null, stdout: '', stderr: 'cancelled before it started', timedOut: false, aborted: true });
  const viaProxy = cmd.proxySocket !== null && !cmd.offline;
  const inner =
    viaProxy && cmd.proxySocket ? [cmd.forwarderPython, '-I', '-S', '-c', FORWARDER_PY, cmd.proxySocket, ...cmd.argv] : cmd.argv;
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
  const { file, args, options } = sandboxSpawn(cmd.plan, argv, null, { ...base, detached: true });
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
      resolve({ code, stdout, stderr: stderr + extra, timedOut, aborted });
    };
    child.on('error', (err) => finish(null, `\n${err.message}`));
    child.on('close', (code) => finish(code));
  });
}
