import { spawn, type ChildProcess } from 'node:child_process';
import { killTree } from './kill-tree.js';
import { describeIsolation, finishRun, prepareSandbox, writeRequestFiles, type Prepared, type RunContext, type RunShape } from './local-run.js';
import { collectReport } from './local-watch.js';
import { makeOwnedDir, removeOwnedDir } from './reap-work-dirs.js';
import { handWorkdirToSandbox, writeSeccomp } from './sandbox.js';
import type { Isolation, RunResult } from './types.js';
import { parseReady, WARM_SOURCE } from './warm-pool.js';

/** CPU seconds a warm interpreter may spend on its imports, on top of the run's own limit. */
const WARM_IMPORT_CPU_S = 300;
/** A pool entry unused this long is stopped. */
const WARM_IDLE_MS = 120_000;
/** Pool entries (one per distinct request shape) kept at once. */
const WARM_MAX_ENTRIES = 4;

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
  idle: NodeJS.Timeout | null;
  discard(): Promise<void>;
}

/** The local executor's warm pool (REPGEN_WARM_POOL): see warm-pool.ts for what an entry is. */
export interface WarmPool {
  /**
   * Runs the request warm, or returns why it cannot (the caller starts it cold and notes the reason). Starts an
   * entry for the next such request either way (`auto`).
   */
  run(shape: RunShape, signal: AbortSignal | undefined): Promise<RunResult | string>;
  /** Starts an entry for requests of this shape and resolves once it is ready: false when it cannot serve them. */
  warmUp(shape: RunShape): Promise<boolean>;
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
  return JSON.stringify([interpreter, launcher, network, workspace ?? null, req.limits.memoryMb, req.limits.cpuSeconds, seed ?? null, env, envAllowlist]);
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
  /** Keys whose entry is being prepared (work dir, cgroup) and not yet in the pool. */
  const warming = new Set<string>();
  const takenEntries = new WeakSet<WarmEntry>();
  let closed = false;

  async function startWarm(key: string, shape: RunShape): Promise<WarmEntry> {
    const { req, interpreter, plan } = shape;
    const workdir = await makeOwnedDir(config.workRoot, 'repgen-run-', { keep: config.keepWorkdir });
    const isolation = describeIsolation(plan, req.network);
    let prepared: Prepared;
    try {
      prepared = await prepareSandbox(ctx, workdir, shape, isolation, [interpreter, '-c', WARM_SOURCE], req.limits.cpuSeconds + WARM_IMPORT_CPU_S, 'pipe');
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

  /** A ready pool entry for the key: `always` starts one and waits; `auto` takes only one that is ready. */
  async function takeWarm(key: string, shape: RunShape, signal: AbortSignal | undefined): Promise<WarmEntry | string> {
    let entry = pool.get(key);
    if (!entry && config.warmPool === 'always') {
      entry = await startWarm(key, shape);
      pool.set(key, entry);
    }
    if (!entry) return 'the pool had no interpreter ready for this request (one is warming for the next run)';
    if (entry.readyMs === null) {
      if (config.warmPool !== 'always') return 'the pooled interpreter was still importing';
      // The entry's handles are unref'd (a warming pool must not keep a CLI alive); this wait must. A cancel
      // while it imports ends the wait: the run then starts (cold) already aborted.
      await keptAlive(untilAborted(entry.ready, signal));
      if (signal?.aborted) return 'the run was cancelled while the pooled interpreter was importing';
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
  function refill(key: string, shape: RunShape): void {
    if (config.warmPool !== 'auto' || closed || pool.has(key) || warming.has(key)) return;
    // Few keys at a time: drop the oldest entry beyond the cap.
    while (pool.size >= WARM_MAX_ENTRIES) {
      const oldest = pool.values().next().value as WarmEntry;
      void oldest.discard();
    }
    warming.add(key);
    startWarm(key, shape).then(
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
    refill(key, shape);
    return typeof taken === 'string' ? taken : runWarm(taken, shape, signal);
  }

  async function warmUp(shape: RunShape): Promise<boolean> {
    if (closed || warmRefusal(shape) !== null) return false;
    const key = warmKey(shape);
    if (!pool.has(key) && !warming.has(key)) {
      warming.add(key);
      try {
        const entry = await startWarm(key, shape);
        if (pool.has(key)) void entry.discard();
        else pool.set(key, entry);
      } finally {
        warming.delete(key);
      }
    }
    // Another caller may be warming this key: wait (up to a minute) for its entry to land.
    const waitForEntry = async (): Promise<WarmEntry | undefined> => {
      for (let i = 0; i < 6000 && !pool.has(key); i++) await new Promise((r) => setTimeout(r, 10));
      return pool.get(key);
    };
    const entry = await keptAlive(waitForEntry());
    return entry ? (await keptAlive(entry.ready)) !== null : false;
  }

  async function close(): Promise<void> {
    closed = true;
    await Promise.all([...pool.values()].map((e) => e.discard()));
  }

  return { run, warmUp, close };
}
