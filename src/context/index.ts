import { mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { silentLogger, type Logger } from '../log.js';
import { makeBundles } from './bundle.js';
import { assembleIndex, buildLexical, embedChunks, type ChunkVectors, type RepoIndex } from './index/build-index.js';
import {
  contentIdentity,
  gitIdentity,
  IndexLru,
  INDEX_VERSION,
  loadIndex,
  loadVectors,
  saveIndex,
  openTextSpool,
  saveVectors,
  sha256,
} from './index/cache.js';
import { cosineSearch, type CrossEncoder, type Embedder } from './embedder.js';
import { ContextInputError } from './errors.js';
import { lexicalAdapter } from './index/choose-lexical-adapter.js';
import { indexFiles, type IndexFilesOptions } from './index/parallel-index.js';
import type { Chunk } from './chunk-types.js';
import { rankCandidates } from './rank.js';
import { extractReportSignals } from './report-signals.js';
import { readContextSettings, type ContextSettings } from './settings.js';
import { crossRerank, phraseCandidates, queryTerms, rankLoops } from './query.js';
import { tokenize } from './tokenize.js';
import type { ContextResult, TrainingLoop } from './types.js';
import { listRepoFiles, readListed, statFingerprint, type ListedFile, type RepoFile } from './walk-repo.js';
import { ensureOwnedDir } from '../host/owned-dir.js';

export type { ContextResult, ContextBundle, ContextChunk, TrainingLoop } from './types.js';
export { ContextInputError } from './errors.js';
export type { Embedder, CrossEncoder } from './embedder.js';
export { readContextSettings, ContextSettings } from './settings.js';

export interface BuildContextInput {
  repoDir: string;
  report: { title?: string; body: string };
  /** Bundles to return. @defaultValue 5 */
  top?: number;
  /** Tokens per bundle (about 4 characters each). @defaultValue 6000 */
  tokenBudget?: number;
}

export interface BuildContextDeps {
  /** The settings, resolved once by the run spec; without them, read from `env`. */
  settings?: ContextSettings;
  /**
   * The semantic leg. Undefined: built from REPGEN_EMBED_MODEL when set. Null: off on purpose.
   * @defaultValue undefined
   */
  embedder?: Embedder | null;
  /** Re-ranker. Undefined: built from REPGEN_RERANK_MODEL when set, else the feature-based re-ranker. */
  crossEncoder?: CrossEncoder | null;
  log?: Logger;
  /** Overrides REPGEN_CONTEXT_CACHE_DIR; "off" disables the disk cache. */
  cacheDir?: string;
  env?: NodeJS.ProcessEnv;
  /** The in-memory LRU; one per process by default. */
  memory?: IndexLru;
  /**
   * Overrides of how a build is spread over worker threads (tests and benches: the smallest repository worth
   * workers, the shard size, the worker entry). The thread count itself is REPGEN_CONTEXT_WORKERS.
   */
  indexing?: Pick<IndexFilesOptions, 'minParallelBytes' | 'shardBytes' | 'workerUrl'>;
}

/** Where the index came from on this call. */
export type CacheSource = 'memory' | 'disk' | 'built';

const CANDIDATES_PER_LEG = 200;

let processLru: IndexLru | null = null;
const contentMemo = new Map<string, { fingerprint: string; identity: string }>();
const modelCache = new Map<string, Promise<Embedder | CrossEncoder>>();

function now(): number {
  return performance.now();
}

async function checkRepoDir(repoDir: string): Promise<void> {
  const info = await stat(repoDir).catch(() => null);
  if (!info) throw new ContextInputError(`repository folder ${repoDir} does not exist`);
  if (!info.isDirectory()) throw new ContextInputError(`${repoDir} is not a folder`);
}

function settingsKey(identity: string, settings: ContextSettings): string {
  return sha256(
    JSON.stringify({ v: INDEX_VERSION, identity, lexical: settings.REPGEN_LEXICAL, maxBytes: settings.REPGEN_CONTEXT_MAX_FILE_BYTES }),
  ).slice(0, 32);
}

function errorText(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).split('\n')[0]!;
}

