import { lstat, mkdir, mkdtemp, readdir, readFile, rename, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { SetupError } from '../errors.js';
import type { Substitution } from './types.js';
import { chownDir } from '../host/untrusted-tree.js';

/**
 * The env cache's folders. `<root>` is private (0700) to this process and, when RepGen is root, the sandbox's uid
 * (which writes builds and reads envs in runs); any other owner or a group/other bit refuses it, since a venv there
 * is run by every later job.
 *
 *   <root>/work/uv-cache     uv's cache: the one folder builds share (hard links from it make a venv in ~1 s)
 *   <root>/work/b-XXXX/      one build: its venv and temp files; the sandbox writes only <root>/work
 *   <root>/envs/<key>/       finished venvs, renamed from a build folder in one step; runs bind them read-only
 *   <root>/locks/<key>.json  `uv pip compile` output (and its substitutions) per compile input, so a job whose spec was seen does no network
 */
export interface EnvCachePaths {
  root: string;
  work: string;
  uvCache: string;
  envs: string;
  locks: string;
}

/** The cache folder cannot be trusted or made: an operator's fix (REPGEN_ENV_CACHE), not the project's. */
export class EnvCacheError extends SetupError {
  override name = 'EnvCacheError';
}

async function ensurePrivateDir(path: string, owner: { uid: number; gid: number } | null): Promise<void> {
  await mkdir(path, { recursive: true, mode: 0o700 });
  const st = await lstat(path);
  const me = process.geteuid?.() ?? -1;
  if (!st.isDirectory() || st.isSymbolicLink()) throw new EnvCacheError(`${path} is not a directory`);
  if (st.uid !== me && st.uid !== owner?.uid)
    throw new EnvCacheError(`${path} belongs to uid ${st.uid}, neither RepGen's nor the sandbox's`);
  if ((st.mode & 0o077) !== 0)
    throw new EnvCacheError(`${path} is open to other users (mode ${(st.mode & 0o777).toString(8)}); chmod 700 it`);
  if (owner && st.uid !== owner.uid) await chownDir(path, owner.uid, owner.gid);
}

/** Creates (or checks) the cache folders; `owner` is the sandbox's host uid when RepGen runs as root. */
export async function openEnvCache(root: string, owner: { uid: number; gid: number } | null): Promise<EnvCachePaths> {
  const paths = {
    root,
    work: join(root, 'work'),
    uvCache: join(root, 'work', 'uv-cache'),
    envs: join(root, 'envs'),
    locks: join(root, 'locks'),
  };
  await ensurePrivateDir(root, owner);
  for (const dir of [paths.work, paths.uvCache, paths.envs, paths.locks]) await ensurePrivateDir(dir, owner);
  await reapStaleBuilds(paths.work);
  return paths;
}

/** How old a build folder must be before it counts as left by a crashed process. */
const STALE_BUILD_MS = 24 * 3_600_000;

/** Removes build folders a crashed process left (none lives a day: each uv command has a 20-minute ceiling). */
async function reapStaleBuilds(work: string): Promise<void> {
  for (const name of await readdir(work).catch(() => [] as string[])) {
    if (!name.startsWith('b-')) continue;
    const st = await stat(join(work, name)).catch(() => null);
    if (st && Date.now() - st.mtimeMs > STALE_BUILD_MS) await rm(join(work, name), { recursive: true, force: true });
  }
}

/** A fresh build folder under work/ (the sandbox's uid owns it). */
export async function newBuildDir(paths: EnvCachePaths, owner: { uid: number; gid: number } | null): Promise<string> {
  const dir = await mkdtemp(join(paths.work, 'b-'));
  for (const sub of ['home', 'tmp']) await mkdir(join(dir, sub));
  if (owner) for (const p of [dir, join(dir, 'home'), join(dir, 'tmp')]) await chownDir(p, owner.uid, owner.gid);
  return dir;
}

/** Written last into a finished venv; its mtime says when a job last used it. */
const ENV_MARKER = '.repgen-env.json';

/** A finished venv, or null. The marker file is written last, so a half-renamed or broken one never counts. */
export async function findEnv(paths: EnvCachePaths, key: string): Promise<string | null> {
  const dir = join(paths.envs, key);
  const marker = join(dir, ENV_MARKER);
  const ok = await stat(marker).catch(() => null);
  if (!ok) return null;
  // The marker's mtime is the env's last use: pruneEnvs keeps what jobs still use.
  const now = new Date();
  await utimes(marker, now, now).catch(() => undefined);
  return dir;
}

/**
 * Removes the venvs no job has used for `unusedMs`, (files a removed venv linked stay in uv's cache until a `uv cache
 * prune`). Every job touches its venv when it starts, so a ceiling longer than a job's run cannot remove one under
 * it. Returns the keys removed.
 */
export async function pruneEnvs(paths: EnvCachePaths, unusedMs: number, now = Date.now()): Promise<string[]> {
  const removed: string[] = [];
  for (const key of await readdir(paths.envs).catch(() => [] as string[])) {
    const dir = join(paths.envs, key);
    const st = await stat(join(dir, ENV_MARKER)).catch(() => null);
    if (st && now - st.mtimeMs <= unusedMs) continue;
    // Rename first: a job looking the key up meanwhile finds nothing rather than a half-removed venv.
    const doomed = join(paths.work, `gone-${key}-${process.pid}`);
    await rename(dir, doomed).catch(() => undefined);
    await rm(doomed, { recursive: true, force: true });
    removed.push(key);
  }
  return removed;
}

/**
 * Moves a built venv into place atomically. Another job that finished the same key first wins; this one's copy is
 * thrown away (both are the same lock, so either serves).
 */
export async function publishEnv(paths: EnvCachePaths, key: string, builtVenv: string, meta: object): Promise<string> {
  await writeFile(join(builtVenv, ENV_MARKER), `${JSON.stringify(meta, null, 2)}\n`, { mode: 0o644 });
  const dest = join(paths.envs, key);
  try {
    await rename(builtVenv, dest);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'ENOTEMPTY' && code !== 'EEXIST') throw err;
    await rm(builtVenv, { recursive: true, force: true });
  }
  return dest;
}

/** A compiled lock and the substitutions that compiling it made (a later job that reuses it states them too). */
export interface CachedLock {
  lock: string;
  substitutions: Substitution[];
  /** Who pulled each distribution in (uv's annotations); absent in locks cached before it was kept. */
  via?: Record<string, string[]>;
  /** Base-provided distributions an overlay build found too old for the lock (its import check): installed at the lock's version. */
  keep?: string[];
}

export async function readCachedLock(paths: EnvCachePaths, inputKey: string, maxAgeMs: number): Promise<CachedLock | null> {
  const file = join(paths.locks, `${inputKey}.json`);
  const st = await stat(file).catch(() => null);
  if (!st || Date.now() - st.mtimeMs > maxAgeMs) return null;
  try {
    const data = JSON.parse(await readFile(file, 'utf8')) as CachedLock;
    return typeof data.lock === 'string' && Array.isArray(data.substitutions) ? data : null;
  } catch {
    return null;
  }
}

export async function writeCachedLock(paths: EnvCachePaths, inputKey: string, entry: CachedLock): Promise<void> {
  const tmp = join(paths.locks, `.${inputKey}.${process.pid}.tmp`);
  await writeFile(tmp, JSON.stringify(entry), { mode: 0o600 });
  await rename(tmp, join(paths.locks, `${inputKey}.json`));
}
