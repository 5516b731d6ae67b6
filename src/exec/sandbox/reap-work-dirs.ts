import { readFileSync } from 'node:fs';
import { lstat, mkdtemp, open, readdir, readFile, rm } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { constants } from 'node:fs';
import type { Logger } from '../../log.js';
import { removeWorkdir } from './fs.js';
import { OWNER_SUFFIX, OwnerMarker, staleWorkDirs, type ReapPolicy, type RootEntry, type SelfIdentity } from './stale-work-dirs.js';

/**
 * The fs side of owned throwaway folders: the owner marker written next to each one, and the reaper that
 * deletes the folders src/exec/sandbox/stale-work-dirs.ts calls stale. Deleting never follows a link: Node's recursive
 * rm unlinks symlinks it meets, and only folders whose owner is dead are deleted (its sandbox died with it:
 * bubblewrap runs with --die-with-parent as its pid namespace's parent), so no process can swap entries meanwhile.
 */

/** Start time of a process (field 22 of /proc/PID/stat), null when there is no such process. */
export function processStart(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: count from the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return fields[19] ?? null;
  } catch {
    return null;
  }
}

function bootId(): string | null {
  try {
    return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim() || null;
  } catch {
    return null;
  }
}

export function selfIdentity(): SelfIdentity {
  return { host: hostname(), boot: bootId() };
}

/** Writes `<dir>.owner` for a folder just made under a root; `keep` marks a folder kept for debugging. */
export async function writeOwnerMarker(dir: string, options: { keep?: boolean } = {}): Promise<void> {
  const self = selfIdentity();
  const marker: OwnerMarker = {
    pid: process.pid,
    start: processStart(process.pid),
    host: self.host,
    boot: self.boot,
    at: Date.now(),
    ...(options.keep ? { keep: true } : {}),
  };
  // O_EXCL | O_NOFOLLOW: never write through something already planted under that name.
  const fh = await open(`${dir}${OWNER_SUFFIX}`, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o644);
  try {
    await fh.writeFile(JSON.stringify(marker));
  } finally {
    await fh.close();
  }
}

/** mkdtemp under `root` plus its owner marker; a folder whose marker cannot be written is removed again. */
export async function makeOwnedDir(root: string, prefix: string, options: { keep?: boolean } = {}): Promise<string> {
  const dir = await mkdtemp(join(root, prefix));
  try {
    await writeOwnerMarker(dir, options);
  } catch (err) {
    await removeWorkdir(dir);
    throw err;
  }
  return dir;
}

/** Removes an owned folder, then its marker (in that order: a marker without its folder is reaped as an orphan). */
export async function removeOwnedDir(dir: string): Promise<void> {
  await removeWorkdir(dir);
  await rm(`${dir}${OWNER_SUFFIX}`, { force: true }).catch(() => undefined);
}

async function readMarker(path: string): Promise<OwnerMarker | 'invalid' | null> {
  const st = await lstat(path).catch(() => null);
  if (!st) return null;
  if (!st.isFile() || st.size > 4096) return 'invalid';
  try {
    const parsed = OwnerMarker.safeParse(JSON.parse(await readFile(path, 'utf8')));
    return parsed.success ? parsed.data : 'invalid';
  } catch {
    return 'invalid';
  }
}

async function scanRoot(root: string, self: SelfIdentity): Promise<RootEntry[]> {
  const names = await readdir(root).catch(() => [] as string[]);
  const entries: RootEntry[] = [];
  for (const name of names) {
    if (!name.startsWith('repgen-')) continue;
    const st = await lstat(join(root, name)).catch(() => null);
    if (!st) continue;
    const kind = st.isSymbolicLink() ? 'symlink' : st.isDirectory() ? 'dir' : st.isFile() ? 'file' : 'other';
    const marker = await readMarker(name.endsWith(OWNER_SUFFIX) ? join(root, name) : join(root, `${name}${OWNER_SUFFIX}`));
    const local = marker !== null && marker !== 'invalid' && marker.host === self.host;
    entries.push({ name, kind, mtimeMs: st.mtimeMs, marker, ...(local ? { liveStart: processStart(marker.pid) } : {}) });
  }
  return entries;
}

export interface Reaped {
  path: string;
  why: string;
}

/** Default ages: a folder is at least a minute old before it is judged; one nobody can vouch for goes after 2 days. */
export const DEFAULT_REAP = { minAgeMs: 60_000, maxAgeMs: 48 * 3_600_000 } as const;

/** Deletes the stale folders (and orphan markers) under each root; returns and logs what went. */
export async function reapWorkDirs(roots: readonly string[], log: Logger, policy: Partial<ReapPolicy> = {}): Promise<Reaped[]> {
  const self = selfIdentity();
  const full: ReapPolicy = { now: Date.now(), ...DEFAULT_REAP, ...policy };
  const reaped: Reaped[] = [];
  for (const root of new Set(roots)) {
    for (const decision of staleWorkDirs(await scanRoot(root, self), self, full)) {
      const path = join(root, decision.name);
      try {
        if (decision.markerOnly) await rm(path, { force: true });
        else await removeOwnedDir(path);
        reaped.push({ path, why: decision.why });
      } catch (err) {
        log.warn({ path, err: (err as Error).message }, 'could not reap a stale work folder');
      }
    }
  }
  if (reaped.length) log.info({ reaped }, `reaped ${reaped.length} stale work folder${reaped.length === 1 ? '' : 's'}`);
  return reaped;
}
