import { performance } from 'node:perf_hooks';
import { lstat, readdir, readlink, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { RunResult } from '../types.js';

/**
 * The run's work folder is the one host folder a script can write, on the host's disk: a script wrote 8 GB there.
 * RLIMIT_FSIZE bounds one file (and is never set above this limit); this bounds their sum. Disk is not a cgroup
 * resource and a sized filesystem would need a mount, so the executor watches: the blocks of everything under the
 * folder, plus files deleted there that a process still holds open (their blocks stay on the disk), and stops the
 * run once the sum passes the limit. Between two looks a script can write what the page cache takes in that time,
 * so the limit holds within that much: looks follow each other every MIN_POLL_MS while a look is cheap (a folder of
 * a few files takes well under a millisecond), spaced to ten times their own length when the folder is large.
 */

/** The shortest pause between two looks, and the longest. */
const MIN_POLL_MS = 50;
const MAX_POLL_MS = 1000;
/** The processes' open files (a walk of all of /proc, some 10-50 ms) are looked at no more often than this. */
const OPEN_DELETED_MS = 1000;
/** Most entries a look counts; a folder with more is over the limit by itself (inodes are disk too, and a look must stay short). */
export const MAX_WORK_ENTRIES = 100_000;

export interface WorkDirUsage {
  /** Bytes of disk blocks in use. */
  bytes: number;
  /** Entries seen (files, folders, links). */
  entries: number;
  /** The walk stopped at `maxEntries`. */
  truncated: boolean;
}

/** Disk used under `dir`; `openDeleted`: with the files deleted there that a process still holds open. */
export async function workDirUsage(
  dir: string,
  { maxEntries = MAX_WORK_ENTRIES, openDeleted = false }: { maxEntries?: number; openDeleted?: boolean } = {},
): Promise<WorkDirUsage> {
  const usage: WorkDirUsage = { bytes: 0, entries: 0, truncated: false };
  const seen = new Set<string>();
  const stack = [dir];
  while (stack.length > 0) {
    const folder = stack.pop() as string;
    const names = await readdir(folder).catch(() => [] as string[]);
    for (const name of names) {
      usage.entries += 1;
      if (usage.entries > maxEntries) {
        usage.truncated = true;
        return usage;
      }
      const path = join(folder, name);
      // Not followed: a link to a folder outside is not the run's disk use (and may loop).
      const st = await lstat(path).catch(() => null);
      if (!st) continue;
      if (st.isDirectory()) stack.push(path);
      const id = `${st.dev}:${st.ino}`;
      if (seen.has(id)) continue;
      seen.add(id);
      usage.bytes += st.blocks * 512;
    }
  }
  if (openDeleted) usage.bytes += await openDeletedBytes(dir, seen);
  return usage;
}

/**
 * Blocks of files once under `dir`, deleted, and still open in some process (`/proc/PID/fd/N -> DIR/x (deleted)`).
 * The work folder's path is the same inside the sandbox (bound at itself) and unique to the run.
 */
async function openDeletedBytes(dir: string, seen: Set<string>): Promise<number> {
  let bytes = 0;
  const pids = (await readdir('/proc').catch(() => [] as string[])).filter((p) => /^\d+$/.test(p));
  for (const pid of pids) {
    const fds = await readdir(`/proc/${pid}/fd`).catch(() => [] as string[]);
    for (const fd of fds) {
      const target = await readlink(`/proc/${pid}/fd/${fd}`).catch(() => '');
      if (!target.startsWith(`${dir}/`) || !target.endsWith(' (deleted)')) continue;
      const st = await stat(`/proc/${pid}/fd/${fd}`).catch(() => null);
      if (!st) continue;
      const id = `${st.dev}:${st.ino}`;
      if (seen.has(id)) continue;
      seen.add(id);
      bytes += st.blocks * 512;
    }
  }
  return bytes;
}

export interface WorkDirQuota {
  /** Aborts when the watched folder passes the limit; give it to the run (with the caller's). */
  readonly signal: AbortSignal;
  /** Why it aborted, as the result's note; null while it has not. */
  readonly reason: string | null;
  /** Watches `dir` from now on (a warm run's server folder, or a cold run's own). */
  watch(dir: string): void;
  stop(): void;
}

/** How a quota names what it watches in its reason (an env build's folder is watched the same way as a run's). */
export interface WorkDirQuotaLabel {
  /** @defaultValue 'the work folder' */
  what?: string;
  /** The setting that sets the limit. @defaultValue 'REPGEN_WORK_MAX_MB' */
  setting?: string;
  /** Most entries a look counts (a build's folder holds uv's cache). @defaultValue MAX_WORK_ENTRIES */
  maxEntries?: number;
}

/** A watch over one run's work folder, at most `maxMb` of disk (`REPGEN_WORK_MAX_MB`). */
export function workDirQuota(maxMb: number, label: WorkDirQuotaLabel = {}): WorkDirQuota {
  const { what = 'the work folder', setting = 'REPGEN_WORK_MAX_MB', maxEntries = MAX_WORK_ENTRIES } = label;
  const controller = new AbortController();
  const maxBytes = maxMb * 1024 * 1024;
  let reason: string | null = null;
  let dir: string | null = null;
  let timer: NodeJS.Timeout | null = null;
  let stopped = false;
  let looking = false;
  let pauseMs = MIN_POLL_MS;
  let openDeletedAt = -Infinity;

  const look = async (): Promise<void> => {
    timer = null;
    if (stopped || dir === null) return;
    looking = true;
    const started = performance.now();
    const openDeleted = started - openDeletedAt >= OPEN_DELETED_MS;
    if (openDeleted) openDeletedAt = started;
    const usage = await workDirUsage(dir, { openDeleted, maxEntries }).finally(() => (looking = false));
    // Paced by the walk of the folder alone: the /proc look costs the same whatever the run does.
    if (!openDeleted) pauseMs = Math.min(MAX_POLL_MS, Math.max(MIN_POLL_MS, 10 * (performance.now() - started)));
    if (stopped) return;
    if (usage.truncated) reason = `stopped: ${what} holds more than ${maxEntries} files, the most a run may make`;
    else if (usage.bytes > maxBytes) reason = `stopped: ${what} passed its ${maxMb} MB limit (${setting})`;
    if (reason) {
      controller.abort(new Error(reason));
      return;
    }
    schedule();
  };
  const schedule = (): void => {
    if (stopped || timer || looking) return;
    timer = setTimeout(() => void look(), pauseMs);
    timer.unref();
  };

  return {
    signal: controller.signal,
    get reason() {
      return reason;
    },
    watch(next: string): void {
      dir = next;
      // Its first /proc walk a look's interval in, not at once: a folder just handed over holds no deleted file yet,
      // and a file deleted later is seen within OPEN_DELETED_MS either way. A run shorter than that (a forked
      // confirmation seed, 0.1 s) walks no /proc at all: on a host of a few hundred processes the walk cost more
      // CPU than the run (issue 42).
      openDeletedAt = performance.now();
      schedule();
    },
    stop(): void {
      stopped = true;
      if (timer) clearTimeout(timer);
    },
  };
}

/**
 * The result of a run the quota stopped: the script's own doing, like a timeout, not a cancelled run. A run the
 * caller cancelled as well stays cancelled.
 */
export function stoppedForDisk(result: RunResult, quota: WorkDirQuota, callerSignal: AbortSignal | undefined): RunResult {
  if (quota.reason === null || callerSignal?.aborted || result.infra?.kind !== 'aborted') return result;
  return { ...result, infra: null, exitCode: null, signal: 'SIGKILL', notes: [...(result.notes ?? []), quota.reason] };
}
