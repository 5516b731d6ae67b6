import { Bm25Builder, type Bm25Part } from './bm25-index.js';
import type { Chunk, FileInfo } from '../chunk-types.js';
import { chunkFile } from '../chunk-python.js';
import type { PythonParser } from '../python-parser.js';
import type { RepoFile } from '../walk-repo.js';

/** What one shard (a run of consecutive files) yields: its chunks numbered from 0, and their BM25 part if asked. */
export interface ShardResult {
  chunks: Chunk[];
  infos: FileInfo[];
  bm25?: Bm25Part;
}

/**
 * Chunks a run of consecutive files and, when `bm25` is set, streams each chunk's tokens into a BM25 part as
 * soon as the chunk exists: no chunk's token list outlives its own indexing. The same code runs in a worker
 * thread and on the main thread, so the parallel build and the in-thread one cannot drift apart.
 */
export function indexShard(files: RepoFile[], py: PythonParser, bm25: boolean): ShardResult {
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
  return builder ? { chunks, infos, bm25: builder.finish() } : { chunks, infos };
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