async function resolveEmbedder(deps: BuildContextDeps, settings: ContextSettings): Promise<{ embedder: Embedder | null; off?: string }> {
  if (deps.embedder === null) return { embedder: null, off: 'off: disabled by the caller' };
  if (deps.embedder) return { embedder: deps.embedder };
  const model = settings.REPGEN_EMBED_MODEL;
  if (!model) return { embedder: null, off: 'off: no embedding model configured (REPGEN_EMBED_MODEL)' };
  const cacheKey = `embed:${settings.REPGEN_MODEL_DIR}:${model}:${settings.REPGEN_EMBED_MAX_TOKENS}`;
  try {
    if (!modelCache.has(cacheKey)) {
      const { createTransformersEmbedder } = await import('./transformers-embedder.js');
      modelCache.set(
        cacheKey,
        createTransformersEmbedder({ model, modelDir: settings.REPGEN_MODEL_DIR, maxTokens: settings.REPGEN_EMBED_MAX_TOKENS }),
      );
    }
    return { embedder: (await modelCache.get(cacheKey)) as Embedder };
  } catch (err) {
    modelCache.delete(cacheKey);
    return { embedder: null, off: `off: ${errorText(err)}` };
  }
}

async function resolveCrossEncoder(deps: BuildContextDeps, settings: ContextSettings, log: Logger): Promise<CrossEncoder | null> {
  if (deps.crossEncoder !== undefined) return deps.crossEncoder;
  const model = settings.REPGEN_RERANK_MODEL;
  if (!model) return null;
  const cacheKey = `rerank:${settings.REPGEN_MODEL_DIR}:${model}`;
  try {
    if (!modelCache.has(cacheKey)) {
      const { createTransformersCrossEncoder } = await import('./transformers-embedder.js');
      modelCache.set(
        cacheKey,
        createTransformersCrossEncoder({ model, modelDir: settings.REPGEN_MODEL_DIR, maxTokens: settings.REPGEN_EMBED_MAX_TOKENS }),
      );
    }
    return (await modelCache.get(cacheKey)) as CrossEncoder;
  } catch (err) {
    modelCache.delete(cacheKey);
    log.warn({ model, error: errorText(err) }, 'cross-encoder did not load; using the feature-based re-ranker');
    return null;
  }
}

interface Loaded {
  index: RepoIndex;
  source: CacheSource;
  timings: Record<string, number>;
}

async function loadOrBuild(
  repoDir: string,
  settings: ContextSettings,
  cacheDir: string | null,
  memory: IndexLru,
  log: Logger,
  indexing: BuildContextDeps['indexing'],
): Promise<Loaded> {
  const timings: Record<string, number> = {};
  let t = now();
  // What the build indexes: the files read already (to hash them), else the listed ones, which the index workers
  // read themselves, a shard at a time (the main thread never holds every file's text nor its read buffer).
  let walked: { files: Array<RepoFile | ListedFile>; skipped: Record<string, number> } | null = null;
  let identity = await gitIdentity(repoDir);
  if (!identity) {
    // Not a work tree: the identity is a hash of the contents. Hashing means reading every file, so the hash is
    // remembered against the files' paths, sizes and mtimes (what git's own index trusts), in this process and
    // next to the disk cache, and the files are re-read only when one of those moved.
    const { listed, skipped } = await listFiles(repoDir, settings);
    const fingerprint = sha256(`${repoDir}\n${statFingerprint(listed)}`);
    const memoFile = cacheDir ? join(cacheDir, 'stat-memo', fingerprint) : null;
    const remembered =
      contentMemo.get(repoDir)?.fingerprint === fingerprint
        ? contentMemo.get(repoDir)!.identity
        : memoFile
          ? await readFile(memoFile, 'utf8').catch(() => null)
          : null;
    if (remembered) {
      identity = remembered;
      walked = { files: listed, skipped };
    } else {
      const read = await readListed(listed, skipped);
      walked = read;
      identity = contentIdentity(read.files);
      if (memoFile) {
        await mkdir(dirname(memoFile), { recursive: true });
        await writeFile(memoFile, identity);
      }
    }
    contentMemo.set(repoDir, { fingerprint, identity });
  }
  const key = settingsKey(identity, settings);
  timings.identifyMs = now() - t;
  const hit = memory.get(key);
  if (hit) return { index: hit, source: 'memory', timings };
  const adapter = await lexicalAdapter(settings.REPGEN_LEXICAL);
  if (cacheDir) {
    t = now();
    const stored = await loadIndex(cacheDir, key, adapter);
    timings.loadMs = now() - t;
    if (stored) {
      memory.set(stored);
      return { index: stored, source: 'disk', timings };
    }
  }
  t = now();
  if (!walked) {
    const { listed, skipped } = await listFiles(repoDir, settings);
    walked = { files: listed, skipped };
  }
  timings.walkMs = now() - t;
  if (!walked.files.some((f) => f.language === 'python')) throw await noPython(repoDir);
  t = now();
  let index: RepoIndex;
  const { files, skipped } = walked;
  // The files are handed to indexFiles, which lets each shard's go once indexed.
  // eslint-disable-next-line no-useless-assignment -- the null is read by the garbage collector, not by this code
  walked = null;
  // With a disk cache, chunk texts go to the entry's texts.txt as shards come in, not held here until the save.
  const spool = cacheDir ? await openTextSpool(cacheDir, key) : null;
  try {
    // Parsing, chunking and (for bm25) tokenizing run on the worker threads; the BM25 parts merge here.
    const built = await indexFiles(files, {
      ...indexing,
      workers: settings.REPGEN_CONTEXT_WORKERS,
      bm25: settings.REPGEN_LEXICAL === 'bm25',
      consume: true,
      ...(spool ? { onChunks: (chunks: Chunk[]) => spool.append(chunks) } : {}),
    });
    const { chunks, infos } = built;
    for (const [why, n] of Object.entries(built.skipped)) skipped[why] = (skipped[why] ?? 0) + n;
    // Every Python file listed may have turned out binary or generated once read.
    if (!infos.some((f) => f.path.endsWith('.py') || f.path.endsWith('.pyi'))) throw await noPython(repoDir);
    timings.chunkMs = now() - t;
    timings.indexWorkers = built.workers;
    timings.indexShards = built.shards;
    if (built.failures.length) {
      timings.shardsInThread = built.shardsInThread;
      const { failures, shardsInThread } = built;
      log.warn({ failures, shardsInThread }, 'index workers failed; their shards were indexed on the main thread');
    }
    t = now();
    const lexical = built.lexical ?? buildLexical(adapter, chunks);
    // bm25: the merge of the shards' parts (their tokenizing is in chunkMs); other adapters: the whole build.
    timings.lexicalBuildMs = built.lexical ? built.mergeMs : now() - t;
    timings.chunkMs -= built.mergeMs;
    index = assembleIndex(key, { chunks, files: infos, lexical, skipped });
    if (cacheDir) {
      t = now();
      await saveIndex(cacheDir, index, spool ?? undefined);
      timings.saveMs = now() - t;
      // The saved index, reloaded, reads chunk texts from texts.txt on demand, its chunks packed: the built chunk
      // objects become garbage instead of living in the memory cache.
      t = now();
      const reloaded = await loadIndex(cacheDir, key, adapter);
      timings.reloadMs = now() - t;
      if (reloaded) {
        index = reloaded;
        spool?.close();
      }
    }
  } catch (err) {
    spool?.discard();
    throw err;
  }
  memory.set(index);
  return { index, source: 'built', timings };
}

