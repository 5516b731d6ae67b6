import { lstat, mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import { SetupError } from '../errors.js';

/**
 * Shared caches (checkouts, context indexes, probe answers) live by default under the world-writable tmpdir, where
 * another local user can make a folder first and fill it with what RepGen would then trust (another project's code
 * under the right SHA changed a verdict). A cache folder is trusted only when it is a real folder (not a link), owned
 * by RepGen's own uid and writable by nobody else; an entry inside one, only when it passes the same test.
 */

/** Why `path` cannot be trusted as RepGen's own folder, or null when it can (or does not exist: `missing`). */
export async function distrust(path: string, uid = process.getuid?.() ?? -1): Promise<string | null | 'missing'> {
  let st;
  try {
    st = await lstat(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 'missing';
    return `cannot be read (${(err as NodeJS.ErrnoException).code ?? String(err)})`;
  }
  if (st.isSymbolicLink()) return 'is a symbolic link';
  if (!st.isDirectory()) return 'is not a folder';
  if (uid >= 0 && st.uid !== uid) return `is owned by uid ${st.uid}, not RepGen's (${uid})`;
  if ((st.mode & 0o022) !== 0) return `is writable by others (mode ${(st.mode & 0o777).toString(8)})`;
  return null;
}

/**
 * Makes `path` (0755: the sandbox's uid reads checkouts) or checks the one there; throws a WorkspaceError naming the
 * setting to change when it is not RepGen's own. Parents are made as needed and are not checked (tmpdir itself is
 * world-writable, with the sticky bit).
 */
export async function ensureOwnedDir(path: string, setting: string): Promise<void> {
  const first = await distrust(path);
  if (first === 'missing') {
    await mkdir(dirname(path), { recursive: true }).catch(() => undefined);
    await mkdir(path, { mode: 0o755 }).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'EEXIST') throw new SetupError(`cannot create '${path}': ${err.code ?? String(err)}`);
    });
  }
  const why = await distrust(path);
  if (why === 'missing' || why !== null)
    throw new SetupError(
      `the cache folder '${path}' ${why === 'missing' ? 'could not be made' : why}: RepGen will not trust what it holds. ` +
        `Remove it, or point ${setting} at a folder of RepGen's own.`,
    );
}
