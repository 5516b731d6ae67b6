import { availableParallelism } from 'node:os';
import { z } from 'zod';
import { doc, intMin, posInt } from './define.js';

/**
 * Settings of the context builder. Each one (but the thread count) also goes into the index cache's key
 * (src/context's `settingsFingerprint`), so changing a setting never serves an index built under another.
 */
export const ContextEnv = z.object({
  REPGEN_EMBED_MODEL: doc(z.string().min(1).optional(), {
    description: 'embedding model folder (transformers.js layout; never downloaded); unset: lexical only',
    shown: '— (semantic leg off)',
  }),
  REPGEN_RERANK_MODEL: doc(z.string().min(1).optional(), {
    description: 'cross-encoder folder for re-ranking; unset: the feature-based re-ranker',
    shown: '—',
  }),
  REPGEN_MODEL_DIR: doc(z.string().min(1).default('models'), { description: 'where model folders named by a relative path live' }),
  REPGEN_CONTEXT_CACHE_DIR: doc(z.string().min(1).optional(), {
    description: 'disk cache of built indexes (by commit + settings); `off` disables it',
    shown: '`<tmpdir>/repgen-context-cache`',
  }),
  REPGEN_CONTEXT_CACHE_ENTRIES: doc(posInt().default(4), { description: 'indexes kept in memory (LRU) by a long-lived process' }),
  REPGEN_LEXICAL: doc(z.enum(['bm25', 'minisearch', 'lunr']).default('bm25'), { description: 'lexical index adapter' }),
  REPGEN_CONTEXT_MAX_FILE_BYTES: doc(posInt().default(1_000_000), { description: 'files larger than this are skipped' }),
  REPGEN_CONTEXT_WORKERS: doc(
    posInt()
      .max(64)
      .default(() => availableParallelism()),
    { description: 'threads that parse and tokenize a repository being indexed (1: the calling thread)', shown: 'the cores' },
  ),
  REPGEN_CONTEXT_DEP_DEPTH: doc(intMin(0).default(2), { description: 'call levels the dependency closure follows' }),
  REPGEN_EMBED_BATCH: doc(posInt().default(32), { description: 'chunks embedded per model call' }),
  REPGEN_EMBED_MAX_TOKENS: doc(posInt().default(256), {
    description: 'longest input, in model tokens, given to the embedder or cross-encoder',
  }),
});
export type ContextEnv = z.infer<typeof ContextEnv>;
