import { estimateTokens, type Chunk, type FileInfo, type ImportRef } from './chunk-types.js';
import type { NameLookup } from './packed-columns.js';

/** Lookup tables over the whole repository for resolving names across modules. */
export interface RepoGraph {
  chunks: Chunk[];
  filesByPath: Map<string, FileInfo>;
  /** Dotted module name → file; also without a leading "src."/"lib." (src-layout packages). */
  filesByModule: Map<string, FileInfo>;
  /** Each part of a chunk's symbol ("GroupNorm", "__init__") → chunk ids, for names quoted in a report. */
  bySymbolPart: NameLookup;
  /** The last part of each call ("tensor_split" of "emb.tensor_split") → ids of the chunks making it. */
  byCallName: NameLookup;
}

/** The name maps of a graph: what a reload from the disk cache takes as stored instead of deriving again. */
export interface GraphNames {
  bySymbolPart: Map<string, number[]>;
  byCallName: Map<string, number[]>;
}

export function buildGraph(
  chunks: Chunk[],
  files: FileInfo[],
  names: Pick<RepoGraph, 'bySymbolPart' | 'byCallName'> = buildNames(chunks),
): RepoGraph {
  const filesByModule = new Map<string, FileInfo>();
  for (const f of files) {
    if (!f.path.endsWith('.py') && !f.path.endsWith('.pyi')) continue;
    filesByModule.set(f.module, f);
    const stripped = f.module.replace(/^(?:src|lib|python)\./, '');
    if (!filesByModule.has(stripped)) filesByModule.set(stripped, f);
  }
  return {
    chunks,
    filesByPath: new Map(files.map((f) => [f.path, f])),
    filesByModule,
    bySymbolPart: names.bySymbolPart,
    byCallName: names.byCallName,
  };
}

export function buildNames(chunks: Chunk[]): GraphNames {
  // A chunk is listed once per name: a list already ending in this chunk's id means a repeat. (This replaced a
  // Set per chunk, which a reload from the disk cache paid for 32,000 chunks.)
  const add = (map: Map<string, number[]>, name: string, id: number): void => {
    const ids = map.get(name);
    if (!ids) map.set(name, [id]);
    else if (ids[ids.length - 1] !== id) ids.push(id);
  };
  const bySymbolPart = new Map<string, number[]>();
  for (const chunk of chunks) {
    if (!chunk.symbol) continue;
    for (const part of chunk.symbol.split(/[.,]/)) add(bySymbolPart, part, chunk.id);
  }
  const byCallName = new Map<string, number[]>();
  for (const chunk of chunks) {
    for (const c of chunk.calls) add(byCallName, c.slice(c.lastIndexOf('.') + 1), chunk.id);
  }
  return { bySymbolPart, byCallName };
}

/** Resolves `from ..x import y` relative to the importing module's package. */
function absoluteModule(ref: ImportRef, from: FileInfo): string {
  const m = /^(\.+)(.*)$/.exec(ref.module);
  if (!m) return ref.module;
  const isPackage = /\/__init__\.pyi?$/.test(from.path);
  const pkg = from.module.split('.');
  const up = m[1]!.length - (isPackage ? 1 : 0);
  const base = pkg.slice(0, Math.max(0, pkg.length - up));
  return [...base, ...(m[2] ? [m[2]] : [])].join('.');
}

function defIn(graph: RepoGraph, module: string, name: string, seen = 0): number | undefined {
  const file = graph.filesByModule.get(module);
  if (!file) return undefined;
  const direct = file.defs[name];
  if (direct !== undefined) return direct;
  // Packages re-export: `from .metrics import accuracy` in __init__.py; follow it a few hops.
  const ref = file.imports[name];
  if (ref?.name && seen < 3) return defIn(graph, absoluteModule(ref, file), ref.name, seen + 1);
  return undefined;
}

/** The chunk ids a call written as `call` inside `chunk` refers to, when they are in the project. */
export function resolveCall(graph: RepoGraph, chunk: Chunk, call: string): number[] {
  const file = graph.filesByPath.get(chunk.path);
  if (!file) return [];
  const parts = call.split('.');
  const out: number[] = [];
  const withInit = (id: number | undefined): void => {
    if (id === undefined) return;
    out.push(id);
    const target = graph.chunks[id];
    // Calling a class runs its __init__: that is the code a bundle needs.
    if (target?.kind === 'class' && target.symbol) {
      const init = graph.filesByPath.get(target.path)?.defs[`${target.symbol}.__init__`];
      if (init !== undefined) out.push(init);
    }
  };
  if (parts.length === 1) {
    const name = parts[0]!;
    if (file.defs[name] !== undefined) withInit(file.defs[name]);
    else {
      const ref = file.imports[name];
      if (ref?.name) withInit(defIn(graph, absoluteModule(ref, file), ref.name));
    }
    return out;
  }
  if ((parts[0] === 'self' || parts[0] === 'cls') && parts.length === 2 && chunk.symbol?.includes('.')) {
    const cls = chunk.symbol.split('.')[0]!;
    withInit(file.defs[`${cls}.${parts[1]}`]);
    return out;
  }
  // module.func or package.module.func through an import alias.
  for (let cut = parts.length - 1; cut >= 1; cut--) {
    const head = parts.slice(0, cut).join('.');
    const ref = file.imports[head];
    if (!ref) continue;
    const module = ref.name ? `${absoluteModule(ref, file)}.${ref.name}` : absoluteModule(ref, file);
    const rest = parts.slice(cut);
    withInit(defIn(graph, [module, ...rest.slice(0, -1)].join('.'), rest[rest.length - 1]!));
    break;
  }
  return out;
}

export interface Dependency {
  id: number;
  /** Who needs it: "called by accuracy", "imports of timm/utils/metrics.py". */
  reason: string;
}

/**
 * The project-local code a chunk needs to run: the import block of its file and the helpers it calls, followed
 * breadth-first across modules up to `depth` calls away, until `tokenBudget` is spent.
 */
export function dependencyClosure(
  graph: RepoGraph,
  root: Chunk,
  { depth, tokenBudget }: { depth: number; tokenBudget: number },
): Dependency[] {
  const out: Dependency[] = [];
  const seen = new Set<number>([root.id]);
  let spent = 0;
  const take = (id: number, reason: string): boolean => {
    if (seen.has(id)) return false;
    const chunk = graph.chunks[id];
    if (!chunk) return false;
    const cost = estimateTokens(chunk.text);
    if (spent + cost > tokenBudget) return false;
    seen.add(id);
    spent += cost;
    out.push({ id, reason });
    return true;
  };
  const file = graph.filesByPath.get(root.path);
  const header = file?.chunkIds.map((id) => graph.chunks[id]!).find((c) => c.kind === 'module' && /^\s*(?:from|import)\s/m.test(c.text));
  if (header && header.id !== root.id) take(header.id, `imports of ${root.path}`);
  let frontier: Chunk[] = [root];
  for (let level = 0; level < depth && frontier.length; level++) {
    const next: Chunk[] = [];
    for (const chunk of frontier) {
      for (const call of chunk.calls) {
        for (const id of resolveCall(graph, chunk, call)) {
          if (take(id, `called by ${chunk.symbol ?? `${chunk.path}:${chunk.startLine}`}`)) next.push(graph.chunks[id]!);
        }
      }
    }
    frontier = next;
  }
  return out;
}
