import { availableParallelism } from 'node:os';
import { z } from 'zod';
import { SetupError } from '../errors.js';

const PositiveInt = z.coerce.number().int().positive();

/**
 * Settings of the context builder, read from the environment. Each one also goes into the cache key
 * (see `settingsFingerprint`) so that changing a setting never serves an index built under another.
 */
export const ContextSettings = z.object({
  /**
   * Embedding model for the semantic leg: a folder (absolute, or relative to REPGEN_MODEL_DIR) holding a
   * transformers.js model (config.json, tokenizer.json, onnx/model.onnx). Unset: semantic leg off.
   * @defaultValue undefined (lexical only, reported as `semantic: "off: no embedding model configured"`)
   */
  REPGEN_EMBED_MODEL: z.string().min(1).optional(),
  /**
   * Cross-encoder for re-ranking, same layout as the embedding model (a sequence-classification head).
   * Unset: the feature-based re-ranker.
   * @defaultValue undefined
   */
  REPGEN_RERANK_MODEL: z.string().min(1).optional(),
  /**
   * Where model folders named by a relative path live (transformers.js `env.localModelPath`). Models are never
   * downloaded: `env.allowRemoteModels` is always false.
   * @defaultValue "models"
   */
  REPGEN_MODEL_DIR: z.string().min(1).default('models'),
  /**
   * Disk cache for built indexes (chunks, lexical index, vectors), keyed by commit SHA + settings.
   * The value "off" disables the disk cache (the in-memory LRU still applies).
   * @defaultValue "<os tmpdir>/repgen-context-cache"
   */
  REPGEN_CONTEXT_CACHE_DIR: z.string().min(1).optional(),
  /** Indexes kept in memory (LRU) by a long-lived process. @defaultValue 4 */
  REPGEN_CONTEXT_CACHE_ENTRIES: PositiveInt.default(4),
  /**
   * Lexical (BM25) index adapter: `bm25` (in-house, typed arrays: loads from disk in milliseconds), `minisearch`
   * or `lunr` (the design's first choice; measured too big and slow to reload on large repositories).
   * @defaultValue "bm25"
   */
  REPGEN_LEXICAL: z.enum(['bm25', 'minisearch', 'lunr']).default('bm25'),
  /** Files larger than this many bytes are skipped (generated tables, minified data). @defaultValue 1000000 */
  REPGEN_CONTEXT_MAX_FILE_BYTES: PositiveInt.default(1_000_000),
  /**
   * Threads that parse, chunk and tokenize a repository being indexed (each with its own tree-sitter parser);
   * 1 keeps it on the calling thread. Repositories under about 4 MB of source stay on the calling thread anyway.
   * Not part of the cache key: every thread count builds the same index.
   * @defaultValue the machine's cores (`os.availableParallelism()`)
   */
  REPGEN_CONTEXT_WORKERS: PositiveInt.max(64).default(() => availableParallelism()),
  /** How many call levels the dependency closure follows. @defaultValue 2 */
  REPGEN_CONTEXT_DEP_DEPTH: z.coerce.number().int().min(0).default(2),
  /** Chunks embedded per model call. @defaultValue 32 */
  REPGEN_EMBED_BATCH: PositiveInt.default(32),
  /** Longest input, in model tokens, given to the embedder or cross-encoder (longer text is truncated). @defaultValue 256 */
  REPGEN_EMBED_MAX_TOKENS: PositiveInt.default(256),
});
export type ContextSettings = z.infer<typeof ContextSettings>;

/** Reads the context builder's settings; a bad value is a SetupError naming the variable. */
export function readContextSettings(env: NodeJS.ProcessEnv = process.env): ContextSettings {
  const parsed = ContextSettings.safeParse(env);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new SetupError(`bad context setting ${String(issue?.path.join('.') ?? '')}: ${issue?.message ?? 'invalid'}`);
  }
  return parsed.data;
}
