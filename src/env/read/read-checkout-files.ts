import { lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { readBounded } from '../../host/read-bounded.js';
import { DEPENDENCY_FILE, type RepoFiles } from './read-repo-deps.js';
import { joinPath } from './read-requirement-files.js';

/**
 * The adapter that reads a checkout for the spec: a listing of its paths (for the layout and the native
 * sources) and the text of its dependency files. Reads only; runs nothing; follows no symbolic link (a
 * link could point out of the checkout).
 */

const SKIP_DIRS = new Set([
  '.git',
  '.hg',
  '.svn',
  'node_modules',
  '__pycache__',
  '.venv',
  'venv',
  '.tox',
  '.nox',
  '.eggs',
  'site-packages',
  'wandb',
]);
/** Caps on what one checkout may make us read. */
const MAX_PATHS = 50_000;
const MAX_DEPTH = 10;
const MAX_TEXT_BYTES = 512 * 1024;
const MAX_TEXTS = 200;

/** `extraTexts`: more paths to read (repgen.yml's `environment.requirements`). */
export async function readCheckoutFiles(dir: string, extraTexts: readonly string[] = []): Promise<RepoFiles> {
  const paths: string[] = [];
  const walk = async (rel: string, depth: number): Promise<void> => {
    if (depth > MAX_DEPTH || paths.length >= MAX_PATHS) return;
    let entries;
    try {
      entries = await readdir(join(dir, rel), { withFileTypes: true });
    } catch {
      return;
    }
    entries.sort((a, b) => a.name.localeCompare(b.name));
    for (const e of entries) {
      if (paths.length >= MAX_PATHS) return;
      const p = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory() && !SKIP_DIRS.has(e.name)) await walk(p, depth + 1);
      else if (e.isFile()) paths.push(p);
    }
  };
  await walk('', 0);
  const listed = new Set(paths);
  const texts = new Map<string, string>();
  const read = async (p: string): Promise<string | null> => {
    if (texts.has(p)) return texts.get(p) ?? null;
    if (texts.size >= MAX_TEXTS || !listed.has(p)) return null;
    const full = join(dir, p);
    const st = await lstat(full).catch(() => null);
    if (!st?.isFile() || st.size > MAX_TEXT_BYTES) return null;
    const bytes = await readBounded(full, { maxBytes: MAX_TEXT_BYTES }).catch(() => null);
    if (!bytes) return null;
    texts.set(p, bytes.toString('utf8'));
    return texts.get(p) ?? null;
  };
  // The files repgen.yml names first, whatever their names (`ci/deps.txt`), and the files their `-r` lines include:
  // DEPENDENCY_FILE only knows the usual names.
  const queue = [...extraTexts];
  for (let i = 0; i < queue.length && i < MAX_TEXTS; i++) {
    const p = queue[i]!;
    const text = await read(p);
    if (text === null) continue;
    const dirOf = p.includes('/') ? p.slice(0, p.lastIndexOf('/')) : '';
    for (const m of text.matchAll(/^[ \t]*(?:-r|--requirement)(?:[ \t]+|=)(\S+)/gm)) {
      const target = joinPath(dirOf, m[1] ?? '');
      if (target !== null && !queue.includes(target)) queue.push(target);
    }
  }
  for (const p of paths) if (DEPENDENCY_FILE.test(p)) await read(p);
  return { paths, texts };
}
