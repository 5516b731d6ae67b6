/** One document of the lexical index: a chunk's tokens, name field (symbol + path) apart from its body. */
export interface LexicalDoc {
  id: number;
  name: string[];
  body: string[];
}

/** The text of a chunk's name field: its symbol and its path without ".py". */
export function lexicalNameOf(chunk: { symbol?: string; path: string }): string {
  return `${chunk.symbol ?? ''} ${chunk.path.replace(/\.py$/, '')}`;
}

export interface LexicalHit {
  id: number;
  score: number;
}

/** The lexical (BM25) leg behind a port, so that lunr and MiniSearch can be measured on the same chunks. */
export interface LexicalIndex {
  readonly adapter: LexicalAdapterName;
  /** Best-scoring chunk ids for already-tokenized query terms, best first. */
  search(terms: string[], limit: number): LexicalHit[];
  /** Bytes that `load` of the same adapter turns back into an index. */
  serialize(): Buffer | string;
  /** The same bytes in pieces, when the adapter holds them as arrays: written one after the other, with no copy of the whole. */
  serializedParts?(): readonly Buffer[];
  /** How many documents hold the term, when the adapter knows cheaply (used to drop uninformative query terms). */
  documentFrequency?(term: string): number;
}

export type LexicalAdapterName = 'lunr' | 'minisearch' | 'bm25';

export interface LexicalAdapter {
  build(docs: Iterable<LexicalDoc>): LexicalIndex;
  load(data: Buffer | string): LexicalIndex;
}

/** Query terms once each, weighted by how often the report repeats them. */
export function weightedTerms(terms: string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const t of terms) counts.set(t, (counts.get(t) ?? 0) + 1);
  return counts;
}
