import { constants } from 'node:fs';
import { access, chmod, mkdir, readdir, rm, stat } from 'node:fs/promises';
import { dirname, isAbsolute, join, resolve } from 'node:path';
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

/** rm -rf that also gets through folders the script made unreadable (chmod 000) when we are not root. */
export async function removeWorkdir(workdir: string): Promise<void> {
  try {
    await rm(workdir, { recursive: true, force: true });
    return;
  } catch {
    // fall through: restore permissions, then retry
  }
  async function unlock(dir: string): Promise<void> {
    await chmod(dir, 0o700).catch(() => undefined);
    const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
    for (const e of entries) if (e.isDirectory()) await unlock(join(dir, e.name));
  }
  await unlock(workdir);
  await rm(workdir, { recursive: true, force: true }).catch(() => undefined);
}

/** Removes everything in `dir` but its owner's marker (which lives beside it). */
export async function emptyDir(dir: string): Promise<void> {
  const names = await readdir(dir).catch(() => [] as string[]);
  await Promise.all(names.map((n) => rm(join(dir, n), { recursive: true, force: true }).catch(() => undefined)));
}
