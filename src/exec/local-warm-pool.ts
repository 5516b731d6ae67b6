import { spawn, type ChildProcess } from 'node:child_process';
import { killTree } from './kill-tree.js';
import {
  describeIsolation,
  finishRun,
  prepareSandbox,
  writeRequestFiles,
  type Prepared,
  type RunContext,
  type RunShape,
} from './local-run.js';
import { collectReport } from './local-watch.js';
import { makeOwnedDir, removeOwnedDir } from './reap-work-dirs.js';
import { handWorkdirToSandbox, writeSeccomp } from './sandbox.js';
import type { Isolation, RunResult } from './types.js';
import { parseReady, WARM_SOURCE } from './warm-pool.js';

/** CPU seconds a warm interpreter may spend on its imports, on top of the run's own limit. */
const WARM_IMPORT_CPU_S = 300;
/** A pool entry unused this long is stopped. */
const WARM_IDLE_MS = 120_000;
/**
 * How long `auto` waits for an entry still importing when no import has been timed yet: a cold torch start on a
 * loaded 2-core machine (docs/benchmarks.md). Past it the entry is taken as stuck and the run starts cold.
 */
const COLD_START_GUESS_MS = 15_000;

/** The note of every run served warm. */
export const WARM_NOTE = 'warm start: the interpreter had imported torch and numpy in its sandbox before the run';

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
  /** Started by warmUp() for a run the caller said is coming: only another warmUp evicts it. */
  asked: boolean;
  idle: NodeJS.Timeout | null;
  discard(): Promise<void>;
}

/** The local executor's warm pool (REPGEN_WARM_POOL): see warm-pool.ts for what an entry is. */
export interface WarmPool {
  /**
   * Runs the request warm, or returns why it cannot (the caller starts it cold and notes the reason). After a
   * cold start, `auto` starts an entry for the next such request.
   */
  run(shape: RunShape, signal: AbortSignal | undefined): Promise<RunResult | string>;
  /** Starts an entry for requests of this shape and resolves once it is ready: false when it cannot serve them. */
  warmUp(shape: RunShape, onRegistered?: () => void): Promise<boolean>;
  close(): Promise<void>;
}

/** Why this request cannot run warm, or null. */
function warmRefusal({ req, plan }: RunShape): string | null {
  if (plan.kind !== 'bwrap') return 'no bubblewrap sandbox';
  if (req.setup.length > 0) return 'setup commands run before the interpreter';
  if (!req.entry.endsWith('.py')) return 'the entry is not a Python file';
  return null;
}

/** What a pooled sandbox must have been started with to serve this request. */
function warmKey({ req, interpreter, launcher }: RunShape): string {
  const { network, workspace, seed, env, envAllowlist } = req;
  return JSON.stringify([
    interpreter,
    launcher,
    network,
    workspace ?? null,
    req.limits.memoryMb,
    req.limits.cpuSeconds,
    seed ?? null,
    env,
    envAllowlist,
  ]);
}

/** Keeps a CLI process alive while it waits on the pool's unref'd handles. */
async function keptAlive<T>(wait: Promise<T>): Promise<T> {
  const keepAlive = setInterval(() => undefined, 1000);
  try {
    return await wait;
  } finally {
    clearInterval(keepAlive);
  }
}

/** `wait`, or undefined as soon as `signal` fires. */
function untilAborted<T>(wait: Promise<T>, signal: AbortSignal | undefined): Promise<T | undefined> {
  if (!signal) return wait;
  if (signal.aborted) return Promise.resolve(undefined);
  return new Promise((resolve) => {
    const onAbort = (): void => resolve(undefined);
    signal.addEventListener('abort', onAbort, { once: true });
    void wait.then((v) => {
      signal.removeEventListener('abort', onAbort);
      resolve(v);
    });
  });
}

