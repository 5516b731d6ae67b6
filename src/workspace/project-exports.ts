import { lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { readBounded } from '../host/read-bounded.js';

/**
 * What the checkout's own packages export by name, for tier 0: a report's snippet that calls `parse_shape(…)` or
 * `MultilabelExactMatch(…)` without importing it is completed with `from einops import parse_shape`. Read only,
 * statically (no code of the checkout runs), following no symbolic link.
 */

const MAX_FILES = 3000;
const MAX_BYTES = 256 * 1024;
/** All the files read together: a huge checkout costs a bounded read, not one proportional to its size. */
const MAX_TOTAL_BYTES = 32 * 1024 * 1024;
const MAX_DEPTH = 8;

/**
 * Name → the module to import it from: a name a package's `__init__.py` re-exports comes from the shortest such
 * package; else a name defined at the top level (`def`, `class`) of exactly one public module comes from it. A name
 * two modules define and no package re-exports is left out (which one the reporter meant is unknown). Pure.
 */
export function exportsFromSources(files: ReadonlyMap<string, string>): Record<string, string> {
  const defined = new Map<string, Set<string>>();
  const reexported = new Map<string, Set<string>>();
  const add = (m: Map<string, Set<string>>, name: string, mod: string) => {
    if (!m.has(name)) m.set(name, new Set());
    m.get(name)?.add(mod);
  };
  for (const [path, text] of files) {
    const mod = moduleOf(path);
    if (!mod) continue;
    for (const m of text.matchAll(/^(?:async\s+def|def|class)\s+([A-Za-z]\w*)/gm)) add(defined, m[1] as string, mod);
    if (!path.endsWith('__init__.py')) continue;
    for (const m of text.matchAll(/^from\s+([.\w]+)\s+import\s+(?:\(([^)]*)\)|([^\n(\\]+))/gm)) {
      for (const item of (m[2] ?? m[3] ?? '').split(',')) {
        const name = /^\s*(\w+)(?:\s+as\s+(\w+))?\s*(?:#.*)?$/.exec(item.replace(/#[^\n]*/g, '').trim());
        const exported = name?.[2] ?? name?.[1];
        if (exported && /^[A-Za-z]/.test(exported) && exported !== '*') add(reexported, exported, mod);
      }
    }
  }
  const out: Record<string, string> = {};
  const shortest = (mods: Set<string>) => [...mods].sort((a, b) => a.split('.').length - b.split('.').length || a.localeCompare(b))[0];
  for (const [name, mods] of reexported) out[name] = shortest(mods) as string;
  for (const [name, mods] of defined) if (!(name in out) && mods.size === 1) out[name] = [...mods][0] as string;
  return out;
}

/** `src/pkg/a/b.py` → `pkg.a.b`, `pkg/__init__.py` → `pkg`; null for private modules and tests. */
function moduleOf(path: string): string | null {
  const parts = path
    .replace(/^src\//, '')
    .replace(/\.py$/, '')
    .split('/');
  if (parts[parts.length - 1] === '__init__') parts.pop();
  if (!parts.length || parts.some((p) => !/^[A-Za-z_]\w*$/.test(p) || (p.startsWith('_') && p !== '__init__') || /^tests?$/.test(p)))
    return null;
  return parts.join('.');
}

/** Reads the Python files of the checkout's packages (`pkg/` or `src/pkg/`), bounded, and indexes their exports; none without a checkout. */
export async function readProjectExports(
  workspace: { hostPath: string; packages?: readonly string[] } | undefined,
): Promise<Record<string, string> | undefined> {
  if (!workspace?.packages?.length) return undefined;
  const { hostPath, packages } = workspace;
  const files = new Map<string, string>();
  let total = 0;
  const full = () => files.size >= MAX_FILES || total >= MAX_TOTAL_BYTES;
  const walk = async (rel: string, depth: number): Promise<void> => {
    if (depth > MAX_DEPTH || full()) return;
    const entries = await readdir(join(hostPath, rel), { withFileTypes: true }).catch(() => []);
    entries.sort((a, b) => a.name.localeCompare(b.name));
    for (const e of entries) {
      if (full()) return;
      const p = `${rel}/${e.name}`;
      if (e.isDirectory() && e.name !== '__pycache__') await walk(p, depth + 1);
      else if (e.isFile() && e.name.endsWith('.py')) {
        const st = await lstat(join(hostPath, p)).catch(() => null);
        if (!st?.isFile() || st.size > MAX_BYTES) continue;
        const bytes = await readBounded(join(hostPath, p), { maxBytes: MAX_BYTES }).catch(() => null);
        if (!bytes) continue;
        total += bytes.length;
        files.set(p, bytes.toString('utf8'));
      }
    }
  };
  for (const pkg of packages.filter((p) => /^[A-Za-z_]\w*$/.test(p))) {
    for (const root of [pkg, `src/${pkg}`]) {
      const st = await lstat(join(hostPath, root)).catch(() => null);
      if (st?.isDirectory()) await walk(root, 0);
    }
  }
  return exportsFromSources(files);
}
