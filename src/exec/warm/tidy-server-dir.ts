import { lstat } from 'node:fs/promises';
import { listDir, pathIn, removeEntry, type HeldDir } from '../../host/untrusted-tree.js';

/** What stood in a fork server's work dir before a run: each name's inode, size and modification time. */
export type ServerDirState = Map<string, string>;

/** The state of a server's work dir, top level only, read without following a link. */
export async function readServerDir(dir: HeldDir): Promise<ServerDirState> {
  const state: ServerDirState = new Map();
  for (const name of await listDir(dir)) {
    const st = await lstat(pathIn(dir, name)).catch(() => null);
    if (st) state.set(name, `${st.ino}:${st.mode}:${st.size}:${st.mtimeMs}`);
  }
  return state;
}

/**
 * Puts a server's work dir back as it was before a run: what the run added goes (its own folder included), what
 * was there stays. That is what the server's imports wrote at import (a module that writes a file when it is
 * imported, as a cold run's does each time): the next run forked from the server has the module imported and
 * must find its file too. False when the run changed or removed something that was there: the server cannot
 * give the next run what a cold start would, and goes.
 */
export async function tidyServerDir(dir: HeldDir, before: ServerDirState): Promise<boolean> {
  const now = await readServerDir(dir);
  for (const name of now.keys()) if (!before.has(name)) await removeEntry(dir, name);
  for (const [name, was] of before) if (now.get(name) !== was) return false;
  return true;
}