/** The candidate files; an unreadable folder inside the checkout is the user's to fix: say which, without a stack. */
function listFiles(repoDir: string, settings: ContextSettings): ReturnType<typeof listRepoFiles> {
  return listRepoFiles(repoDir, { maxFileBytes: settings.REPGEN_CONTEXT_MAX_FILE_BYTES }).catch((err: NodeJS.ErrnoException) => {
    throw new ContextInputError(`cannot read ${err.path ?? repoDir}: ${err.code ?? errorText(err)}`);
  });
}

async function noPython(repoDir: string): Promise<ContextInputError> {
  const empty = (await readdir(repoDir)).filter((name) => name !== '.git').length === 0;
  return new ContextInputError(`${repoDir} ${empty ? 'is empty' : 'has no Python files'}`);
}

async function vectorsFor(
  index: RepoIndex,
  embedder: Embedder,
  settings: ContextSettings,
  cacheDir: string | null,
  timings: Record<string, number>,
): Promise<ChunkVectors> {
  const cached = index.vectors.get(embedder.name);
  if (cached) return cached;
  const t = now();
  let vectors = cacheDir ? await loadVectors(cacheDir, index.key, embedder.name, index.chunks.length) : null;
  if (!vectors) {
    vectors = await embedChunks(index.chunks, embedder, {
      batch: settings.REPGEN_EMBED_BATCH,
      maxTokens: settings.REPGEN_EMBED_MAX_TOKENS,
    });
    timings.embedMs = now() - t;
    timings.embeddedChunks = index.chunks.length;
    if (cacheDir) await saveVectors(cacheDir, index.key, vectors);
  } else timings.vectorLoadMs = now() - t;
  index.vectors.set(embedder.name, vectors);
  return vectors;
}

/**
 * Builds the ranked context bundles for a bug report over a repository checkout: chunk (tree-sitter), index
 * (BM25, optional embeddings), fuse with the report's signals, re-rank, close over dependencies, bundle.
 * The index is cached by commit + settings in memory and on disk, so a second call on a commit only queries.
 */
