import { createHash } from 'node:crypto';
import { closeSync, existsSync, fstatSync, openSync, readSync } from 'node:fs';
import { mkdir, open, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { runGitUntrusted } from '../../host/git.js';
import { readBounded } from '../../host/read-bounded.js';
import type { Chunk, FileInfo } from '../chunk-types.js';
import { assembleIndex, type ChunkVectors, type RepoIndex } from './build-index.js';
import { packMeta, unpackMeta, type TextSource } from './cache-layout.js';
import { TextSpool } from './text-spool.js';
import { buildNames } from '../deps.js';
import type { LexicalAdapter } from '../lexical-index.js';
import type { RepoFile } from '../walk-repo.js';

/** Bump when chunking, tokenizing or the stored layout changes: old cache entries then stop matching. */
export const INDEX_VERSION = 10;

export function sha256(text: string | Buffer): string {
  return createHash('sha256').update(text).digest('hex');
}

/**
 * The commit identity of a git work tree: HEAD's SHA, plus a hash of the uncommitted changes when there are
 * any, so that a dirty checkout never reuses the clean commit's index. Null when the folder is not a work tree
 * root (the caller then hashes the files' contents).
 */
export async function gitIdentity(repoDir: string): Promise<string | null> {
  if (!existsSync(join(repoDir, '.git'))) return null;
  try {
    // The folder is the user's: its git config may name commands (fsmonitor, filters): runGitUntrusted blanks them.
    const git = (args: string[], maxBytes: number) => runGitUntrusted(args, { cwd: repoDir, maxBytes, timeoutMs: 120_000 });
    const [head, st] = await Promise.all([
      git(['rev-parse', 'HEAD'], 4096),
      git(['status', '--porcelain', '--untracked-files=all'], 64 << 20),
    ]);
    if (head.code !== 0 || st.code !== 0 || st.truncated) return null;
    const status = st.stdout;
    if (!status.trim()) return `git:${head.stdout.trim()}`;
    const d = await git(['diff', '--no-ext-diff', '--no-textconv', 'HEAD'], 256 << 20);
    if (d.code !== 0) return null;
    const diff = d.stdout;
    const h = createHash('sha256').update(status).update(diff);
    for (const line of status.split('\n')) {
      if (!line.startsWith('??')) continue;
      const path = line.slice(3).replace(/^"|"$/g, '');
      // git lists an untracked link, whose target may be a FIFO or /dev/zero: read bounded, else hash why not.
      const bytes = await readBounded(join(repoDir, path), { maxBytes: 256 << 20 }).catch((err: Error) => Buffer.from(err.message));
      h.update(path).update(bytes);
    }
    return `git:${head.stdout.trim()}+dirty:${h.digest('hex').slice(0, 16)}`;
  } catch {
    return null;
  }
}

export function contentIdentity(files: RepoFile[]): string {
  const h = createHash('sha256');
  for (const f of files) h.update(f.path).update('\0').update(f.text).update('\0');
  return `content:${h.digest('hex')}`;
}

/** Indexes of recent commits kept in memory: a long-lived worker answers a second run on a commit from here. */
export class IndexLru {
  private readonly entries = new Map<string, RepoIndex>();
  constructor(private readonly capacity: number) {}

  get(key: string): RepoIndex | undefined {
    const hit = this.entries.get(key);
    if (hit) {
      this.entries.delete(key);
      this.entries.set(key, hit);
    }
    return hit;
  }

  set(index: RepoIndex): void {
    this.entries.delete(index.key);
    this.entries.set(index.key, index);
    while (this.entries.size > this.capacity) this.entries.delete(this.entries.keys().next().value!);
  }
}

/**
 * Closes a texts.txt descriptor once no chunk of its index is reachable any more (the LRU dropped the index).
 * Until then the open descriptor keeps the file's bytes readable even if the entry is removed or replaced.
 */
const openTexts = new FinalizationRegistry<number>((fd) => {
  try {
    closeSync(fd);
  } catch {
    // Already closed: nothing to release.
  }
});

/**
 * texts.txt stays on disk and each chunk's text is read with one pread on first use: a query reads a few dozen
 * chunks' texts, and bringing all 40+ MB into fresh memory cost about 150 ms of a reload (page faults, not the
 * disk) and 50 MB of RSS. Returns the source and the file's size, which must equal the sum of the text lengths.
 */
function openTextSource(path: string): { source: TextSource; size: number } {
  const fd = openSync(path, 'r');
  try {
    const size = fstatSync(fd).size;
    const source: TextSource = {
      read(start: number, end: number): string {
        const buf = Buffer.allocUnsafe(end - start);
        let got = 0;
        while (got < buf.length) {
          const n = readSync(fd, buf, got, buf.length - got, start + got);
          if (n === 0) throw new Error(`${path} ended early`);
          got += n;
        }
        return buf.toString('utf8');
      },
    };
    openTexts.register(source, fd);
    return { source, size };
  } catch (err) {
    closeSync(fd);
    throw err;
  }
}

/** Writes `data` (or its pieces one after the other, with no copy of the whole) to a temporary file, then renames it. */
async function writeAtomic(path: string, data: string | Uint8Array | Iterable<string | Uint8Array>): Promise<void> {
  const tmp = `${path}.${process.pid}.${Date.now()}.tmp`;
  if (typeof data === 'string' || data instanceof Uint8Array) await writeFile(tmp, data);
  else {
    const out = await open(tmp, 'w');
    try {
      for (const piece of data) await out.writeFile(piece);
    } finally {
      await out.close();
    }
  }
  await rename(tmp, path);
}

/** Bytes of chunk text written at a time to texts.txt. */
const TEXT_WRITE_CHARS = 1 << 20;

/**
 * texts.txt's pieces: every chunk's text back to back, a megabyte at a time. Joining them first made one string of
 * the whole repository (80 MB on a 5,600-file tree, twice that when one chunk holds a character beyond Latin-1)
 * and its UTF-8 copy, at the moment a fresh build holds the most; the bytes are the same.
 */
function* textPieces(chunks: Chunk[]): Generator<string> {
  let batch: string[] = [];
  let chars = 0;
  for (const c of chunks) {
    batch.push(c.text);
    chars += c.text.length;
    if (chars >= TEXT_WRITE_CHARS) {
      yield batch.join('');
      batch = [];
      chars = 0;
    }
  }
  if (batch.length) yield batch.join('');
}

/**
 * Drops imports of third-party modules (torch, numpy…) from what is stored: only project-local ones can
 * resolve to a chunk, and the rest made up half of the stored JSON. `importRoots` keeps the frameworks.
 */
function projectImports(files: FileInfo[]): FileInfo[] {
  const roots = new Set<string>();
  for (const f of files) {
    const parts = f.module.split('.');
    roots.add(parts[0]!);
    if (/^(src|lib|python)$/.test(parts[0]!) && parts[1]) roots.add(parts[1]);
  }
  return files.map((f) => ({
    ...f,
    imports: Object.fromEntries(
      Object.entries(f.imports).filter(([, ref]) => ref.module.startsWith('.') || roots.has(ref.module.split('.')[0]!)),
    ),
  }));
}

/** Where an index's entry lives in the cache. */
export function entryDir(cacheDir: string, key: string): string {
  return join(cacheDir, key);
}

/** A spool for the texts of the entry `key` is about to get (its folder made first). */
export async function openTextSpool(cacheDir: string, key: string): Promise<TextSpool> {
  await mkdir(entryDir(cacheDir, key), { recursive: true });
  return TextSpool.open(join(entryDir(cacheDir, key), 'texts.txt'));
}

/**
 * Saves the index; with `spool`, the texts of its chunks are already on disk (spooled as the shards came in) and
 * their file is renamed into place instead of written.
 */
export async function saveIndex(cacheDir: string, index: RepoIndex, spool?: TextSpool): Promise<void> {
  if (spool && spool.size !== index.chunks.length) throw new Error(`text spool holds ${spool.size} of ${index.chunks.length} chunks`);
  const dir = entryDir(cacheDir, index.key);
  await mkdir(dir, { recursive: true });
  const { bySymbolPart, byCallName } = index.graph;
  // A fresh build holds the name maps as Maps; an index that came from disk holds packed tables.
  const names = bySymbolPart instanceof Map && byCallName instanceof Map ? { bySymbolPart, byCallName } : buildNames(index.chunks);
  // One big buffer at a time (lexical.bin 33 MB, meta.bin 21 MB on a 5,600-file tree): each is made, written and let
  // go before the next, at the moment a fresh build holds the most.
  await writeAtomic(join(dir, 'lexical.bin'), index.lexical.serializedParts?.() ?? index.lexical.serialize());
  // Texts apart from the JSON: one plain string reads back far faster than 50 MB of escaped JSON strings.
  if (spool) spool.commit(join(dir, 'texts.txt'));
  else await writeAtomic(join(dir, 'texts.txt'), textPieces(index.chunks));
  const meta = packMeta(INDEX_VERSION, {
    chunks: index.chunks,
    files: projectImports(index.files),
    names,
    loops: index.loops,
    skipped: index.skipped,
    lexicalAdapter: index.lexical.adapter,
    ...(spool ? { textBytes: spool.textBytes() } : {}),
  });
  // meta.bin last: its presence means the entry is complete.
  await writeAtomic(join(dir, 'meta.bin'), meta);
}

export async function loadIndex(cacheDir: string, key: string, adapter: LexicalAdapter): Promise<RepoIndex | null> {
  const dir = entryDir(cacheDir, key);
  try {
    // Read both at once. texts.txt is opened, not read (see openTextSource).
    const [metaBytes, lexicalBytes] = await Promise.all([readFile(join(dir, 'meta.bin')), readFile(join(dir, 'lexical.bin'))]);
    const texts = openTextSource(join(dir, 'texts.txt'));
    const meta = unpackMeta(metaBytes, INDEX_VERSION, texts.source, texts.size);
    if (!meta) throw new Error('cache entry of another version');
    const lexical = adapter.load(lexicalBytes);
    return assembleIndex(key, {
      chunks: meta.chunks,
      files: meta.files,
      lexical,
      skipped: meta.skipped,
      loops: meta.loops,
      names: meta.names,
    });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    // A corrupt entry is rebuilt, not trusted.
    await rm(dir, { recursive: true, force: true }).catch(() => undefined);
    return null;
  }
}

function vectorFile(cacheDir: string, key: string, model: string): string {
  return join(cacheDir, key, `vectors-${sha256(model).slice(0, 16)}.f32`);
}

export async function saveVectors(cacheDir: string, key: string, vectors: ChunkVectors): Promise<void> {
  const header = Buffer.alloc(4);
  header.writeUInt32LE(vectors.dim);
  await mkdir(join(cacheDir, key), { recursive: true });
  await writeAtomic(
    vectorFile(cacheDir, key, vectors.model),
    Buffer.concat([header, Buffer.from(vectors.matrix.buffer, vectors.matrix.byteOffset, vectors.matrix.byteLength)]),
  );
}

export async function loadVectors(cacheDir: string, key: string, model: string, rows: number): Promise<ChunkVectors | null> {
  const buf = await readFile(vectorFile(cacheDir, key, model)).catch(() => null);
  if (!buf || buf.length < 4) return null;
  const dim = buf.readUInt32LE(0);
  if (dim === 0 || buf.length - 4 !== rows * dim * 4) return null;
  const matrix = new Float32Array(rows * dim);
  Buffer.from(matrix.buffer).set(buf.subarray(4));
  return { model, dim, matrix };
}
