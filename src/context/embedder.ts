/** The semantic leg's port: texts in, unit-length vectors out (cosine = dot product). */
export interface Embedder {
  /** Shown in the output as `semantic: "<name>"`. */
  readonly name: string;
  embed(texts: string[]): Promise<Float32Array[]>;
}

/** Scores (query, passage) pairs jointly; higher is more relevant. */
export interface CrossEncoder {
  readonly name: string;
  score(query: string, passages: string[]): Promise<number[]>;
}

/**
 * Exact cosine search over unit vectors. Exact on purpose: a repository of 50,000 chunks at 384 dimensions is
 * 19M multiply-adds per query (tens of milliseconds), so an approximate index would buy nothing at this size.
 */
export function cosineSearch(matrix: Float32Array, dim: number, query: Float32Array, limit: number): Array<{ row: number; score: number }> {
  const rows = matrix.length / dim;
  const scores = new Float32Array(rows);
  for (let r = 0; r < rows; r++) {
    let s = 0;
    const base = r * dim;
    for (let d = 0; d < dim; d++) s += matrix[base + d]! * query[d]!;
    scores[r] = s;
  }
  const order = Array.from({ length: rows }, (_, r) => r).sort((a, b) => scores[b]! - scores[a]!);
  return order.slice(0, limit).map((row) => ({ row, score: scores[row]! }));
}
