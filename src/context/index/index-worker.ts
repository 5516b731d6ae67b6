/**
 * The index worker thread: loads its own tree-sitter parser and answers each shard message with the shard's
 * chunks and BM25 part (typed arrays transferred, not copied). Started through index-worker.mjs, which registers
 * the TypeScript loader in the thread first.
 */
import { parentPort } from 'node:worker_threads';
import { indexShard, type ShardFile, type ShardResult } from './index-shard.js';
import { loadPythonParser } from '../python-parser.js';

export interface ShardRequest {
  shard: number;
  /** Files read already, or listed only: the worker reads those itself (index-shard.ts). */
  files: ShardFile[];
  bm25: boolean;
}

export type ShardReply = { shard: number; result: ShardResult } | { shard: number; error: string };

/** Indexes one shard; an exception becomes an error reply (the main thread then retries the shard in-thread). */
export async function handleShard(req: ShardRequest): Promise<{ reply: ShardReply; transfer: ArrayBuffer[] }> {
  try {
    const result = indexShard(req.files, await loadPythonParser(), req.bm25);
    const p = result.bm25;
    const transfer = p
      ? ([p.ids.buffer, p.lengths.buffer, p.postings.offsets.buffer, p.postings.docs.buffer, p.postings.tf.buffer] as ArrayBuffer[])
      : [];
    return { reply: { shard: req.shard, result }, transfer };
  } catch (err) {
    return { reply: { shard: req.shard, error: (err instanceof Error ? err.message : String(err)).split('\n')[0]! }, transfer: [] };
  }
}

/** Answers shard requests on the parent port until the main thread terminates the worker. */
export function serveShards(): void {
  const port = parentPort;
  if (!port) throw new Error('index-worker must run in a worker thread');
  port.on('message', (req: ShardRequest) => {
    void handleShard(req).then(({ reply, transfer }) => port.postMessage(reply, transfer));
  });
}