export function createWarmPool(ctx: RunContext): WarmPool {
  const { config, log } = ctx;
  const pool = new Map<string, WarmEntry>();
  /** Keys whose entry is being prepared (work dir, cgroup) and not yet in the pool: null when it failed. */
  const warming = new Map<string, Promise<WarmEntry | null>>();
  const takenEntries = new WeakSet<WarmEntry>();
  let closed = false;
  /** Wall ms the last entry took from spawn to ready: what one interpreter's imports cost under the present load. */
  let importWallMs: number | null = null;

  /**
   * What a cold start's imports would cost if started now: one import's wall time, times the imports that would
   * share the cores with it (the entries still importing, and itself). Measured on so-046 at load 7: one import
   * 2.9 s, three side by side 6.6 s each; a bound of one import's time sent those runs cold beside their entries.
   */
  function coldStartMs(): number {
    const importing = [...pool.values()].filter((e) => e.readyMs === null).length + warming.size;
    return (importWallMs ?? COLD_START_GUESS_MS) * (importing + 1);
  }

  async function startWarm(key: string, shape: RunShape, asked: boolean): Promise<WarmEntry> {
    const { req, interpreter, plan } = shape;
    const spawnedAt = Date.now();
    const workdir = await makeOwnedDir(config.workRoot, 'repgen-run-', { keep: config.keepWorkdir });
    const isolation = describeIsolation(plan, req.network);
    let prepared: Prepared;
    try {
      prepared = await prepareSandbox(
        ctx,
        workdir,
        shape,
        isolation,
        [interpreter, '-c', WARM_SOURCE],
        req.limits.cpuSeconds + WARM_IMPORT_CPU_S,
        'pipe',
      );
    } catch (err) {
      await removeOwnedDir(workdir);
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
      asked,
      idle: null,
      ready: new Promise((resolve) => {
        const onData = (chunk: Buffer): void => {
          seen = (seen + chunk.toString('latin1')).slice(-4096);
          const ms = parseReady(seen);
          if (ms === null) return;
          child.stdout?.off('data', onData);
          child.stdout?.on('data', drain);
          entry.readyMs = ms;
          importWallMs = Date.now() - spawnedAt;
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
        if (!config.keepWorkdir) await removeOwnedDir(workdir);
      },
    };
    // Not used for a while: give its memory back.
    entry.idle = setTimeout(() => void entry.discard(), WARM_IDLE_MS);
    entry.idle.unref();
    child.unref();
    for (const s of [child.stdout, child.stderr, child.stdio[3], child.stdin]) (s as { unref?: () => void } | null)?.unref?.();
    return entry;
  }

  /**
   * A ready pool entry for the key. `always` starts one and waits for it; `auto` takes one that is ready, or one
   * already warming (started for this run by warmUp) once it is ready, waiting at most what a cold start's imports
   * would cost now: a second, cold interpreter started beside it would slow both and land no sooner.
   */
  /**
   * Makes `entry` this run's alone, at once (before any wait): two runs of one shape must never both get it — they
   * would write their files into one work dir and read one output (a bench case running another case's script).
   */
  function claim(key: string, entry: WarmEntry): boolean {
    if (takenEntries.has(entry)) return false;
    if (pool.get(key) === entry) pool.delete(key);
    takenEntries.add(entry);
    if (entry.idle) clearTimeout(entry.idle);
    return true;
  }

  /** Gives back an entry a run claimed but did not use (it was still importing): the next run of its shape may have it. */
  function release(key: string, entry: WarmEntry): void {
    takenEntries.delete(entry);
    if (closed || pool.has(key) || entry.child.exitCode !== null || entry.child.signalCode !== null) {
      void entry.discard();
      return;
    }
    pool.set(key, entry);
    entry.idle = setTimeout(() => void entry.discard(), WARM_IDLE_MS);
    entry.idle.unref();
  }

  /**
   * A ready pool entry for the key, claimed for this run. `always` starts one and waits for it; `auto` takes one
   * that is ready, or one already warming (started for this run by warmUp) once it is ready, waiting at most what a
   * cold start's imports would cost now: a second, cold interpreter started beside it would slow both and land no sooner.
   */
  async function takeWarm(key: string, shape: RunShape, signal: AbortSignal | undefined): Promise<WarmEntry | string> {
    let entry = pool.get(key);
    if (!entry && config.warmPool === 'always') entry = await startWarm(key, shape, false);
    const budgetMs = config.warmPool === 'always' ? null : coldStartMs();
    const waitedFrom = Date.now();
    if (!entry && warming.has(key)) {
      // Its work dir and cgroup are being made: wait for it to land in the pool.
      await keptAlive(untilAborted(bounded(warming.get(key) as Promise<WarmEntry | null>, budgetMs), signal));
      if (signal?.aborted) return 'the run was cancelled while the pooled interpreter was starting';
      entry = pool.get(key);
    }
    if (!entry) return 'the pool had no interpreter ready for this request (one is warming for the next run)';
    if (!claim(key, entry)) return 'the pooled interpreter of this shape was taken by another run';
    if (entry.readyMs === null) {
      // The entry's handles are unref'd (a warming pool must not keep a CLI alive); this wait must. A cancel
      // while it imports ends the wait: the run then starts (cold) already aborted.
      const left = budgetMs === null ? null : Math.max(0, budgetMs - (Date.now() - waitedFrom));
      await keptAlive(untilAborted(bounded(entry.ready, left), signal));
      if (signal?.aborted) {
        release(key, entry);
        return 'the run was cancelled while the pooled interpreter was importing';
      }
      if (entry.readyMs === null && entry.child.exitCode === null && entry.child.signalCode === null) {
        release(key, entry);
        return `the pooled interpreter was still importing after ${Date.now() - waitedFrom} ms (what a cold start costs here)`;
      }
    }
    if (entry.readyMs === null || entry.child.exitCode !== null || entry.child.signalCode !== null) {
      void entry.discard();
      return 'the pooled interpreter was gone (killed or failed to start)';
    }
    return entry;
  }

  /**
   * Starts a pool entry for the key unless one is there or warming; resolves with it once it is in the pool (not
   * yet ready), or null when it could not start. Beyond the cap the oldest entry nobody asked for is dropped, then
   * (for a warmUp only) the oldest asked for: a finished job's leftovers give way to the next job's runs, and a
   * refill never displaces what a caller asked for.
   */
  function startEntry(key: string, shape: RunShape, asked: boolean): Promise<WarmEntry | null> {
    const there = pool.get(key);
    if (there) {
      there.asked ||= asked;
      return Promise.resolve(there);
    }
    const inFlight = warming.get(key);
    if (inFlight) return inFlight;
    while (pool.size + warming.size >= config.warmPoolSize) {
      const spare = [...pool.values()].find((e) => !e.asked) ?? (asked ? pool.values().next().value : undefined);
      if (!spare) return Promise.resolve(null);
      void spare.discard();
    }
    const started = startWarm(key, shape, asked).then(
      (entry) => {
        warming.delete(key);
        if (closed || pool.has(key)) {
          void entry.discard();
          return pool.get(key) ?? null;
        }
        pool.set(key, entry);
        return entry;
      },
      (err: unknown) => {
        warming.delete(key);
        log.debug({ err: (err as Error).message }, 'warm pool: cannot start an interpreter');
        return null;
      },
    );
    warming.set(key, started);
    return started;
  }

  async function runWarm(entry: WarmEntry, { req, plan }: RunShape, signal: AbortSignal | undefined): Promise<RunResult> {
    try {
      await writeRequestFiles(entry.workdir, req);
      await handWorkdirToSandbox(plan, entry.workdir);
      entry.child.stdout?.removeAllListeners('data');
      entry.child.stderr?.removeAllListeners('data');
      const go = `${JSON.stringify({ entry: req.entry, args: req.args, cpu: req.limits.cpuSeconds })}\n`;
      log.debug({ sandbox: plan.kind, network: req.network, labels: req.labels, warm: true }, 'starting script');
      return await finishRun(
        ctx,
        entry.prepared,
        req,
        plan,
        entry.isolation,
        signal,
        { child: entry.child, reportChunks: entry.report, go, importCpuMs: entry.readyMs ?? 0 },
        [WARM_NOTE],
      );
    } finally {
      if (entry.child.pid !== undefined && entry.child.exitCode === null && entry.child.signalCode === null) killTree(entry.child.pid);
      if (!config.keepWorkdir) await removeOwnedDir(entry.workdir);
      else log.info({ workdir: entry.workdir }, 'kept run work dir');
    }
  }

  async function run(shape: RunShape, signal: AbortSignal | undefined): Promise<RunResult | string> {
    const refusal = warmRefusal(shape);
    if (refusal !== null) return refusal;
    const key = warmKey(shape);
    let taken: WarmEntry | string;
    try {
      taken = await takeWarm(key, shape, signal);
    } catch (err) {
      taken = `the pool could not start an interpreter: ${(err as Error).message.split('\n')[0]}`;
    }
    if (typeof taken !== 'string') return runWarm(taken, shape, signal);
    // Only after a miss: a refill beside a warm run would slow it on 2 cores, and callers that know what comes
    // next (the pipeline's confirmation seeds) ask for it with warmUp.
    if (config.warmPool === 'auto' && !closed) void startEntry(key, shape, false);
    return taken;
  }

  async function warmUp(shape: RunShape, onRegistered?: () => void): Promise<boolean> {
    if (closed || warmRefusal(shape) !== null) return false;
    const starting = startEntry(warmKey(shape), shape, true);
    // In the books now (warming or pooled): a run of this shape from here on finds it.
    onRegistered?.();
    const entry = await keptAlive(starting);
    // Resolves when the entry is ready or dies (close() kills it): nothing here outlives the pool.
    return entry ? (await keptAlive(entry.ready)) !== null : false;
  }

  async function close(): Promise<void> {
    closed = true;
    // Entries still being prepared are discarded as they land (closed is set).
    await Promise.all([...warming.values(), ...[...pool.values()].map((e) => e.discard())]);
  }

  return { run, warmUp, close };
}

/** `wait`, or undefined once `ms` have passed (null: no bound). */
function bounded<T>(wait: Promise<T>, ms: number | null): Promise<T | undefined> {
  if (ms === null) return wait;
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(undefined), ms);
    void wait.then((v) => {
      clearTimeout(timer);
      resolve(v);
    });
  });
}
