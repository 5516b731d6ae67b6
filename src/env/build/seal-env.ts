import { chmodSync, lchownSync, lstatSync, readdirSync, readlinkSync } from 'node:fs';
import { chmod, lchown, lstat, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * A finished env, sealed: every entry RepGen's own (links by `lchown`, never followed), nothing writable by anyone,
 * and a manifest of what is there written beside it. A later job runs the env only if the tree still matches the
 * manifest: each entry's type, mode, owner, size, inode, link count, link target and change time (ctime, which no
 * process can set back: any write, chmod, chown or new link moves it). A stat walk is cheap next to hashing the
 * files (docs/benchmarks.md), and a file changed through an inode the env shares with something else (the hard
 * links of issue 38's cache poisoning) changes its ctime too.
 */

/** The manifest, and the files that the manifest itself does not list (the marker's mtime records each use). */
export const MANIFEST = '.repgen-manifest';
const UNLISTED = new Set([MANIFEST, '.repgen-env.json']);

/** Entries a sealed env may hold at most: a walk of this many stays well under a second. */
const MAX_ENTRIES = 500_000;

interface Entry {
  rel: string;
  line: string;
}

/**
 * Every entry under `root` but the unlisted ones, sorted, with what `visit` says of it. Synchronous on purpose: an
 * env of 13,000 files took 3.9 s as async lstat calls on a loaded machine, and well under a second this way.
 */
function walk(root: string, visit: (path: string, rel: string) => string): Entry[] {
  const out: Entry[] = [];
  const stack = [''];
  while (stack.length > 0) {
    const rel = stack.pop() as string;
    for (const name of readdirSync(rel ? join(root, rel) : root)) {
      if (!rel && UNLISTED.has(name)) continue;
      const child = rel ? `${rel}/${name}` : name;
      const path = join(root, child);
      const line = visit(path, child);
      if (lstatSync(path).isDirectory()) stack.push(child);
      out.push({ rel: child, line });
      if (out.length > MAX_ENTRIES) throw new Error(`more than ${MAX_ENTRIES} entries`);
    }
  }
  return out.sort((a, b) => (a.rel < b.rel ? -1 : a.rel > b.rel ? 1 : 0));
}

/** One manifest line: what the entry is now. */
function describe(path: string, rel: string): string {
  const st = lstatSync(path, { bigint: true });
  const kind = st.isDirectory() ? 'd' : st.isFile() ? 'f' : st.isSymbolicLink() ? 'l' : 'x';
  const target = kind === 'l' ? readlinkSync(path) : '';
  const fields = [kind, (st.mode & 0o7777n).toString(8), st.uid, st.gid, st.size, st.ino, st.nlink, st.ctimeNs];
  return JSON.stringify([rel, ...fields.map(String), target]);
}

/**
 * Makes `dir` (a venv no sandbox can reach any longer) RepGen's and read-only, and writes its manifest. `dir` itself
 * stays writable by its owner until {@link closeSealedEnv}: it is renamed into place first.
 */
export async function sealEnv(dir: string, me: { uid: number; gid: number }): Promise<void> {
  const root = await lstat(dir);
  if (!root.isDirectory() || root.isSymbolicLink()) throw new Error(`${dir} is not a directory`);
  if (me.uid === 0 && root.uid !== 0) await lchown(dir, me.uid, me.gid);
  await chmod(dir, 0o755);
  walk(dir, (path) => {
    const st = lstatSync(path);
    if (!st.isDirectory() && !st.isFile() && !st.isSymbolicLink()) throw new Error(`${path} is neither a file, a folder nor a link`);
    // Only root can give a file away; as any other uid the sandbox's files are already this uid's (its user namespace).
    if (me.uid === 0 && (st.uid !== me.uid || st.gid !== me.gid)) lchownSync(path, me.uid, me.gid);
    // No write bit for anyone, no set-id bit: what the env runs is what was built.
    if (!st.isSymbolicLink()) chmodSync(path, st.mode & 0o555);
    return '';
  });
  const lines = walk(dir, describe);
  await writeFile(join(dir, MANIFEST), `${lines.map((e) => e.line).join('\n')}\n`, { mode: 0o444 });
}

/** The sealed env's own folder closed too, once it is in place. */
export async function closeSealedEnv(dir: string): Promise<void> {
  await chmod(dir, 0o555);
}

/**
 * Why `dir` is not the env that was sealed there (an entry added, removed or changed since, one not RepGen's, one
 * writable), or null when it is.
 */
export async function sealBroken(dir: string, me: { uid: number }): Promise<string | null> {
  const root = await lstat(dir).catch(() => null);
  if (!root || !root.isDirectory()) return 'not a directory';
  if (root.uid !== me.uid) return `owned by uid ${root.uid}`;
  if ((root.mode & 0o022) !== 0) return 'writable by others';
  const manifest = await readFile(join(dir, MANIFEST), 'utf8').catch(() => null);
  if (manifest === null) return 'no manifest';
  let lines: Entry[];
  try {
    lines = walk(dir, describe);
  } catch (err) {
    return `unreadable (${err instanceof Error ? err.message : String(err)})`;
  }
  const now = `${lines.map((e) => e.line).join('\n')}\n`;
  if (now === manifest) return null;
  const was = new Set(manifest.split('\n'));
  const changed = lines.find((e) => !was.has(e.line));
  return changed ? `${changed.rel} changed since it was sealed` : 'an entry is gone since it was sealed';
}

/** Removes a tree whose folders are read-only (a sealed env): as any uid but root, entries of a 0555 folder stay. */
export async function removeTree(dir: string): Promise<void> {
  const st = await lstat(dir).catch(() => null);
  if (!st) return;
  if (st.isDirectory()) {
    await chmod(dir, 0o700).catch(() => undefined);
    for (const name of await readdir(dir).catch(() => [] as string[])) {
      const child = join(dir, name);
      const c = await lstat(child).catch(() => null);
      if (c?.isDirectory()) await removeTree(child);
    }
  }
  await rm(dir, { recursive: true, force: true });
}
