import { constants } from 'node:fs';
import { chmod, lchown, lstat, mkdir, open, readdir, rmdir, unlink, type FileHandle } from 'node:fs/promises';

/**
 * The host's only way to write, chown or remove inside a folder a sandbox could write (a warm server's work folder,
 * a run's folder, a build copy of a checkout, the env cache's work/). RepGen may be root: a link the sandbox planted
 * there, followed by the host, writes or chowns wherever the link points (issue 38: `run-1/repro.py -> /root-only/x`).
 *
 * Node has no openat(), so every path below a folder is resolved from a descriptor held on it, through
 * `/proc/self/fd/<fd>/<name>`: the kernel resolves the magic link to the very folder that was opened, and the last
 * component is opened with O_NOFOLLOW. A folder swapped for a link between two calls is then refused (ELOOP or
 * ENOTDIR), never followed, at every depth. Files are created with O_EXCL (never an inode someone else made),
 * ownership changes go through the descriptor or lchown, and a walk never descends into a link.
 */

const DIR_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;
const NEW_FILE_FLAGS = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;

/** A folder held open: names under it resolve from the descriptor, never through a link. */
export interface HeldDir {
  /** What the folder was opened as (for messages only: never resolved again). */
  readonly path: string;
  readonly handle: FileHandle;
  close(): Promise<void>;
}

/** Thrown when a path holds a link, or a name that is not one plain path component: the host goes no further. */
export class UntrustedPathError extends Error {
  override name = 'UntrustedPathError';
}

function component(name: string): string {
  if (name === '' || name === '.' || name === '..' || name.includes('/') || name.includes('\0'))
    throw new UntrustedPathError(`'${name}' is not a single path component`);
  return name;
}

/** The path of `name` inside `dir`, resolved from dir's descriptor. */
export function pathIn(dir: HeldDir, name: string): string {
  return `/proc/self/fd/${dir.handle.fd}/${component(name)}`;
}

function held(path: string, handle: FileHandle): HeldDir {
  return { path, handle, close: () => handle.close().catch(() => undefined) };
}

function refuseLink(err: unknown, where: string): never {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'ELOOP' || code === 'ENOTDIR') throw new UntrustedPathError(`${where} is a link or not a folder: not followed`);
  throw err;
}

/**
 * Opens a folder without following a link at its last component. Its parents must be the host's own (made by
 * RepGen, not writable by a sandbox): only the last component is checked.
 */
export async function holdDir(path: string): Promise<HeldDir> {
  try {
    return held(path, await open(path, DIR_FLAGS));
  } catch (err) {
    return refuseLink(err, path);
  }
}

/** Opens the sub-folder `name` of `dir`; a link there is refused. */
export async function holdSubdir(dir: HeldDir, name: string): Promise<HeldDir> {
  try {
    return held(`${dir.path}/${name}`, await open(pathIn(dir, name), DIR_FLAGS));
  } catch (err) {
    return refuseLink(err, `${dir.path}/${name}`);
  }
}

/**
 * Makes the folder `name` in `dir` and holds it. It must not exist: a name already there (a folder, a file or a
 * link someone planted) is refused with EEXIST, so what the host then writes into goes into a folder it made.
 */
export async function makeFreshDir(dir: HeldDir, name: string, mode = 0o700): Promise<HeldDir> {
  await mkdir(pathIn(dir, name), { mode });
  return holdSubdir(dir, name);
}

