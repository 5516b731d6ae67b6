import type { Chunk, FileInfo } from '../chunk-types.js';
import { chunkFile } from '../chunk-python.js';
import { buildGraph, type RepoGraph } from '../deps.js';
import type { Embedder } from '../embedder.js';
import { lexicalNameOf, type LexicalAdapter, type LexicalDoc, type LexicalIndex } from '../lexical-index.js';
import { loadPythonParser } from '../python-parser.js';
import { tokenize } from '../tokenize.js';
import { findTrainingLoops, type FoundLoop } from '../training-loops.js';
import type { RepoFile } from '../walk-repo.js';

/** Vectors of every chunk for one embedding model: row i is chunk i, unit length. */
export interface ChunkVectors {
  model: string;
  dim: number;
  matrix: Float32Array;
}

/** Everything a query needs, built once per commit + settings and cached. */
export interface RepoIndex {
  key: string;
  chunks: Chunk[];
  files: FileInfo[];
  graph: RepoGraph;
  lexical: LexicalIndex;
  loops: FoundLoop[];
  skipped: Record<string, number>;
  /** By model name; filled lazily, since the lexical index does not depend on the model. */
  vectors: Map<string, ChunkVectors>;
}

export function lexicalDocOf(chunk: Chunk): LexicalDoc {
  const name = tokenize(lexicalNameOf(chunk));
  return { id: chunk.id, name, body: tokenize(chunk.text) };
}

export async function chunkRepo(files: RepoFile[]): Promise<{ chunks: Chunk[]; infos: FileInfo[] }> {
  const py = await loadPythonParser();
  const chunks: Chunk[] = [];
  const infos: FileInfo[] = [];
  for (const file of files) {
    const { chunks: fileChunks, info } = chunkFile(file, py, chunks.length);
    for (const c of fileChunks) chunks.push(c);
    infos.push(info);
  }
  return { chunks, infos };
}

export function assembleIndex(
  key: string,
  parts: {
    chunks: Chunk[];
    files: FileInfo[];
    lexical: LexicalIndex;
    skipped: Record<string, number>;
    loops?: FoundLoop[];
    names?: Pick<RepoGraph, 'bySymbolPart' | 'byCallName'>;
  },
): RepoIndex {
  return {
    key,
    chunks: parts.chunks,
    files: parts.files,
    graph: buildGraph(parts.chunks, parts.files, parts.names),
    lexical: parts.lexical,
    loops: parts.loops ?? findTrainingLoops(parts.chunks, parts.files),
    skipped: parts.skipped,
    vectors: new Map(),
  };
}

export function* lexicalDocs(chunks: Chunk[]): Generator<LexicalDoc> {
  for (const chunk of chunks) yield lexicalDocOf(chunk);
}

export function buildLexical(adapter: LexicalAdapter, chunks: Chunk[]): LexicalIndex {
  return adapter.build(lexicalDocs(chunks));
}

/** What the embedder sees of a chunk: where it is and what it is called, then its code, cut to the model's window. */
export function embeddingText(chunk: Chunk, maxChars: number): string {
  return `${chunk.path} ${chunk.symbol ?? ''}\n${chunk.text}`.slice(0, maxChars);
}

export async function embedChunks(
  chunks: Chunk[],
  embedder: Embedder,
  { batch, maxTokens }: { batch: number; maxTokens: number },
): Promise<ChunkVectors> {
  let dim = 0;
  let matrix = new Float32Array(0);
  for (let start = 0; start < chunks.length; start += batch) {
    const slice = chunks.slice(start, start + batch);
    // Roughly 4 characters per token: cutting the text first keeps the tokenizer from chewing huge chunks.
    const vectors = await embedder.embed(slice.map((c) => embeddingText(c, maxTokens * 4)));
    if (!dim) {
      dim = vectors[0]?.length ?? 0;
      matrix = new Float32Array(chunks.length * dim);
    }
    for (const [i, v] of vectors.entries()) matrix.set(v, (start + i) * dim);
  }
  return { model: embedder.name, dim, matrix };
}
