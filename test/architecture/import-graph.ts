import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

/** Source files the graph reads: TypeScript and the few plain ES modules that live beside it. */
const SOURCE_EXTENSIONS = ['.ts', '.mts', '.js', '.mjs'];

/** An edge of the file graph: `from` imports (or re-exports from) `to`; both are repo-relative paths. */
export interface ImportEdge {
  from: string;
  to: string;
  specifier: string;
}

export function listSourceFiles(root: string, dir: string): string[] {
  const out: string[] = [];
  const walk = (rel: string): void => {
    for (const name of readdirSync(path.join(root, rel))) {
      const child = path.posix.join(rel, name);
      if (statSync(path.join(root, child)).isDirectory()) walk(child);
      else if (SOURCE_EXTENSIONS.some((ext) => name.endsWith(ext))) out.push(child);
    }
  };
  walk(dir);
  return out.sort();
}

/**
 * Every module specifier a file names: static imports (type-only ones too: they couple folders just the
 * same), `export … from`, `import x = require()`, and `import('…')` with a literal argument. The
 * TypeScript scanner reads them, so specifiers inside comments and strings are not mistaken for imports.
 */
export function readSpecifiers(fileName: string, text: string): string[] {
  const info = ts.preProcessFile(text, true, true);
  return info.importedFiles.map((f) => f.fileName);
}

/**
 * Resolves a relative specifier the way NodeNext does for our sources: `./x.js` is `./x.ts` on disk,
 * `./x.mjs` may be `./x.mts` or the `.mjs` itself. Package specifiers resolve to nothing.
 */
export function resolveSpecifier(root: string, fromFile: string, specifier: string): string | null {
  if (!specifier.startsWith('.')) return null;
  const base = path.posix.normalize(path.posix.join(path.posix.dirname(fromFile), specifier));
  const candidates = [base];
  const ext = path.posix.extname(base);
  const stem = base.slice(0, base.length - ext.length);
  if (ext === '.js') candidates.push(`${stem}.ts`, `${stem}.d.ts`);
  if (ext === '.mjs') candidates.push(`${stem}.mts`, `${stem}.d.mts`);
  if (ext === '') candidates.push(`${base}.ts`, `${base}/index.ts`);
  for (const c of candidates) {
    if (existsSync(path.join(root, c)) && statSync(path.join(root, c)).isFile()) return c;
  }
  return null;
}

export function buildFileGraph(root: string, dirs: readonly string[]): { files: string[]; edges: ImportEdge[]; unresolved: ImportEdge[] } {
  const files = dirs.flatMap((d) => listSourceFiles(root, d));
  const edges: ImportEdge[] = [];
  const unresolved: ImportEdge[] = [];
  for (const from of files) {
    for (const specifier of readSpecifiers(from, readFileSync(path.join(root, from), 'utf8'))) {
      const to = resolveSpecifier(root, from, specifier);
      if (to) edges.push({ from, to, specifier });
      else if (specifier.startsWith('.')) unresolved.push({ from, to: '', specifier });
    }
  }
  return { files, edges, unresolved };
}

/**
 * The unit a file belongs to: `src/agent/tier1.ts` → `src/agent`; a file directly in `src/` is its own
 * unit (`src/errors.ts`), since the root is not a layer; `workers/x.ts` → `workers`.
 */
export function unitOf(file: string): string {
  const parts = file.split('/');
  if (parts[0] === 'src') return parts.length > 2 ? `src/${parts[1]}` : file;
  return parts[0] ?? file;
}

/** Strongly connected components with more than one unit (Tarjan): each is a cycle between units. */
export function findCycles(edges: ReadonlyArray<{ from: string; to: string }>): string[][] {
  const adj = new Map<string, Set<string>>();
  for (const { from, to } of edges) {
    if (from === to) continue;
    if (!adj.has(from)) adj.set(from, new Set());
    if (!adj.has(to)) adj.set(to, new Set());
    adj.get(from)!.add(to);
  }
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, counter);
    low.set(v, counter);
    counter += 1;
    stack.push(v);
    onStack.add(v);
    for (const w of adj.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v)!, index.get(w)!));
      }
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string | undefined;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1) components.push(component.sort());
    }
  };
  for (const v of [...adj.keys()].sort()) if (!index.has(v)) visit(v);
  return components;
}

/** The unit graph's edges, each with the file imports that make it (for a message that says where to cut). */
export function unitEdges(edges: readonly ImportEdge[]): Map<string, ImportEdge[]> {
  const out = new Map<string, ImportEdge[]>();
  for (const e of edges) {
    const a = unitOf(e.from);
    const b = unitOf(e.to);
    if (a === b) continue;
    const key = `${a} -> ${b}`;
    out.set(key, [...(out.get(key) ?? []), e]);
  }
  return out;
}

/** The rooms of one folder: which rooms each may import (its own files and the folder's root files always). */
export interface RoomRules {
  /** The folder, e.g. `src/exec`. Its files directly inside are the root: the port every room may import. */
  base: string;
  /** Room (subfolder) → the rooms below it that it may import. A room not named here is a violation too. */
  rooms: Readonly<Record<string, readonly string[]>>;
  /** Root files that may import rooms (the chooser that picks an adapter); every other root file imports none. */
  chooser: readonly string[];
}

/** The room of a file under `base`: `root` for a file directly in it, its first subfolder otherwise, null outside. */
export function roomOf(base: string, file: string): string | null {
  if (!file.startsWith(`${base}/`)) return null;
  const rest = file.slice(base.length + 1).split('/');
  return rest.length > 1 ? (rest[0] ?? null) : 'root';
}

/** Each import that goes against the rules: upward, sideways, from an undeclared room, or from a non-chooser root file. */
export function roomViolations(edges: readonly ImportEdge[], rules: RoomRules): string[] {
  const out: string[] = [];
  for (const e of edges) {
    const from = roomOf(rules.base, e.from);
    const to = roomOf(rules.base, e.to);
    if (from === null || to === null || from === to) continue;
    if (from !== 'root' && !rules.rooms[from]) {
      out.push(`${e.from} imports ${e.specifier}: room ${rules.base}/${from} is not declared`);
      continue;
    }
    if (to === 'root') continue;
    if (from === 'root') {
      if (!rules.chooser.includes(e.from))
        out.push(`${e.from} imports ${e.specifier}: only the chooser (${rules.chooser.join(', ')}) may import a room`);
      continue;
    }
    const allowed = rules.rooms[from] ?? [];
    if (!allowed.includes(to)) out.push(`${e.from} imports ${e.specifier}: ${from} may import only ${allowed.join(', ') || 'the root'}`);
  }
  return out;
}