export async function buildContext(input: BuildContextInput, deps: BuildContextDeps = {}): Promise<ContextResult> {
  const started = now();
  const log = deps.log ?? silentLogger;
  const settings = deps.settings ?? readContextSettings(deps.env ?? process.env);
  const repoDir = resolve(input.repoDir);
  await checkRepoDir(repoDir);
  const cacheSetting = deps.cacheDir ?? settings.REPGEN_CONTEXT_CACHE_DIR ?? join(tmpdir(), 'repgen-context-cache');
  let cacheDir = cacheSetting === 'off' ? null : resolve(cacheSetting);
  // The disk cache is used only in a folder of RepGen's own (owned-dir.ts); another user's is never read.
  if (cacheDir) {
    const why = await ensureOwnedDir(cacheDir, 'REPGEN_CONTEXT_CACHE_DIR').then(
      () => null,
      (err: unknown) => errorText(err),
    );
    if (why) {
      log.warn({ cacheDir, why }, 'context disk cache off');
      cacheDir = null;
    }
  }
  processLru ??= new IndexLru(settings.REPGEN_CONTEXT_CACHE_ENTRIES);
  const memory = deps.memory ?? processLru;

  const { index, source, timings } = await loadOrBuild(repoDir, settings, cacheDir, memory, log, deps.indexing);
  log.info({ repoDir, chunks: index.chunks.length, source }, 'context index ready');
  if (!index.files.some((f) => f.path.endsWith('.py') || f.path.endsWith('.pyi'))) {
    throw new ContextInputError(`${repoDir} has no Python files`);
  }

  const { embedder, off } = await resolveEmbedder(deps, settings);
  let semantic = off ?? embedder!.name;
  let vectors: ChunkVectors | null = null;
  if (embedder) {
    try {
      vectors = await vectorsFor(index, embedder, settings, cacheDir, timings);
    } catch (err) {
      semantic = `off: embedding failed: ${errorText(err)}`;
      log.warn({ model: embedder.name, error: errorText(err) }, 'semantic leg off: embedding failed');
    }
  }

  let t = now();
  const signals = extractReportSignals(input.report);
  const terms = queryTerms(tokenize(signals.query), index);
  const lexical = index.lexical.search(
    terms.flatMap(([term, n]) => Array<string>(n).fill(term)),
    CANDIDATES_PER_LEG,
  );
  timings.lexicalQueryMs = now() - t;
  let semanticHits: Array<{ id: number; score: number }> = [];
  if (embedder && vectors) {
    t = now();
    try {
      const [q] = await embedder.embed([signals.query.slice(0, settings.REPGEN_EMBED_MAX_TOKENS * 4)]);
      semanticHits = cosineSearch(vectors.matrix, vectors.dim, q!, CANDIDATES_PER_LEG).map((h) => ({ id: h.row, score: h.score }));
    } catch (err) {
      semantic = `off: query embedding failed: ${errorText(err)}`;
    }
    timings.semanticQueryMs = now() - t;
  }
  t = now();
  const loopIds = new Set(index.loops.map((l) => l.chunkId));
  const phraseScope = phraseCandidates(signals.errorPhrases, index);
  let ranked = rankCandidates({
    graph: index.graph,
    signals,
    lexical,
    semantic: semanticHits,
    trainingLoopIds: loopIds,
    ...(phraseScope ? { phraseScope } : {}),
  });
  timings.rankMs = now() - t;
  const crossEncoder = await resolveCrossEncoder(deps, settings, log);
  if (crossEncoder && ranked.length) {
    t = now();
    try {
      ranked = await crossRerank(ranked, index, signals.query, crossEncoder);
    } catch (err) {
      log.warn({ model: crossEncoder.name, error: errorText(err) }, 'cross-encoder failed; feature-based ranking kept');
    }
    timings.crossEncoderMs = now() - t;
  }
  t = now();
  const loops = rankLoops(index.loops, ranked, signals);
  const bundles = makeBundles(index.graph, ranked, loops, {
    top: input.top ?? 5,
    tokenBudget: input.tokenBudget ?? 6000,
    depth: settings.REPGEN_CONTEXT_DEP_DEPTH,
  });
  timings.bundleMs = now() - t;
  timings.totalMs = now() - started;
  const trainingLoops: TrainingLoop[] = loops.map(({ chunkId: _id, ...loop }) => loop);
  for (const k of Object.keys(timings)) timings[k] = Math.round(timings[k]! * 10) / 10;
  return { bundles, trainingLoops, semantic, timings, cache: source };
}
