import type { Chunk, FileInfo } from '../chunk-types.js';
import type { GraphNames, RepoGraph } from '../deps.js';
import { encodeStrings, namesLookup, packNames, stringColumn, type StringColumn } from '../packed-columns.js';
import { packSectionParts, unpackSections } from './packed-sections.js';
import type { FoundLoop } from '../training-loops.js';
import type { ChunkKind } from '../types.js';

/**
 * meta.bin: what a reload needs besides the BM25 index and the texts, stored so that loading parses nothing
 * per chunk. Chunks are made when first read (a query reads a few hundred of 80,000), each file's imports and
 * definitions are parsed when first read, and the graph's name tables are stored rather than derived again.
 * On a 5,600-file tree the JSON layout this replaces cost about a second: its parse, one object per chunk and
 * rebuilding the name maps from every chunk's calls.
 */

const KINDS: readonly ChunkKind[] = ['function', 'method', 'class', 'module', 'text'];

/** What a file's lazily parsed JSON holds: every FileInfo field but the two the maps are keyed by. */
type FileDetails = Omit<FileInfo, 'path' | 'module'>;
const DETAIL_KEYS = ['imports', 'importRoots', 'defs', 'chunkIds', 'optimizerNames', 'parsed'] as const satisfies ReadonlyArray<
  keyof FileDetails
>;

interface MetaHeader {
  chunks: number;
  files: number;
  loops: FoundLoop[];
  skipped: Record<string, number>;
  lexicalAdapter: string;
}

/** meta.bin's bytes, as the pieces `packSectionParts` gives (written one after the other). */
export function packMeta(
  version: number,
  parts: {
    chunks: Chunk[];
    files: FileInfo[];
    names: GraphNames;
    loops: FoundLoop[];
    skipped: Record<string, number>;
    lexicalAdapter: string;
    /** Each chunk's text length in UTF-8 bytes when known (spooled texts), so that no text is read back for it. */
    textBytes?: Int32Array;
  },
): Buffer[] {
  const { chunks, files, names } = parts;
  const fileIndex = new Map(files.map((f, i) => [f.path, i]));
  const column = (prefix: string, values: string[]): Record<string, Int32Array | Buffer> => {
    const { offsets, bytes } = encodeStrings(values);
    return { [`${prefix}.offsets`]: offsets, [`${prefix}.bytes`]: bytes };
  };
  const table = (prefix: string, map: Map<string, number[]>): Record<string, Int32Array | Buffer> => {
    const packed = packNames(map);
    return {
      [`${prefix}.keys.offsets`]: packed.keys.offsets,
      [`${prefix}.keys.bytes`]: packed.keys.bytes,
      [`${prefix}.rows`]: packed.rows,
      [`${prefix}.ids`]: packed.ids,
    };
  };
  const header: MetaHeader = {
    chunks: chunks.length,
    files: files.length,
    loops: parts.loops,
    skipped: parts.skipped,
    lexicalAdapter: parts.lexicalAdapter,
  };
  return packSectionParts(version, header, {
    'chunk.file': Int32Array.from(chunks, (c) => fileIndex.get(c.path)!),
    'chunk.startLine': Int32Array.from(chunks, (c) => c.startLine),
    'chunk.endLine': Int32Array.from(chunks, (c) => c.endLine),
    'chunk.textBytes': parts.textBytes ?? Int32Array.from(chunks, (c) => Buffer.byteLength(c.text)),
    'chunk.kind': Uint8Array.from(chunks, (c) => KINDS.indexOf(c.kind)),
    'chunk.hasLoop': Uint8Array.from(chunks, (c) => (c.hasLoop ? 1 : 0)),
    ...column(
      'chunk.symbol',
      chunks.map((c) => c.symbol ?? ''),
    ),
    // Calls never contain spaces.
    ...column(
      'chunk.calls',
      chunks.map((c) => c.calls.join(' ')),
    ),
    ...column(
      'file.path',
      files.map((f) => f.path),
    ),
    ...column(
      'file.module',
      files.map((f) => f.module),
    ),
    ...column(
      'file.details',
      files.map((f) => JSON.stringify(Object.fromEntries(DETAIL_KEYS.map((k) => [k, f[k]])))),
    ),
    ...table('symbolPart', names.bySymbolPart),
    ...table('callName', names.byCallName),
  });
}

/** Reads a byte range of texts.txt as UTF-8. */
export interface TextSource {
  read(start: number, end: number): string;
}

export interface LoadedMeta {
  chunks: Chunk[];
  files: FileInfo[];
  names: Pick<RepoGraph, 'bySymbolPart' | 'byCallName'>;
  loops: FoundLoop[];
  skipped: Record<string, number>;
  lexicalAdapter: string;
}

/**
 * Files with their path and module at hand and the rest parsed from the stored JSON on first read. One shared
 * set of accessors serves every file (found through the file's index), so 6,000 files cost no closures.
 */