/** Holds `name` in `dir`, making it when it is missing; what is there must be a real folder. */
async function holdOrMakeSubdir(dir: HeldDir, name: string, mode: number): Promise<HeldDir> {
  try {
    await mkdir(pathIn(dir, name), { mode });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  return holdSubdir(dir, name);
}

/**
 * Writes a new file at `relPath` ('a/b/c.py') under `root`, making the folders on the way: each folder is opened
 * without following a link, and the file is created with O_EXCL | O_NOFOLLOW, so a name already there (a planted
 * link included) fails with EEXIST and nothing outside `root` is ever written.
 */
export async function writeNewFile(root: HeldDir, relPath: string, content: string | Uint8Array, mode = 0o644): Promise<void> {
  const parts = relPath.split('/').filter((p) => p !== '' && p !== '.');
  const name = parts.pop();
  if (name === undefined) throw new UntrustedPathError(`'${relPath}' names no file`);
  let dir = root;
  try {
    for (const part of parts) {
      const next = await holdOrMakeSubdir(dir, part, 0o755);
      if (dir !== root) await dir.close();
      dir = next;
    }
    const file = await open(pathIn(dir, name), NEW_FILE_FLAGS, mode);
    try {
      await file.writeFile(content);
    } finally {
      await file.close();
    }
  } finally {
    if (dir !== root) await dir.close();
  }
}

/**
 * Gives everything under `root` (itself included, last) to uid/gid: folders through their own descriptor, other
 * entries with lchown (a link changes owner itself, its target never does). The walk never enters a link. A file
 * with more than one name is skipped: it may be a hard link to a file outside the tree, whose owner must not change.
 */
export async function chownTree(root: HeldDir, uid: number, gid: number): Promise<void> {
  for (const name of await listDir(root)) {
    const path = pathIn(root, name);
    const st = await lstat(path).catch(() => null);
    if (!st) continue;
    if (st.isDirectory()) {
      let sub: HeldDir;
      try {
        sub = await holdSubdir(root, name);
      } catch (err) {
        if (err instanceof UntrustedPathError) continue;
        throw err;
      }
      try {
        await chownTree(sub, uid, gid);
      } finally {
        await sub.close();
      }
    } else if (st.isSymbolicLink() || st.nlink <= 1) {
      await lchown(path, uid, gid);
    }
  }
  // The folder itself last: until it is given away, a sandbox of another uid cannot add to what is being walked.
  await root.handle.chown(uid, gid);
}

/** Opens `path` as a folder (never a link) and gives it alone to uid/gid. */
export async function chownDir(path: string, uid: number, gid: number): Promise<void> {
  const dir = await holdDir(path);
  try {
    await dir.handle.chown(uid, gid);
  } finally {
    await dir.close();
  }
}

/** The names in a held folder. */
export function listDir(dir: HeldDir): Promise<string[]> {
  return readdir(`/proc/self/fd/${dir.handle.fd}`);
}

/**
 * Removes `name` from `dir` and, when it is a folder, everything under it, never through a link: a link is
 * unlinked itself, and each folder is emptied through a descriptor held on it, so a folder swapped for a link
 * mid-walk only loses the link. Folders a script made unreadable are opened up first (chmod through the descriptor).
 */
export async function removeEntry(dir: HeldDir, name: string): Promise<void> {
  const path = pathIn(dir, name);
  let sub: HeldDir;
  try {
    sub = await holdSubdir(dir, name);
  } catch (err) {
    if (err instanceof UntrustedPathError) {
      await unlink(path).catch(ignoreMissing);
      return;
    }
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return;
    if (code !== 'EACCES') throw err;
    // A folder the script closed (chmod 000): ours to open up again.
    await lchmodDir(dir, name);
    sub = await holdSubdir(dir, name);
  }
  try {
    await sub.handle.chmod(0o700).catch(() => undefined);
    for (const child of await listDir(sub)) await removeEntry(sub, child);
  } finally {
    await sub.close();
  }
  await rmdir(path).catch(ignoreMissing);
}

function ignoreMissing(err: unknown): void {
  if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
}

/** Linux's O_PATH (the same value on x86-64 and arm64): opens a folder to name it, with no permission to read it. */
const O_PATH = 0o10000000;

/** chmod 0700 of the folder `name` in `dir` that its mode closes to us (a script's chmod 000), never through a link. */
async function lchmodDir(dir: HeldDir, name: string): Promise<void> {
  let handle: FileHandle;
  try {
    handle = await open(pathIn(dir, name), O_PATH | constants.O_DIRECTORY | constants.O_NOFOLLOW);
  } catch (err) {
    return refuseLink(err, `${dir.path}/${name}`);
  }
  try {
    // fchmod refuses an O_PATH descriptor; its /proc/self/fd name reaches the same inode.
    await chmod(`/proc/self/fd/${handle.fd}`, 0o700);
  } finally {
    await handle.close();
  }
}
