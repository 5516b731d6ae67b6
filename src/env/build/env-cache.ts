import { chmod, lstat, mkdir, mkdtemp, readdir, readFile, rename, stat, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { SetupError } from '../../errors.js';
import { unreachableBy } from '../../exec/sandbox/sandbox.js';
import { closeSealedEnv, removeTree, sealBroken, sealEnv } from './seal-env.js';
import type { EnvCachePaths, Substitution } from '../types.js';
import { chownDir } from '../../host/untrusted-tree.js';

/**
 * The env cache's folders. `<root>`, `envs/`, `locks/` and `work/` are RepGen's own: only this process's uid may own
 * them (never the sandbox's, which a build's code runs as), with no bit for others but search when the sandbox's uid
 * needs a way through (RepGen as root). A venv there is run by every later job, so any other owner refuses the cache.
 *
 *   <root>/work/s-<scope>/           one build scope, the only folder a build's steps can write (the sandbox's uid owns it):
 *   <root>/work/s-<scope>/uv-cache   uv's cache, shared only by builds of the same scope (the same compile input and
 *                                    build commands, so the same third-party code); venvs copy from it, never link;
 *                                    dropped once the scope's venv is published (dropScopeCache) unless kept by setting
 *   <root>/work/s-<scope>/b-XXXX/    one build: its venv and temp files
 *   <root>/work/b-XXXX/              one build of a project's extensions (src/env/build/project-build.ts)
 *   <root>/envs/<key>/               finished venvs, moved out of reach of the builds and sealed (src/env/build/seal-env.ts);
 *                                    runs bind them read-only, and a job uses one only while it matches its manifest
 *   <root>/locks/<key>.json          `uv pip compile` output (and its substitutions) per compile input, so a job whose spec was seen does no network
 */

/** The cache folder cannot be trusted or made: an operator's fix (REPGEN_ENV_CACHE), not the project's. */
export class EnvCacheError extends SetupError {
  override name = 'EnvCacheError';
}

function myIds(): { uid: number; gid: number } {
  return { uid: process.geteuid?.() ?? -1, gid: process.getegid?.() ?? -1 };
}

/**
 * Makes (or checks) a folder of the cache. `sandboxes`: a scope folder, which the sandbox's uid owns and writes; every
 * other folder must be this process's uid's alone. `search`: others may pass through (the sandbox's uid, when RepGen
 * is root and the sandbox is another uid, reaches envs/ and its scope that way).
 */
async function ensurePrivateDir(
  path: string,
  owner: { uid: number; gid: number } | null,
  { sandboxes = false, search = false }: { sandboxes?: boolean; search?: boolean } = {},
): Promise<void> {
  const mode = search && owner ? 0o711 : 0o700;
  await mkdir(path, { recursive: true, mode });
  const st = await lstat(path);
  const me = myIds().uid;
  if (!st.isDirectory() || st.isSymbolicLink()) throw new EnvCacheError(`${path} is not a directory`);
  const mine = st.uid === me || (sandboxes && owner !== null && st.uid === owner.uid);
  if (!mine) {
    const whose = owner && st.uid === owner.uid ? "the sandbox's, whose builds run third-party code" : 'not RepGen’s';
    throw new EnvCacheError(`${path} belongs to uid ${st.uid} (${whose}); RepGen (uid ${me}) must own it: remove it`);
  }
  // Group or other may search a folder the sandbox passes through, never list or write it.
  const allowed = search && owner ? 0o011 : 0;
  if ((st.mode & 0o077 & ~allowed) !== 0)
    throw new EnvCacheError(`${path} is open to other users (mode ${(st.mode & 0o777).toString(8)}); chmod 700 it`);
  if ((st.mode & 0o077) !== allowed) await chmod(path, (st.mode & 0o700) | allowed);
  if (sandboxes && owner && st.uid !== owner.uid) await chownDir(path, owner.uid, owner.gid);
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
  await ensurePrivateDir(root, owner, { search: true });
  await ensurePrivateDir(paths.work, owner, { search: true });
  await ensurePrivateDir(paths.envs, owner, { search: true });
  await ensurePrivateDir(paths.locks, owner);
  await reapStaleBuilds(paths.work);
  return paths;
}

/**
 * The folders of one build scope: builds of one scope share uv's cache, builds of two scopes share no folder they
 * can write. The scope is a hash of what decides which third-party code a build runs (uv-builder.ts), so one
 * project's setup.py cannot change a file another project's build takes from the cache.
 */
export async function openBuildScope(
  paths: EnvCachePaths,
  scope: string,
  owner: { uid: number; gid: number } | null,
): Promise<EnvCachePaths> {
  // 16 hex digits (64 bits) name a scope: the index proxy's socket lives under it, and a socket's path holds 107 bytes.
  const work = join(paths.work, `s-${scope.slice(0, 16)}`);
  await ensurePrivateDir(work, owner, { sandboxes: true });
  const uvCache = join(work, 'uv-cache');
  await ensurePrivateDir(uvCache, owner, { sandboxes: true });
  // bwrap as the sandbox's uid would fail later with a bare "Permission denied".
  const why = await unreachableBy(uvCache, owner, true);
  if (why) throw new EnvCacheError(`the sandbox cannot reach ${uvCache}: ${why}`);
  // Its mtime is its last use: pruneEnvs removes the scopes no build used for as long as an unused env.
  const now = new Date();
  await utimes(work, now, now).catch(() => undefined);
  return { ...paths, work, uvCache };
}

/**
 * Drops a scope's uv cache once a build of that scope has published its venv and no other build of the scope is under
 * way: the sealed venv is what later jobs reuse, and a cache kept per scope (issue 38) holds every wheel of the env a
 * second time, unpacked (a torch env: about 0.8 GB more per scope, where the env itself is about 1 GB). A build that
 * starts in the scope afterwards gets an empty cache (uv makes it in the scope's folder, which the build writes) and
 * downloads again. The cache is renamed away first and the scope's builds counted after, so a build that started in
 * between keeps it. `ownBuildDir` is the finishing build's folder, already removed or about to be.
 */
export async function dropScopeCache(paths: EnvCachePaths, ownBuildDir: string): Promise<boolean> {
  if (paths.work === join(paths.root, 'work')) return false;
  const tomb = join(paths.work, `uv-cache.dropped-${process.pid}-${Date.now()}`);
  try {
    await rename(paths.uvCache, tomb);
  } catch {
    return false;
  }
  const others = (await readdir(paths.work).catch(() => [] as string[])).filter(
    (n) => n.startsWith('b-') && join(paths.work, n) !== ownBuildDir,
  );
  if (others.length > 0) {
    // Another build of this scope is under way: give it its cache back (unless uv already made a new one).
    const back = await rename(tomb, paths.uvCache).then(
      () => true,
      () => false,
    );
    if (back) return false;
  }
  await removeTree(tomb);
  return true;
}

/** How old a build folder must be before it counts as left by a crashed process. */
const STALE_BUILD_MS = 24 * 3_600_000;

/** Removes build folders a crashed process left (none lives a day: each uv command has a 20-minute ceiling). */
async function reapStaleBuilds(work: string): Promise<void> {
  const folders = [work];
  for (const name of await readdir(work).catch(() => [] as string[])) if (name.startsWith('s-')) folders.push(join(work, name));
  for (const folder of folders) {
    for (const name of await readdir(folder).catch(() => [] as string[])) {
      if (!name.startsWith('b-')) continue;
      const st = await stat(join(folder, name)).catch(() => null);
      if (st && Date.now() - st.mtimeMs > STALE_BUILD_MS) await removeTree(join(folder, name));
    }
  }
}

/** A fresh build folder under `paths.work` (the sandbox's uid owns it). */
export async function newBuildDir(paths: EnvCachePaths, owner: { uid: number; gid: number } | null): Promise<string> {
  const dir = await mkdtemp(join(paths.work, 'b-'));
  for (const sub of ['home', 'tmp']) await mkdir(join(dir, sub));
  if (owner) for (const p of [dir, join(dir, 'home'), join(dir, 'tmp')]) await chownDir(p, owner.uid, owner.gid);
  return dir;
}

/** Written last into a finished venv; its mtime says when a job last used it. */
const ENV_MARKER = '.repgen-env.json';
/** Where a venv is sealed, out of the builds' reach, before it takes its key's name. */
const STAGING = '.staging-';

/**
 * A finished venv, or null. The marker file is written last, so a half-renamed or broken one never counts; one that
 * no longer matches its seal (a file changed, added or given away since it was published) is removed, and the
 * caller builds it again.
 */
export async function findEnv(paths: EnvCachePaths, key: string): Promise<string | null> {
  const dir = join(paths.envs, key);
  const marker = join(dir, ENV_MARKER);
  const ok = await stat(marker).catch(() => null);
  if (!ok) return null;
  if (await sealBroken(dir, myIds())) {
    await discard(paths, dir, key);
    return null;
  }
  // The marker's mtime is the env's last use: pruneEnvs keeps what jobs still use.
  const now = new Date();
  await utimes(marker, now, now).catch(() => undefined);
  return dir;
}

/** Renames first: a job looking the key up meanwhile finds nothing rather than a half-removed venv. */
async function discard(paths: EnvCachePaths, dir: string, key: string): Promise<void> {
  const doomed = join(paths.envs, `${STAGING}gone-${key}-${process.pid}-${Date.now()}`);
  await rename(dir, doomed).catch(() => undefined);
  await removeTree(doomed);
}

/**
 * Removes the venvs no job has used for `unusedMs`, and the build scopes (their uv caches) no build has used for as
 * long. Every job touches its venv when it starts, so a ceiling longer than a job's run cannot remove one under it.
 * Returns the keys removed.
 */
export async function pruneEnvs(paths: EnvCachePaths, unusedMs: number, now = Date.now()): Promise<string[]> {
  const removed: string[] = [];
  for (const key of await readdir(paths.envs).catch(() => [] as string[])) {
    const dir = join(paths.envs, key);
    if (key.startsWith(STAGING)) {
      // A publish under way, or one a crashed process left.
      const st = await lstat(dir).catch(() => null);
      if (st && now - st.mtimeMs > STALE_BUILD_MS) await removeTree(dir);
      continue;
    }
    const st = await stat(join(dir, ENV_MARKER)).catch(() => null);
    if (st && now - st.mtimeMs <= unusedMs) continue;
    await discard(paths, dir, key);
    removed.push(key);
  }
  for (const name of await readdir(paths.work).catch(() => [] as string[])) {
    if (!name.startsWith('s-')) continue;
    const st = await lstat(join(paths.work, name)).catch(() => null);
    if (st && now - st.mtimeMs > Math.max(unusedMs, STALE_BUILD_MS)) await removeTree(join(paths.work, name));
  }
  return removed;
}

/**
 * Moves a built venv into place atomically, sealed: first out of the build's folder (which the sandbox's uid can
 * write) into envs/, where only RepGen can, then made RepGen's and read-only with its manifest, then renamed to its
 * key. Another job that finished the same key first wins; this one's copy is thrown away (both are the same lock,
 * so either serves).
 */
export async function publishEnv(paths: EnvCachePaths, key: string, builtVenv: string, meta: object): Promise<string> {
  const staging = join(paths.envs, `${STAGING}${key}-${process.pid}-${Date.now()}`);
  await rename(builtVenv, staging);
  const dest = join(paths.envs, key);
  try {
    await sealEnv(staging, myIds());
    await writeFile(join(staging, ENV_MARKER), `${JSON.stringify(meta, null, 2)}\n`, { mode: 0o644 });
    await rename(staging, dest);
  } catch (err) {
    await removeTree(staging);
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'ENOTEMPTY' && code !== 'EEXIST') throw err;
    return dest;
  }
  await closeSealedEnv(dest);
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
