import type { ChildProcess } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { killTree } from './kill-tree.js';
import { createOutputCapture } from './output-capture.js';
import { capturedOutput, cpuLimitNote, watchLimits, type WatchedRun } from './local-watch.js';
import type { RunRequest } from './types.js';
import type { EndFrame, Frame, PreloadFrame } from './fork-server-frames.js';

/** A fork server as a run sees it: its process and the hooks its frames and its exit reach the run through. */
export interface ServerHandle {
  child: ChildProcess;
  /** Set for the run in progress: every frame after the ready one. */
  onFrame: ((frame: Frame) => void) | null;
  /** Set for the run in progress: the server exited. */
  onExit: (() => void) | null;
}

/** What the server's imports ahead printed, replayed at the start of each run that imports them (a cold run prints it). */
export interface Prelude {
  stdout: Buffer;
  stderr: Buffer;
}

function exited(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null;
}

/**
 * Asks a ready fork server to import `modules` in itself, ahead of the run it forks next (warm-pool.ts, `_preload`).
 * Null when the server died, `ms` passed or `signal` fired first: the caller discards the server.
 */
export function importAhead(
  server: ServerHandle,
  modules: string[],
  ms: number,
  signal: AbortSignal | undefined,
): Promise<PreloadFrame | null> {
  return new Promise((resolve) => {
    let settled = false;
    const finish = (value: PreloadFrame | null): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      server.onFrame = null;
      server.onExit = null;
      resolve(value);
    };
    const onAbort = (): void => finish(null);
    const timer = setTimeout(onAbort, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
    server.onFrame = (frame) => finish(frame.kind === 'preload' ? frame.preload : null);
    server.onExit = onAbort;
    if (signal?.aborted || exited(server.child)) finish(null);
    else server.child.stdin?.write(`${JSON.stringify({ preload: modules })}\n`);
  });
}

/** How a forked run ended: watched to its end, or the server died before it said the run was over. */
export type ForkedRun = { watched: WatchedRun; end: EndFrame | null } | { died: string };

/**
 * Sends one run to a ready fork server and watches it: its output from the server's frames, its end from the
 * `X` frame. A timeout or a cancel kills the whole sandbox (the server with it: it is not reused); a server that
 * dies by itself before the end frame leaves the run's outcome unknown, and the caller runs it cold.
 */
export function watchForkedRun(
  server: ServerHandle,
  req: RunRequest,
  go: string,
  signal: AbortSignal | undefined,
  prelude: Prelude | null = null,
): Promise<ForkedRun> {
  const cap = req.limits.maxOutputBytes;
  const stdout = createOutputCapture(cap);
  const stderr = createOutputCapture(cap);
  const output = createOutputCapture(cap);
  if (prelude) {
    for (const [capture, data] of [
      [stdout, prelude.stdout],
      [stderr, prelude.stderr],
    ] as const) {
      if (data.length === 0) continue;
      capture.push(data);
      output.push(data);
    }
  }
  const { child } = server;
  const started = performance.now();
  return new Promise((resolve) => {
    let bad: string | null = null;
    let end: EndFrame | null = null;
    let endAt: number | null = null;
    let settled = false;
    const limits = watchLimits(child, req, signal);
    server.onFrame = (frame) => {
      if (frame.kind === 'stdout' || frame.kind === 'stderr') {
        (frame.kind === 'stdout' ? stdout : stderr).push(frame.data);
        output.push(frame.data);
      } else if (frame.kind === 'end') {
        end = frame.end;
        endAt = performance.now();
        finish();
      } else {
        bad = frame.kind === 'bad' ? frame.why : `an unexpected ${frame.kind} frame during a run`;
        if (child.pid !== undefined) killTree(child.pid);
      }
    };
    server.onExit = () => finish();
    if (exited(child)) setImmediate(finish);
    // The server's stdin has its one error handler from the pool: a listener per run would pile up on it.
    else child.stdin?.write(go);

    function finish(): void {
      if (settled) return;
      settled = true;
      limits.clear();
      const { timedOut, aborted } = limits;
      server.onFrame = null;
      server.onExit = null;
      if (!end && !timedOut && !aborted) {
        const how = child.exitCode !== null ? `exit ${child.exitCode}` : (child.signalCode ?? 'unknown');
        resolve({ died: bad ?? `the warm interpreter died during the run (${how})` });
        return;
      }
      const e = end as EndFrame | null;
      const notes: string[] = [];
      let sigName = e?.signal ?? null;
      let exitCode = e?.exitCode ?? null;
      if (!e) {
        sigName = 'SIGKILL';
        exitCode = null;
        if (timedOut) notes.push(`killed after the ${req.limits.timeoutMs} ms wall-clock limit`);
      }
      const cpuMs = e ? Math.round(e.cpuMs) : null;
      const cpuNote = cpuLimitNote(sigName, limits, cpuMs, req.limits.cpuSeconds);
      if (cpuNote) notes.push(cpuNote);
      const durationMs = Math.round(((endAt ?? performance.now()) - started) * 10) / 10;
      resolve({
        end: e,
        watched: {
          executor: 'local',
          exitCode,
          signal: sigName,
          timedOut,
          oomKilled: false,
          durationMs,
          cpuMs,
          peakMemoryMb: e ? Math.round((e.maxRssKb / 1024) * 10) / 10 : null,
          ...capturedOutput(stdout, stderr, output, cap),
          infra: aborted ? { kind: 'aborted', message: 'run cancelled' } : null,
          notes,
        },
      });
    }
  });
}
