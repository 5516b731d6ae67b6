import { availableParallelism } from 'node:os';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { killTree } from '../sandbox/kill-tree.js';
import { emptyAheadBook, importsAhead, recordImportsAhead, servesRun, unfitServer } from './import-ahead.js';
import { collectRunOutput, importAhead, prepareForkedRun, watchForkedRun } from './fork-run.js';
import { describeIsolation, prepareSandbox, type Prepared, type RunContext, type RunShape } from '../sandbox/run.js';
import { collectReport } from '../sandbox/watch.js';
import { makeOwnedDir, removeOwnedDir } from '../sandbox/reap-work-dirs.js';
import { writeSeccomp } from '../sandbox/sandbox.js';
import type { RunResult } from '../types.js';
import { createFrameReader, type ReadyFrame } from './fork-server-frames.js';
import { FORK_SERVER_SOURCE } from './fork-server.js';
import { serverShape, warmKey, warmRefusal } from './warm-key.js';
import { createServerPace } from './server-pace.js';
import type { ServerEntry } from './server-entry.js';
import { firstOf, keptAlive, offerTo, type Waiters } from './waits.js';
import { readServerDir, tidyServerDir, type ServerDirState } from './tidy-server-dir.js';
import { holdDir, type HeldDir } from '../../host/untrusted-tree.js';

/** CPU seconds a fork server may spend on its imports and its relaying, on top of one run's own limit. */
const WARM_IMPORT_CPU_S = 300;
/** A fork server unused this long is stopped. */
const WARM_IDLE_MS = 120_000;
/** How long `auto` waits for a server still importing before it takes it as stuck and starts the run cold. */
const STUCK_IMPORT_MS = 60_000;

const WAIT_CANCELLED = 'the run was cancelled while it waited for a busy warm interpreter';

/** The note of every run served by a fork server. */
export const WARM_NOTE = 'warm start: forked from an interpreter that had imported torch and numpy in its sandbox before the run';

/** The local executor's warm pool (REPGEN_WARM_POOL): fork servers, one or more per request shape (fork-server.ts). */
export interface WarmPool {
  /** Runs the request forked from a warm server, or returns why it cannot (the caller starts it cold and notes why). */
  run(shape: RunShape, signal: AbortSignal | undefined): Promise<RunResult | string>;
  /** Makes sure a server for requests of this shape is started; resolves once it is ready: false when it cannot serve. */
  warmUp(shape: RunShape, onRegistered?: () => void): Promise<boolean>;
  close(): Promise<void>;
}

