import { Bm25Builder, type Bm25Part } from './bm25-index.js';
import type { Chunk, FileInfo } from '../chunk-types.js';
import { chunkFile } from '../chunk-python.js';
import type { PythonParser } from '../python-parser.js';
import { readListedSync, type ListedFile, type RepoFile } from '../walk-repo.js';

/** What one shard (a run of consecutive files) yields: its chunks numbered from 0, and their BM25 part if asked. */
export interface ShardResult {
  chunks: Chunk[];
  infos: FileInfo[];
  bm25?: Bm25Part;
  /** Listed files the shard read and left out, counted by why (binary, generated). */
  skipped?: Record<string, number>;
}

/**
 * What a shard is cut from: files already read (a walk that hashed the contents), or files only listed, which
 * the thread indexing the shard reads itself, so that the main thread never holds every file's text.
 */
export type ShardFile = RepoFile | ListedFile;

/** A shard file's size for cutting shards: its text's length, or its size on disk when not read yet. */
export function shardFileBytes(f: ShardFile): number {
  return 'text' in f ? f.text.length : f.size;
}

/** Reads a shard's listed files (those with a text pass through), counting the ones left out. */
export function readShard(files: ShardFile[]): { files: RepoFile[]; skipped: Record<string, number> } {
  const out: RepoFile[] = [];
  const skipped: Record<string, number> = {};
  for (const f of files) {
    const read = 'text' in f ? f : readListedSync(f);
    if (read === null) continue;
    if (typeof read === 'string') skipped[read] = (skipped[read] ?? 0) + 1;
    else out.push(read);
  }
  return { files: out, skipped };
}

/**
 * Chunks a run of consecutive files and, when `bm25` is set, streams each chunk's tokens into a BM25 part as
 * soon as the chunk exists: no chunk's token list outlives its own indexing. The same code runs in a worker
 * thread and on the main thread, so the parallel build and the in-thread one cannot drift apart.
 */
export function indexShard(shard: ShardFile[], py: PythonParser, bm25: boolean): ShardResult {
  const { files, skipped } = readShard(shard);
  const chunks: Chunk[] = [];
  const infos: FileInfo[] = [];
  const builder = bm25 ? new Bm25Builder() : null;
  for (const file of files) {
    const { chunks: fileChunks, info } = chunkFile(file, py, chunks.length);
    for (const c of fileChunks) {
      chunks.push(c);
      builder?.addChunk(c);
    }
    infos.push(info);
  }
  return builder ? { chunks, infos, skipped, bm25: builder.finish() } : { chunks, infos, skipped };
}

/** Renumbers a shard's chunks to follow the `base` chunks of the shards before it (ids, defs, file chunk lists, BM25 ids). */
export function rebaseShard(shard: ShardResult, base: number): void {
  if (base === 0) return;
  for (const c of shard.chunks) c.id += base;
  for (const info of shard.infos) {
    for (const k of Object.keys(info.defs)) info.defs[k]! += base;
    for (let i = 0; i < info.chunkIds.length; i++) info.chunkIds[i]! += base;
  }
  const ids = shard.bm25?.ids;
  if (ids) for (let i = 0; i < ids.length; i++) ids[i]! += base;
}
