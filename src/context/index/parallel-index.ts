import { Worker } from 'node:worker_threads';
import { bm25FromParts, type Bm25Part } from './bm25-index.js';
import type { Chunk, FileInfo } from '../chunk-types.js';
import { indexShard, rebaseShard, shardFileBytes, type ShardFile, type ShardResult } from './index-shard.js';
import type { ShardReply, ShardRequest } from './index-worker.js';
import type { LexicalIndex } from '../lexical-index.js';
import { loadPythonParser, type PythonParser } from '../python-parser.js';

/** Below this much source text, starting worker threads (each loads tsx and the grammar) costs more than it saves. */
const MIN_PARALLEL_BYTES = 4_000_000;
/** Shards per worker: enough for one slow shard not to leave the other cores idle at the end. */
const SHARDS_PER_WORKER = 8;
const MIN_SHARD_BYTES = 256_000;
/**
 * A worker's heap grows with its shard (texts, chunks, BM25 counts): 4 MB shards took a worker to 125 MB of heap
 * on a 5,600-file tree, 1 MB ones to about 60 MB, for about 0.15 s more merging on the main thread.
 */
const MAX_SHARD_BYTES = 1_000_000;

export interface IndexFilesOptions {
  /** Worker threads; 1 indexes on the calling thread. */
  workers: number;
  /** Build the BM25 parts alongside the chunks (the `bm25` lexical adapter); other adapters build from the chunks. */
  bm25: boolean;
  /**
   * The caller hands the file list over: it is emptied, and each shard's files are let go once the shard is
   * indexed, so that the texts (80 MB on a 5,600-file tree) are collectable while the other shards run.
   */
  consume?: boolean;
  /**
   * Called with each shard's chunks, renumbered, in chunk order, as soon as the shard and every one before it
   * are indexed (while later shards still run): the build spools their texts to disk there (text-spool.ts).
   */
  onChunks?: (chunks: Chunk[]) => void;
  /** Test seams: the smallest repository worth workers, the shard size, the worker entry file. */
  minParallelBytes?: number;
  shardBytes?: number;
  workerUrl?: URL;
}

export interface IndexedFiles {
  chunks: Chunk[];
  infos: FileInfo[];
  /** The BM25 index when `bm25` was asked. */
  lexical?: LexicalIndex;
  /** Worker threads used (0: in-thread). */
  workers: number;
  shards: number;
  /** Shards a failed worker left, redone on the calling thread. */
  shardsInThread: number;
  /** One line per worker failure, for the log. */
  failures: string[];
  /** Time spent merging the shards' BM25 parts on this thread. */
  mergeMs: number;
  /** Listed files the shards read and left out, counted by why (binary, generated). */
  skipped: Record<string, number>;
}

/** Cuts the file list into runs of consecutive files of about `target` bytes each. */
function cutShards(files: ShardFile[], target: number): ShardFile[][] {
  const shards: ShardFile[][] = [];
  let current: ShardFile[] = [];
  let bytes = 0;
  for (const f of files) {
    current.push(f);
    bytes += shardFileBytes(f);
    if (bytes >= target) {
      shards.push(current);
      current = [];
      bytes = 0;
    }
  }
  if (current.length) shards.push(current);
  return shards;
}

/**
 * A worker's young generation, in MB. V8's default (3 semi-spaces of up to 16 MB) is resident in every worker;
 * a shard's garbage is short-lived, so a small one costs no measurable CPU and saved about 40 MB of peak RSS on
 * a 5,600-file tree with two workers.
 */
const WORKER_YOUNG_MB = 8;

const WORKER_URL = new URL('./index-worker.mjs', import.meta.url);

/**
 * Runs the shards on `workers` threads, each with its own tree-sitter parser, handing the next shard to
 * whichever thread is free. A worker that crashes, exits or reports an error is dropped, and the shard it held
 * is redone on this thread (where a second failure is the build's error, with the shard's first file named);
 * when no worker is left, the remaining shards run here too. Results come back in shard order.
 */
