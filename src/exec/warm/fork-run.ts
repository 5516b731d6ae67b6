import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { killTree } from '../sandbox/kill-tree.js';
import { createOutputCapture } from '../output-capture.js';
import { capturedOutput, cpuLimitNote, watchLimits, type WatchedRun } from '../sandbox/watch.js';
import { InvalidRunRequestError } from '../errors.js';
import { describeIsolation, resolveWorkspace, writeRequestFiles, type RunShape } from '../sandbox/run.js';
import { handWorkdirToSandbox } from '../sandbox/sandbox.js';
import { holdSubdir, makeFreshDir, type HeldDir } from '../../host/untrusted-tree.js';
import { collectOutputFiles, type CollectOptions } from '../collect-output-files.js';
import { buildScriptEnv } from '../sandbox/script-env.js';
import type { Isolation, OutputFile, RunRequest } from '../types.js';
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
 * Asks a ready fork server to import `modules` in itself, ahead of the run it forks next (fork-server.ts, `_preload`).
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

/**
 * A run's files written into a folder of its own in the server's work dir (`runName`), its isolation and the line
 * that asks the server to fork it; a string when that folder cannot take the files: the server goes and the run
 * starts cold. The server's sandbox can write its work dir, and has run the script's leading imports before this:
 * the run's folder must be new (a name planted there is refused, never entered), and nothing in it is written or
 * chowned through a link (src/host/untrusted-tree.ts). Colliding paths are the request's fault, cold or warm.
 */
export async function prepareForkedRun(
  hostEnv: NodeJS.ProcessEnv,
  { req, interpreter, plan }: RunShape,
  serverDir: HeldDir,
  runName: string,
  threads: number,
): Promise<{ isolation: Isolation; go: string } | string> {
  const runDir = join(serverDir.path, runName);
  const outDir = join(runDir, 'out');
  try {
    const run = await makeFreshDir(serverDir, runName);
    try {
      await (await makeFreshDir(run, 'out', 0o755)).close();
      await writeRequestFiles(run, req);
      await handWorkdirToSandbox(plan, run);
    } finally {
      await run.close();
    }
  } catch (err) {
    if (err instanceof InvalidRunRequestError) throw err;
    return `the warm interpreter's work dir could not take the run's files (${(err as Error).message.split('\n')[0]})`;
  }
  const isolation = describeIsolation(plan, req.network);
  const workspace = await resolveWorkspace(req, plan);
  if (workspace?.note) isolation.notes.push(workspace.note);
  const { env, notes } = buildScriptEnv({
    hostEnv,
    env: req.env,
    envAllowlist: req.envAllowlist,
    seed: req.seed,
    files: req.files,
    threads,
    workdir: runDir,
    outDir,
    interpreter,
    tmpDir: undefined,
    workspace: workspace?.seenAt,
  });
  isolation.notes.push(...notes);
  return { isolation, go: `${JSON.stringify({ dir: runDir, entry: req.entry, args: req.args, cpu: req.limits.cpuSeconds, env })}\n` };
}

/** The run's output files, reached from the server's work dir the host holds: the run's folder may be a link now. */
export async function collectRunOutput(
  serverDir: HeldDir,
  runName: string,
  options: CollectOptions,
): Promise<{ files: OutputFile[]; notes: string[] }> {
  let run: HeldDir;
  try {
    run = await holdSubdir(serverDir, runName);
  } catch {
    return { files: [], notes: ["$REPGEN_OUT is gone: the script removed or replaced its run's folder"] };
  }
  try {
    return await collectOutputFiles({ dir: run, name: 'out' }, options);
  } finally {
    await run.close();
  }
}

/**
 * How a forked run ended: watched to its end (or to the server's death after it forked the script: the outcome is
 * then an infrastructure failure), or the server died before it forked the script (`died`: the caller may start it
 * cold, the script never ran).
 */
export type ForkedRun = { watched: WatchedRun; end: EndFrame | null } | { died: string };

/**
 * Sends one run to a ready fork server and watches it: its output from the server's frames, its start from the
 * `S` frame, its end from the `X` frame. A timeout or a cancel kills the whole sandbox (the server with it: it is
 * not reused). A server that dies by itself before the end frame leaves the run's outcome unknown: before the `S`
 * frame the script never ran, and the caller runs it cold; after it the script ran (and may have had effects): it
 * is never run again, the result says the server died. `deadline`: see watchLimits.
 */
export function watchForkedRun(
  server: ServerHandle,
  req: RunRequest,
  go: string,
  signal: AbortSignal | undefined,
  prelude: Prelude | null = null,
  deadline?: number,
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
  // With a deadline, the run's duration counts on the same clock as its limit: from the request.
  const started = deadline === undefined ? performance.now() : deadline - req.limits.timeoutMs;
  return new Promise((resolve) => {
    let bad: string | null = null;
    let end: EndFrame | null = null;
    let endAt: number | null = null;
    let settled = false;
    let forked = false;
    const limits = watchLimits(child, req, signal, deadline);
    server.onFrame = (frame) => {
      if (frame.kind === 'started') forked = true;
      else if (frame.kind === 'stdout' || frame.kind === 'stderr') {
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
      const how = child.exitCode !== null ? `exit ${child.exitCode}` : (child.signalCode ?? 'unknown');
      const died = !end && !timedOut && !aborted;
      if (died && !forked) {
        resolve({ died: bad ?? `the warm interpreter died before it started the script (${how})` });
        return;
      }
      const e = end as EndFrame | null;
      const notes: string[] = [];
      let sigName = e?.signal ?? null;
      let exitCode = e?.exitCode ?? null;
      if (!e) {
        sigName = died ? null : 'SIGKILL';
        exitCode = null;
        if (timedOut) notes.push(`killed after the ${req.limits.timeoutMs} ms wall-clock limit`);
        if (!forked) notes.push('the warm interpreter had not started the script');
      }
      const diedWhy = bad ?? `the warm interpreter died during the run (${how}) after it had started the script`;
      const infra = aborted
        ? { kind: 'aborted' as const, message: 'run cancelled' }
        : died
          ? { kind: 'sandbox_failed' as const, message: `${diedWhy}: its outcome is unknown, and it is not run again` }
          : null;
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
          infra,
          notes,
        },
      });
    }
  });
}
