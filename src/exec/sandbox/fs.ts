import { constants } from 'node:fs';
import { access, mkdir, stat } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';
import { holdDir, removeEntry } from '../../host/untrusted-tree.js';
import { InterpreterNotFoundError } from '../errors.js';
import { SAFE_PATH } from './script-env.js';

/** An absolute path to an executable interpreter, or an InterpreterNotFoundError saying what to set. */
export async function resolveInterpreter(name: string): Promise<string> {
  const candidates = name.includes('/') ? [isAbsolute(name) ? name : resolve(name)] : SAFE_PATH.split(':').map((d) => join(d, name));
  for (const candidate of candidates) {
    try {
      await access(candidate, constants.X_OK);
      if ((await stat(candidate)).isFile()) return candidate;
    } catch {
      // try the next
    }
  }
  throw new InterpreterNotFoundError(
    `Python interpreter not found: ${name} (set REPGEN_PYTHON or pass --python; Debian's torch is under /usr/bin/python3)`,
  );
}

/**
 * mkdir -p with a bounded walk up. Node's recursive mkdir loops forever under /proc (ENOENT for the child, EEXIST
 * for the parent, retry), and the work root is a setting a user can point anywhere.
 */
export async function ensureDir(path: string, depth = 0): Promise<void> {
  try {
    await mkdir(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') {
      if ((await stat(path)).isDirectory()) return;
      throw err;
    }
    if (code !== 'ENOENT' || depth >= 32 || dirname(path) === path) throw err;
    await ensureDir(dirname(path), depth + 1);
    await mkdir(path);
  }
}

/**
 * rm -rf of a work dir a sandbox wrote, never through a link (a folder swapped for one mid-walk included), and
 * through folders the script made unreadable (chmod 000). Its parent is the host's own.
 */
export async function removeWorkdir(workdir: string): Promise<void> {
  let parent;
  try {
    parent = await holdDir(dirname(workdir));
  } catch {
    return;
  }
  try {
    await removeEntry(parent, basename(workdir));
  } catch {
    // best effort, as rm -rf --force: what is left is reaped with the work root's stale dirs
  } finally {
    await parent.close();
  }
}