async function runOnWorkers(
  shards: ShardFile[][],
  opts: IndexFilesOptions,
  out: IndexedFiles,
  arrived: (shard: number, result: ShardResult) => void,
): Promise<void> {
  const failed: number[] = [];
  let next = 0;
  const count = Math.min(opts.workers, shards.length);
  const runWorker = (): Promise<void> =>
    new Promise((resolve) => {
      const worker = new Worker(opts.workerUrl ?? WORKER_URL, { resourceLimits: { maxYoungGenerationSizeMb: WORKER_YOUNG_MB } });
      let held = -1;
      let done = false;
      const finish = (failure?: string): void => {
        if (done) return;
        done = true;
        if (failure !== undefined) {
          out.failures.push(failure);
          if (held >= 0) failed.push(held);
        }
        worker.removeAllListeners();
        // Swallow what a dying worker still emits once we stopped listening.
        worker.on('error', () => undefined);
        void worker.terminate().finally(resolve);
      };
      const send = (): void => {
        if (next >= shards.length) return finish();
        held = next++;
        const req: ShardRequest = { shard: held, files: shards[held]!, bm25: opts.bm25 };
        worker.postMessage(req);
      };
      worker.on('message', (reply: ShardReply) => {
        if ('error' in reply) return finish(`index worker failed on ${shards[reply.shard]![0]!.path}: ${reply.error}`);
        if (opts.consume) shards[reply.shard] = [];
        arrived(reply.shard, reply.result);
        held = -1;
        send();
      });
      worker.on('error', (err) => finish(`index worker crashed: ${err.message.split('\n')[0]!}`));
      worker.on('exit', (code) => finish(`index worker exited with code ${code}`));
      worker.on('online', send);
    });
  await Promise.all(Array.from({ length: count }, runWorker));
  out.workers = count;
  // Shards left by a failed worker, and those never handed out because every worker failed.
  for (let s = next; s < shards.length; s++) failed.push(s);
  if (failed.length) {
    const py = await loadPythonParser();
    for (const s of failed.sort((a, b) => a - b)) {
      arrived(s, indexHere(shards[s]!, py, opts.bm25));
      out.shardsInThread += 1;
    }
  }
}

/** Indexes a shard on this thread; a failure is one line naming the shard's first file. */
function indexHere(files: ShardFile[], py: PythonParser, bm25: boolean): ShardResult {
  try {
    return indexShard(files, py, bm25);
  } catch (err) {
    throw new Error(
      `indexing ${files[0]?.path ?? '(no file)'} failed: ${(err instanceof Error ? err.message : String(err)).split('\n')[0]!}`,
      { cause: err },
    );
  }
}

/**
 * Chunks the files (and builds the BM25 index when asked) across `workers` threads, in shards of consecutive
 * files; the shards' chunks are renumbered into one sequence and their BM25 parts merged, so the result is the
 * one a single thread gives (same chunk ids, same index bytes). Small repositories stay on this thread.
 */
export async function indexFiles(files: ShardFile[], opts: IndexFilesOptions): Promise<IndexedFiles> {
  let bytes = 0;
  for (const f of files) bytes += shardFileBytes(f);
  const out: IndexedFiles = { chunks: [], infos: [], workers: 0, shards: 0, shardsInThread: 0, failures: [], mergeMs: 0, skipped: {} };
  const parallel = opts.workers > 1 && bytes >= (opts.minParallelBytes ?? MIN_PARALLEL_BYTES);
  const target =
    opts.shardBytes ?? Math.min(MAX_SHARD_BYTES, Math.max(MIN_SHARD_BYTES, Math.ceil(bytes / (opts.workers * SHARDS_PER_WORKER))));
  const shards = cutShards(files, parallel ? target : Number.POSITIVE_INFINITY);
  if (opts.consume) files.length = 0;
  out.shards = shards.length;
  // Shards come back in any order; each is taken in (renumbered after the chunks before it) once every shard
  // before it is in, so that `onChunks` sees the chunks in order while later shards still run.
  const waiting: Array<ShardResult | null> = shards.map(() => null);
  const parts: Bm25Part[] = [];
  let taken = 0;
  // What `onChunks` threw (a full disk under the spool): it ends the build, once the shards in flight are back,
  // instead of escaping from a worker's message event.
  let failed: { error: unknown } | null = null;
  const arrived = (shard: number, result: ShardResult): void => {
    waiting[shard] = result;
    if (!failed)
      try {
        takeInOrder();
      } catch (error) {
        failed = { error };
      }
  };
  const takeInOrder = (): void => {
    for (let next = waiting[taken]; next; next = waiting[taken]) {
      waiting[taken++] = null;
      rebaseShard(next, out.chunks.length);
      for (const c of next.chunks) out.chunks.push(c);
      for (const info of next.infos) out.infos.push(info);
      if (next.bm25) parts.push(next.bm25);
      for (const [why, n] of Object.entries(next.skipped ?? {})) out.skipped[why] = (out.skipped[why] ?? 0) + n;
      opts.onChunks?.(next.chunks);
    }
  };
  if (parallel && shards.length > 1) await runOnWorkers(shards, opts, out, arrived);
  else {
    const py = await loadPythonParser();
    for (const [i, s] of shards.entries()) {
      const result = indexHere(s, py, opts.bm25);
      if (opts.consume) shards[i] = [];
      arrived(i, result);
      if (failed) break;
    }
  }
  if (failed) throw (failed as { error: unknown }).error;
  if (taken !== shards.length) throw new Error(`index shard ${taken} has no result`);
  const t = performance.now();
  if (opts.bm25) out.lexical = bm25FromParts(parts.length ? parts : [emptyPart()]);
  out.mergeMs = performance.now() - t;
  return out;
}

function emptyPart(): Bm25Part {
  return {
    terms: [],
    ids: new Int32Array(0),
    lengths: new Uint32Array(0),
    postings: { offsets: new Int32Array(1), docs: new Int32Array(0), tf: new Uint16Array(0) },
  };
}