function lazyFiles(paths: StringColumn, modules: StringColumn, details: StringColumn): FileInfo[] {
  const row = new WeakMap<object, number>();
  const descriptors: PropertyDescriptorMap = {};
  for (const key of DETAIL_KEYS) {
    descriptors[key] = {
      configurable: true,
      enumerable: true,
      get(this: FileInfo) {
        const parsed = JSON.parse(details.at(row.get(this)!)) as FileDetails;
        for (const k of DETAIL_KEYS)
          Object.defineProperty(this, k, { value: parsed[k], enumerable: true, writable: true, configurable: true });
        return parsed[key];
      },
    };
  }
  const files: FileInfo[] = [];
  for (let i = 0; i < paths.length; i++) {
    const file = Object.defineProperties({ path: paths.at(i), module: modules.at(i) }, descriptors) as FileInfo;
    row.set(file, i);
    files.push(file);
  }
  return files;
}

/**
 * An array whose chunks are made on first read, through a Proxy: the rank and bundle code index it as a plain
 * array, and a reload makes no object for the chunks no query touches. `make` gets the chunk id.
 */
function lazyChunks(n: number, make: (id: number) => Chunk): Chunk[] {
  const made = new Array<Chunk>(n);
  // The chunk id a property key names, or -1 ("length", "map", "01", "" and the like name none).
  const idOf = (prop: string | symbol): number => {
    if (typeof prop !== 'string' || prop.length > 10) return -1;
    const id = Number(prop);
    return Number.isInteger(id) && id >= 0 && id < n && String(id) === prop ? id : -1;
  };
  return new Proxy(made, {
    get(target, prop, receiver) {
      const id = idOf(prop);
      return id < 0 ? Reflect.get(target, prop, receiver) : (target[id] ??= make(id));
    },
    has(target, prop) {
      return idOf(prop) >= 0 || Reflect.has(target, prop);
    },
  });
}

export function unpackMeta(buf: Buffer, version: number, texts: TextSource, textsSize: number): LoadedMeta | null {
  const packed = unpackSections(buf);
  if (packed.version !== version) return null;
  const header = packed.meta as MetaHeader;
  const strings = (prefix: string): StringColumn => stringColumn(packed.i32(`${prefix}.offsets`), packed.u8(`${prefix}.bytes`));
  const n = header.chunks;
  const fileOf = packed.i32('chunk.file');
  const startLine = packed.i32('chunk.startLine');
  const endLine = packed.i32('chunk.endLine');
  const textBytes = packed.i32('chunk.textBytes');
  const kind = packed.u8('chunk.kind');
  const hasLoop = packed.u8('chunk.hasLoop');
  const symbol = strings('chunk.symbol');
  const calls = strings('chunk.calls');
  const files = lazyFiles(strings('file.path'), strings('file.module'), strings('file.details'));
  for (const col of [fileOf, startLine, endLine, textBytes, kind, hasLoop])
    if (col.length !== n) throw new Error('chunk columns differ in length');
  if (symbol.length !== n || calls.length !== n || files.length !== header.files) throw new Error('meta.bin columns differ in length');
  const starts = new Float64Array(n + 1);
  for (let id = 0; id < n; id++) {
    if (fileOf[id]! < 0 || fileOf[id]! >= files.length || kind[id]! >= KINDS.length || textBytes[id]! < 0)
      throw new Error('meta.bin holds an impossible chunk');
    starts[id + 1] = starts[id]! + textBytes[id]!;
  }
  if (starts[n] !== textsSize) throw new Error('texts.txt does not match meta.bin');
  // One getter for every chunk's text, finding its bytes through `this.id` (no closure per chunk); the first
  // read replaces it with the value, so the chunk then spreads and compares as plain data.
  const text = {
    configurable: true,
    enumerable: true,
    get(this: Chunk): string {
      const value = texts.read(starts[this.id]!, starts[this.id + 1]!);
      Object.defineProperty(this, 'text', { value, enumerable: true, writable: true, configurable: true });
      return value;
    },
  };
  const chunks = lazyChunks(n, (id) => {
    const c = calls.at(id);
    const chunk = {
      id,
      path: files[fileOf[id]!]!.path,
      startLine: startLine[id]!,
      endLine: endLine[id]!,
      kind: KINDS[kind[id]!]!,
      calls: c ? c.split(' ') : [],
      hasLoop: hasLoop[id] === 1,
    } as Chunk;
    Object.defineProperty(chunk, 'text', text);
    const s = symbol.at(id);
    if (s) chunk.symbol = s;
    return chunk;
  });
  const table = (prefix: string) =>
    namesLookup(
      {
        keys: { offsets: packed.i32(`${prefix}.keys.offsets`), bytes: packed.u8(`${prefix}.keys.bytes`) },
        rows: packed.i32(`${prefix}.rows`),
        ids: packed.i32(`${prefix}.ids`),
      },
      n,
    );
  return {
    chunks,
    files,
    names: { bySymbolPart: table('symbolPart'), byCallName: table('callName') },
    loops: header.loops,
    skipped: header.skipped,
    lexicalAdapter: header.lexicalAdapter,
  };
}
