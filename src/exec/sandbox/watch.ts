import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { killTree } from './kill-tree.js';
import { parseLauncherReport } from './launcher.js';
import { createOutputCapture, type OutputCapture } from '../output-capture.js';
import { writeSeccomp, type SandboxPlan } from './sandbox.js';
import type { InfraFailure, RunRequest, RunResult } from '../types.js';

/** Once the launcher has exited, how long to wait for pipes held open by leftover processes. */
const PIPE_GRACE_MS = 2_000;

/** The launcher's report is two short JSON lines; more than this is not read. */
const REPORT_CAP_BYTES = 64 * 1024;

/** What a watched run came to, before its output files and isolation are added. */
export type WatchedRun = Omit<RunResult, 'files' | 'isolation'> & { notes: string[] };

/** What to spawn for a run: the outer command, its argv and spawn options. */
export interface SpawnArgs {
  file: string;
  args: string[];
  options: SpawnOptions;
}

/**
 * The wall-clock limit and the cancel of a run: either kills the whole tree of `child`; clear() once the run is over.
 * `deadline` (performance.now() ms): when the run's limit ends, counted from the request (what a warm pool spent
 * before the script started counts); without it, the limit counts from now.
 */
export function watchLimits(
  child: ChildProcess,
  req: RunRequest,
  signal: AbortSignal | undefined,
  deadline?: number,
): { readonly timedOut: boolean; readonly aborted: boolean; clear(): void } {
  const state = { timedOut: false, aborted: false };
  const stop = (): void => {
    if (child.pid !== undefined) killTree(child.pid);
  };
  const ms = deadline === undefined ? req.limits.timeoutMs : Math.max(1, deadline - performance.now());
  const timer = setTimeout(() => {
    state.timedOut = true;
    stop();
  }, ms);
  const onAbort = (): void => {
    state.aborted = true;
    stop();
  };
  signal?.addEventListener('abort', onAbort, { once: true });
  // An abort while the work dir was being written fired before the listener existed.
  if (signal?.aborted) onAbort();
  return {
    get timedOut() {
      return state.timedOut;
    },
    get aborted() {
      return state.aborted;
    },
    clear(): void {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    },
  };
}

/** The note of a run the CPU-time limit stopped (SIGXCPU, or the SIGKILL past the hard limit), or null. */
export function cpuLimitNote(
  sigName: string | null,
  limits: { timedOut: boolean; aborted: boolean },
  cpuMs: number | null,
  cpuSeconds: number,
): string | null {
  const killedAtLimit = sigName === 'SIGKILL' && !limits.timedOut && !limits.aborted && cpuMs !== null && cpuMs >= cpuSeconds * 1000;
  return sigName === 'SIGXCPU' || killedAtLimit ? `stopped by the ${cpuSeconds} s CPU-time limit` : null;
}

/** What a run's three captures hold, as the result's fields. */
export function capturedOutput(
  stdout: OutputCapture,
  stderr: OutputCapture,
  output: OutputCapture,
  cap: number,
): Pick<
  WatchedRun,
  'stdout' | 'stderr' | 'output' | 'stdoutBytes' | 'stderrBytes' | 'stdoutTruncated' | 'stderrTruncated' | 'outputCapBytes'
> {
  return {
    stdout: stdout.text(),
    stderr: stderr.text(),
    output: output.text(),
    stdoutBytes: stdout.bytes,
    stderrBytes: stderr.bytes,
    stdoutTruncated: stdout.truncated,
    stderrTruncated: stderr.truncated,
    outputCapBytes: cap,
  };
}

/** Spawns the sandbox and watches it to the end. */
export function spawnAndWatch(
  { file, args, options }: SpawnArgs,
  req: RunRequest,
  plan: SandboxPlan,
  signal: AbortSignal | undefined,
  deadline?: number,
): Promise<WatchedRun> {
  const cap = req.limits.maxOutputBytes;
  const stdout = createOutputCapture(cap);
  const stderr = createOutputCapture(cap);
  const output = createOutputCapture(cap);
  const reportChunks: Buffer[] = [];
  // With a deadline, the run's duration counts on the same clock as its limit: from the request.
  const started = deadline === undefined ? performance.now() : deadline - req.limits.timeoutMs;

  return new Promise((resolveRun) => {
    // detached: the child leads its own process group, so one kill(-pid) reaches all it did not move away.
    const child = spawn(file, args, options);
    writeSeccomp(plan, child);
    const limits = watchLimits(child, req, signal, deadline);
    let spawnError: Error | null = null;
    let exitInfo: { code: number | null; signal: string | null; at: number } | null = null;
    let settled = false;

    child.stdout?.on('data', (chunk: Buffer) => {
      stdout.push(chunk);
      output.push(chunk);
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr.push(chunk);
      output.push(chunk);
    });
    const reportStream = child.stdio[3];
    collectReport(child, reportChunks);

    child.on('error', (err) => {
      spawnError = err;
      finish();
    });
    child.on('exit', (code, sig) => {
      exitInfo = { code, signal: sig, at: performance.now() };
      // Finished on its own: a limit that fires while the pipes drain must not relabel the run.
      limits.clear();
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
      limits.clear();
      const { timedOut, aborted } = limits;
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
      const cpuMs = report.exit ? report.exit.cpuMs : null;
      const cpuNote = cpuLimitNote(sigName, limits, cpuMs, req.limits.cpuSeconds);
      if (cpuNote) notes.push(cpuNote);
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
        ...capturedOutput(stdout, stderr, output, cap),
        infra,
        notes,
      });
    }
  });
}

/** Keeps the launcher's report lines (fd 3), up to REPORT_CAP_BYTES: more is not the launcher's and is dropped. */
export function collectReport(child: ChildProcess, chunks: Buffer[]): void {
  let bytes = 0;
  const stream = child.stdio[3];
  stream?.on('data', (chunk: Buffer) => {
    if (bytes >= REPORT_CAP_BYTES) return;
    chunks.push(chunk.subarray(0, REPORT_CAP_BYTES - bytes));
    bytes += chunk.length;
  });
  stream?.on('error', () => undefined);
}