export function createWarmPool(ctx: RunContext): WarmPool {
  const { config, log } = ctx;
  /** Every live server. */
  const servers = new Set<ServerEntry>();
  /** Servers warmUp is starting (work dir, cgroup, spawn), by key: a run of that key waits for one instead of starting another. */
  const pending = new Map<string, Promise<ServerEntry | undefined>>();
  /** Per key: modules that failed, hung, killed a server or left a thread running when imported ahead; never tried again. */
  const notAhead = new Map<string, Set<string>>();
  /** Keys whose servers cannot import what every server imports (torch, numpy): their runs start cold. */
  const unfitKeys = new Map<string, string>();
  /**
   * Runs waiting on a server that is still importing, oldest first: each may take a ready server that turns idle first
   * (one that ended a run, or one a warm-up started). Each claims the server it takes (true) or declines (false).
   */
  const waiters: Waiters<ServerEntry> = new Set();
  const pace = createServerPace(); // whether a run waits for a busy server or starts one
  let closed = false;

  function badAhead(key: string): Set<string> {
    let bad = notAhead.get(key);
    if (!bad) notAhead.set(key, (bad = new Set()));
    return bad;
  }

  /** Starts a server; `claimed`: for the run that asked, busy from the start (no other run may take it meanwhile). */
  async function startServer(key: string, shape: RunShape, claimed: boolean): Promise<ServerEntry> {
    const { interpreter, plan } = shape;
    const sShape = serverShape(shape);
    const workdir = await makeOwnedDir(config.workRoot, 'repgen-run-', { keep: config.keepWorkdir });
    const isolation = describeIsolation(plan, sShape.req.network);
    let prepared: Prepared;
    try {
      const cpu = sShape.req.limits.cpuSeconds + WARM_IMPORT_CPU_S;
      prepared = await prepareSandbox(ctx, workdir, sShape, isolation, [interpreter, '-c', FORK_SERVER_SOURCE], cpu, 'pipe');
    } catch (err) {
      await removeOwnedDir(workdir);
      throw err;
    }
    const { file, args, options } = prepared.spawnArgs;
    const spawnedAt = performance.now();
    const child = spawn(file, args, options);
    writeSeccomp(plan, child);
    collectReport(child, []);
    child.stderr?.on('data', () => undefined);
    // A server that died leaves a broken pipe: the run sees the exit, not an unhandled EPIPE.
    child.stdin?.on('error', () => undefined);
    const reader = createFrameReader();
    let discarded = false;
    let markReady: (r: ReadyFrame | null) => void = () => undefined;
    const entry: ServerEntry = {
      key,
      workdir,
      prepared,
      child,
      isolation,
      readyInfo: null,
      ahead: emptyAheadBook(),
      state: 'idle',
      runs: 0,
      idle: null,
      onFrame: null,
      onExit: null,
      ready: new Promise((resolve) => (markReady = resolve)),
      async discard(): Promise<void> {
        if (discarded) return;
        discarded = true;
        entry.state = 'gone';
        servers.delete(entry);
        if (entry.idle) clearTimeout(entry.idle);
        if (child.pid !== undefined && child.exitCode === null && child.signalCode === null) killTree(child.pid);
        await entry.ready;
        await prepared.cgroup?.remove();
        if (!config.keepWorkdir) await removeOwnedDir(workdir);
      },
    };
    child.stdout?.on('data', (chunk: Buffer) => {
      for (const frame of reader.push(chunk)) {
        if (frame.kind === 'ready' && entry.readyInfo === null) {
          entry.readyInfo = frame.ready;
          pace.imported(key, performance.now() - spawnedAt);
          markReady(frame.ready);
          if (entry.state === 'idle') offerIdle(entry);
        } else if (entry.onFrame) entry.onFrame(frame);
        else void entry.discard();
      }
    });
    child.on('exit', () => {
      markReady(null);
      entry.onExit?.();
      if (entry.state !== 'busy') void entry.discard();
    });
    child.on('error', () => markReady(null));
    child.unref();
    for (const s of [child.stdout, child.stderr, child.stdio[3], child.stdin]) (s as { unref?: () => void } | null)?.unref?.();
    servers.add(entry);
    if (claimed) entry.state = 'busy';
    else parkIdle(entry);
    return entry;
  }

  function parkIdle(entry: ServerEntry): void {
    entry.state = 'idle';
    if (entry.idle) clearTimeout(entry.idle);
    // Not used for a while: give its memory back.
    entry.idle = setTimeout(() => void entry.discard(), WARM_IDLE_MS);
    entry.idle.unref();
    if (entry.readyInfo !== null) offerIdle(entry);
  }

  function claim(entry: ServerEntry): void {
    entry.state = 'busy';
    if (entry.idle) clearTimeout(entry.idle);
  }

  /** Hands a ready idle server to the oldest waiting run it can serve, if any. */
  function offerIdle(entry: ServerEntry): void {
    if (entry.readyInfo === null || unfitServer(entry.readyInfo) !== null) return;
    offerTo(waiters, entry, () => entry.state === 'idle');
  }

  /**
   * The ready frame of `entry`, a server claimed for this run and still importing, or a ready server of the run's
   * key that turns idle first (its last run ended while this one's import goes on: a few-ms run should not wait
   * seconds for an import); undefined when `ms` passed or `signal` fired first. The server not taken stays in the
   * pool: `entry`, given up, is parked idle to finish its import for a later run.
   */
  async function firstReady(
    entry: ServerEntry,
    leading: string[],
    ms: number | null,
    signal: AbortSignal | undefined,
  ): Promise<{ entry: ServerEntry; ready: ReadyFrame | null } | undefined> {
    const result = await firstOf(
      entry.ready.then((ready) => ({ entry, ready })),
      (other: ServerEntry) => {
        if (other.key !== entry.key || !servesRun(other.ahead, leading)) return null;
        claim(other);
        return { entry: other, ready: other.readyInfo };
      },
      waiters,
      ms,
      signal,
    );
    if (result && result.entry !== entry) parkOrDiscard(entry, true);
    return result;
  }

  /**
   * Whether one more server fits: at the cap, the oldest idle server gives way (servers still being started by a
   * warmUp count too, so a run and a warm-up cannot both take the last place).
   */
  function makeRoom(): boolean {
    if (servers.size + pending.size < config.warmPoolSize) return true;
    const spare = [...servers].find((s) => s.state === 'idle');
    if (!spare) return false;
    void spare.discard();
    return servers.size + pending.size < config.warmPoolSize;
  }

  /**
   * An idle server of this key that imported nothing ahead the run does not import first (ready ones first, then the
   * one that imported most of what it wants); or one of its busy servers that frees first, where this key's runs end
   * sooner than its imports (server-pace.ts); or a new one when the pool has room (an idle one gives way).
   */
  async function claimServer(key: string, shape: RunShape, leading: string[], signal?: AbortSignal): Promise<ServerEntry | string> {
    const starting = pending.get(key);
    if (starting) await starting;
    const fits = (s: ServerEntry): boolean => s.key === key && servesRun(s.ahead, leading);
    const idle = [...servers]
      .filter((s) => fits(s) && s.state === 'idle')
      .sort((a, b) => Number(b.readyInfo !== null) - Number(a.readyInfo !== null) || b.ahead.imported.length - a.ahead.imported.length);
    let entry = idle[0];
    const waitMs = pace.waitMs(key);
    if (!entry && waitMs > 0 && [...servers].some((s) => fits(s) && s.state === 'busy' && s.readyInfo !== null)) {
      const never = new Promise<ServerEntry | undefined>(() => undefined);
      entry = await firstOf(never, (s: ServerEntry) => (fits(s) ? (claim(s), s) : null), waiters, waitMs, signal);
      if (signal?.aborted) return entry ? (parkOrDiscard(entry, true), WAIT_CANCELLED) : WAIT_CANCELLED;
    }
    if (!entry) {
      if (!makeRoom()) return `the pool's ${config.warmPoolSize} warm interpreters were all busy with other runs`;
      return startServer(key, shape, true);
    }
    claim(entry);
    return entry;
  }

  async function run(shape: RunShape, signal: AbortSignal | undefined): Promise<RunResult | string> {
    const refusal = warmRefusal(shape);
    if (refusal !== null) return refusal;
    if (closed) return 'the warm pool is closed';
    const key = warmKey(shape);
    const unfitKey = unfitKeys.get(key);
    if (unfitKey !== undefined) return unfitKey;
    const imports = importsAhead(shape.req, badAhead(key));
    if (typeof imports === 'string') return imports;
    let entry: ServerEntry | string;
    try {
      entry = await claimServer(key, shape, imports.leading, signal);
    } catch (err) {
      return `the pool could not start an interpreter: ${(err as Error).message.split('\n')[0]}`;
    }
    if (typeof entry === 'string') return entry;
    // The run's wall-clock limit counts from the request: a wait here is part of it, and a cold start gets what is left
    // (auto waits half of what is left at most, so a cold start keeps the other half).
    const deadline = shape.deadline ?? performance.now() + shape.req.limits.timeoutMs;
    const wait = (): number => {
      const left = Math.max(1, Math.round(deadline - performance.now()));
      return config.warmPool === 'always' ? left : Math.min(STUCK_IMPORT_MS, Math.ceil(left / 2));
    };
    const waitMs = wait();
    let ready: ReadyFrame | null | undefined = entry.readyInfo;
    if (ready === null) {
      const first = await firstReady(entry, imports.leading, waitMs, signal);
      if (first) ({ entry, ready } = first);
      else ready = undefined;
    }
    if (signal?.aborted) {
      parkOrDiscard(entry, true);
      return 'the run was cancelled while the warm interpreter was importing';
    }
    if (!ready) {
      void entry.discard();
      return ready === null
        ? 'the warm interpreter died before it was ready'
        : `the warm interpreter was still importing after ${waitMs} ms`;
    }
    const unfit = unfitServer(ready);
    if (unfit !== null) {
      void entry.discard();
      if (ready.failed.length > 0) unfitKeys.set(key, unfit);
      return unfit;
    }
    const missing = imports.ahead.filter((m) => !entry.ahead.asked.has(m));
    if (missing.length > 0) {
      const refusal = await importForRun(entry, missing, wait(), signal);
      if (refusal !== null) return refusal;
    }
    return runForked(entry, shape, signal);
  }

  /**
   * Has the server import `missing` ahead of the run; null when it may fork the run now. A module that fails to
   * import, hangs, kills the server or leaves a thread running costs this server (a failed import leaves it
   * half-imported), is not tried again, and the run starts cold.
   */
  async function importForRun(entry: ServerEntry, missing: string[], ms: number, signal: AbortSignal | undefined): Promise<string | null> {
    const bad = badAhead(entry.key);
    const done = await keptAlive(importAhead(entry, missing, ms, signal));
    if (signal?.aborted) {
      void entry.discard();
      return 'the run was cancelled while the warm interpreter imported its modules';
    }
    if (done === null) {
      for (const m of missing) bad.add(m);
      void entry.discard();
      return `the warm interpreter died or took over ${ms} ms importing ${missing.join(', ')} ahead of the run`;
    }
    const refusal = recordImportsAhead(entry.ahead, done, missing, bad);
    if (refusal !== null) void entry.discard();
    return refusal;
  }

  function parkOrDiscard(entry: ServerEntry, keep: boolean): void {
    if (keep && !closed && entry.state === 'busy' && entry.child.exitCode === null && entry.child.signalCode === null) parkIdle(entry);
    else void entry.discard();
  }

  async function runForked(entry: ServerEntry, shape: RunShape, signal: AbortSignal | undefined): Promise<RunResult | string> {
    const { req, plan } = shape;
    let keep = false;
    entry.runs += 1;
    const runName = `run-${entry.runs}`;
    const runDir = join(entry.workdir, runName);
    let serverDir: HeldDir | null = null;
    let before: ServerDirState | null = null;
    try {
      try {
        serverDir = await holdDir(entry.workdir);
        before = await readServerDir(serverDir);
      } catch (err) {
        return `the warm interpreter's work dir could not be read (${(err as Error).message.split('\n')[0]})`;
      }
      const prepared = await prepareForkedRun(ctx.hostEnv, shape, serverDir, runName, ctx.config.scriptThreads ?? availableParallelism());
      if (typeof prepared === 'string') return prepared;
      const { isolation, go } = prepared;
      shape.watchWorkDir?.(entry.workdir);
      const oomBefore = (await entry.prepared.cgroup?.oomKills()) ?? 0;
      log.debug({ sandbox: plan.kind, network: req.network, labels: req.labels, warm: true, run: entry.runs }, 'starting script');
      const forkedAt = performance.now();
      const forked = await keptAlive(watchForkedRun(entry, req, go, signal, entry.ahead.prelude, shape.deadline));
      if ('died' in forked) return forked.died;
      pace.ran(entry.key, performance.now() - forkedAt); // from the fork: durationMs counts the import waited for
      const { watched, end } = forked;
      keep = end !== null && end.clean;
      const notes = [WARM_NOTE];
      if (entry.ahead.loaded.length > 0)
        notes.push(`also imported ahead in the warm interpreter, as the script's first lines do: ${entry.ahead.loaded.join(', ')}`);
      if (req.seed !== undefined)
        notes.push(`string hashing keeps the warm interpreter's seed: PYTHONHASHSEED=${req.seed} applies when an interpreter starts`);
      if (end && !end.clean) notes.push('the warm interpreter could not clean up after the run and was replaced');
      if (((await entry.prepared.cgroup?.oomKills()) ?? 0) > oomBefore) {
        watched.oomKilled = true;
        watched.notes.push(`killed by the kernel: the run's ${req.limits.memoryMb} MB memory limit (whole process tree) was reached`);
        keep = false;
      }
      const collected = await collectRunOutput(serverDir, runName, {
        inlineBytes: config.inlineFileBytes,
        maxFiles: config.maxOutputFiles,
      });
      notes.push(...watched.notes, ...collected.notes);
      if (req.gpus > 0) notes.push(`${req.gpus} GPU(s) requested: the local executor runs on CPU only`);
      const { notes: _ignored, ...rest } = watched;
      return { ...rest, files: collected.files, isolation, notes };
    } finally {
      // Nothing of this run is left for the next one: the host removes what it added to the server's work dir, and
      // a server whose earlier contents the run changed goes (tidy-server-dir.ts).
      if (config.keepWorkdir) log.info({ workdir: runDir }, 'kept run work dir');
      else if (serverDir && before) {
        const tidy = await tidyServerDir(serverDir, before).catch(() => false);
        if (!tidy) log.debug({ run: entry.runs }, "warm pool: the run changed its server's work dir; the server goes");
        keep = keep && tidy;
      } else keep = false;
      await serverDir?.close();
      parkOrDiscard(entry, keep);
    }
  }

  async function warmUp(shape: RunShape, onRegistered?: () => void): Promise<boolean> {
    if (closed || warmRefusal(shape) !== null) return false;
    const key = warmKey(shape);
    let starting = pending.get(key);
    const there = [...servers].find((s) => s.key === key && s.state !== 'gone');
    if (!there && !starting && makeRoom()) {
      const mine = startServer(key, shape, false).catch((err: unknown) => {
        log.debug({ err: (err as Error).message }, 'warm pool: cannot start an interpreter');
        return undefined;
      });
      starting = mine;
      pending.set(key, mine);
      void mine.finally(() => {
        if (pending.get(key) === mine) pending.delete(key);
      });
    }
    // In the books now (starting or there): a run of this shape from here on finds it.
    onRegistered?.();
    const entry = there ?? (starting ? await keptAlive(starting) : undefined);
    if (!entry) return false;
    const ready = await keptAlive(entry.ready);
    return ready !== null && unfitServer(ready) === null;
  }

  async function close(): Promise<void> {
    closed = true;
    await Promise.all([...servers].map((s) => s.discard()));
  }

  return { run, warmUp, close };
}
