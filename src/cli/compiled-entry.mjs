// Plain JavaScript, read by bin/repgen.js before anything is compiled or registered: whether dist/ (the build of
// `npm run build`, which `npm ci` runs as `prepare`) is there and newer than every source it was built from.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** What dist/ is built from, relative to the package root: a change to any of them makes it stale. */
export const BUILT_FROM = ['src', 'workers', 'prompts', 'package.json', 'tsconfig.json', 'tsconfig.build.json'];

/** Written last by the build: when it started, so that a source saved during the build counts as newer. */
export const STAMP = join('dist', '.built.json');

/** The newest file under `paths` (files or folders, relative to root), by modification time. */
export function newestSource(root, paths = BUILT_FROM) {
  let newest = { path: null, mtimeMs: 0 };
  const visit = (rel) => {
    const abs = join(root, rel);
    let st;
    try {
      st = statSync(abs);
    } catch {
      return;
    }
    if (st.isDirectory()) {
      for (const name of readdirSync(abs)) visit(join(rel, name));
    } else if (st.mtimeMs > newest.mtimeMs) newest = { path: rel, mtimeMs: st.mtimeMs };
  };
  for (const p of paths) visit(p);
  return newest;
}

/**
 * `{ fresh: true }` when dist/ holds a build of the sources as they are now; else `{ fresh: false, reason }`
 * (missing, or the first source found newer than the build).
 */
export function compiledState(root) {
  const stamp = join(root, STAMP);
  if (!existsSync(stamp)) return { fresh: false, reason: `${STAMP} is missing: run npm run build` };
  let startedMs;
  try {
    startedMs = JSON.parse(readFileSync(stamp, 'utf8')).startedMs;
  } catch {
    return { fresh: false, reason: `${STAMP} is unreadable: run npm run build` };
  }
  if (typeof startedMs !== 'number') return { fresh: false, reason: `${STAMP} has no startedMs: run npm run build` };
  const newest = newestSource(root);
  if (newest.mtimeMs > startedMs) return { fresh: false, reason: `${newest.path} changed after the build: run npm run build` };
  return { fresh: true };
}
