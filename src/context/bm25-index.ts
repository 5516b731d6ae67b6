import type { LexicalAdapter, LexicalDoc, LexicalHit, LexicalIndex } from './lexical-index.js';
import { weightedTerms } from './lexical-index.js';

/** Okapi BM25 parameters (the usual values; lunr and MiniSearch default to the same). */
const K1 = 1.2;
const B = 0.75;
/** A term in the name field (symbol, path) counts this many times a body occurrence (BM25F-style). */
const NAME_BOOST = 3;
const FORMAT = 2;

interface Postings {
  /** Row r's postings are docs[offsets[r] .. offsets[r+1]). */
  offsets: Int32Array;
  docs: Int32Array;
  /** Field-weighted term frequency, capped at 65535. */
  tf: Uint16Array;
}

interface Stored {
  /** Sorted (code unit order), so that a lookup is a binary search and loading builds no hash table. */
  terms: string[];
  ids: Int32Array;
  lengths: Uint32Array;
  postings: Postings;
}

function rowOf(terms: string[], term: string): number | undefined {
  let lo = 0;
  let hi = terms.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const t = terms[mid]!;
    if (t === term) return mid;
    if (t < term) lo = mid + 1;
    else hi = mid - 1;
  }
  return undefined;
}

function wrap(stored: Stored): LexicalIndex {
  const termRow = { get: (term: string): number | undefined => rowOf(stored.terms, term) };
  const n = stored.ids.length;
  let total = 0;
  for (const len of stored.lengths) total += len;
  const avg = total / Math.max(1, n);
  const norm = new Float32Array(n);
  for (let d = 0; d < n; d++) norm[d] = K1 * (1 - B + (B * stored.lengths[d]!) / avg);
  const { offsets, docs, tf } = stored.postings;
  return {
    adapter: 'bm25',
    documentFrequency(term: string): number {
      const row = termRow.get(term);
      return row === undefined ? 0 : offsets[row + 1]! - offsets[row]!;
    },
    search(terms: string[], limit: number): LexicalHit[] {
      const scores = new Float32Array(n);
      const touched: number[] = [];
      for (const [term, count] of weightedTerms(terms)) {
        const row = termRow.get(term);
        if (row === undefined) continue;
        const start = offsets[row]!;
        const end = offsets[row + 1]!;
        const df = end - start;
        // Repeating a term in the report raises its weight, sub-linearly.
        const weight = Math.log(1 + (n - df + 0.5) / (df + 0.5)) * (1 + Math.log(Math.min(count, 5)));
        for (let p = start; p < end; p++) {
          const d = docs[p]!;
          const f = tf[p]!;
          if (scores[d] === 0) touched.push(d);
          scores[d]! += (weight * f * (K1 + 1)) / (f + norm[d]!);
        }
      }
      touched.sort((a, b) => scores[b]! - scores[a]! || a - b);
      return touched.slice(0, limit).map((d) => ({ id: stored.ids[d]!, score: scores[d]! }));
    },
    serialize(): Buffer {
      const header = Buffer.from(JSON.stringify({ format: FORMAT, terms: stored.terms, n, postings: docs.length }));
      const pad = (4 - ((4 + header.length) % 4)) % 4;
      const lead = Buffer.alloc(4);
      lead.writeUInt32LE(header.length);
      const view = (a: ArrayBufferView): Buffer => Buffer.from(a.buffer, a.byteOffset, a.byteLength);
      return Buffer.concat([lead, header, Buffer.alloc(pad), view(stored.ids), view(stored.lengths), view(offsets), view(docs), view(tf)]);
    },
  };
}

/**
 * A compact in-house BM25 index: a term table plus postings in typed arrays. It exists because lunr and
 * MiniSearch keep every posting as a JS object, which on a repository of thousands of files costs gigabytes
 * (lunr) or seconds to serialize and reload (both); typed arrays load from disk in milliseconds. Same scoring
 * model (Okapi BM25, k1 1.2, b 0.75) with the name field weighted as in the other adapters.
 */
export const bm25Adapter: LexicalAdapter = {
  build(input: Iterable<LexicalDoc>): LexicalIndex {
    const termRow = new Map<string, number>();
    const terms: string[] = [];
    // Postings are gathered per term in growable plain arrays, then packed.
    const postDocs: number[][] = [];
    const postTf: number[][] = [];
    const ids: number[] = [];
    const lengths: number[] = [];
    const local = new Map<string, number>();
    for (const doc of input) {
      const d = ids.length;
      ids.push(doc.id);
      lengths.push(doc.body.length + doc.name.length);
      local.clear();
      for (const t of doc.body) local.set(t, (local.get(t) ?? 0) + 1);
      for (const t of doc.name) local.set(t, (local.get(t) ?? 0) + NAME_BOOST);
      for (const [t, f] of local) {
        let row = termRow.get(t);
        if (row === undefined) {
          row = terms.length;
          termRow.set(t, row);
          terms.push(t);
          postDocs.push([]);
          postTf.push([]);
        }
        postDocs[row]!.push(d);
        postTf[row]!.push(Math.min(f, 65535));
      }
    }
    // Pack in sorted term order: row r of the stored index is the r-th term alphabetically.
    const order = terms.map((_, r) => r).sort((a, b) => (terms[a]! < terms[b]! ? -1 : 1));
    const offsets = new Int32Array(terms.length + 1);
    let total = 0;
    for (const [r, row] of order.entries()) {
      offsets[r] = total;
      total += postDocs[row]!.length;
    }
    offsets[terms.length] = total;
    const docs = new Int32Array(total);
    const tf = new Uint16Array(total);
    for (const [r, row] of order.entries()) {
      docs.set(postDocs[row]!, offsets[r]!);
      tf.set(postTf[row]!, offsets[r]!);
    }
    const sorted = order.map((row) => terms[row]!);
    return wrap({ terms: sorted, ids: Int32Array.from(ids), lengths: Uint32Array.from(lengths), postings: { offsets, docs, tf } });
  },
  load(data: Buffer | string): LexicalIndex {
    const buf = typeof data === 'string' ? Buffer.from(data, 'latin1') : data;
    const headerLen = buf.readUInt32LE(0);
    const header = JSON.parse(buf.subarray(4, 4 + headerLen).toString('utf8')) as { format: number; terms: string[]; n: number; postings: number };
    if (header.format !== FORMAT) throw new Error(`bm25 index format ${header.format}, expected ${FORMAT}`);
    let at = 4 + headerLen;
    at += (4 - (at % 4)) % 4;
    // A view straight onto the file's bytes when they sit aligned (a large readFile gets its own buffer at offset
    // 0): copying 15 MB into fresh memory cost a tenth of a reload. Otherwise (a pooled small Buffer may sit at
    // any byte offset) a copy into a fresh, aligned buffer.
    const take = <T>(Ctor: { new (b: ArrayBuffer, offset?: number, length?: number): T; BYTES_PER_ELEMENT: number }, count: number): T => {
      const bytes = count * Ctor.BYTES_PER_ELEMENT;
      const from = buf.byteOffset + at;
      if (from + bytes > buf.byteOffset + buf.length) throw new Error('bm25 index is truncated');
      const out = from % Ctor.BYTES_PER_ELEMENT === 0 ? new Ctor(buf.buffer as ArrayBuffer, from, count) : new Ctor(buf.buffer.slice(from, from + bytes) as ArrayBuffer);
      at += bytes;
      return out;
    };
    const ids = take(Int32Array, header.n);
    const lengths = take(Uint32Array, header.n);
    const offsets = take(Int32Array, header.terms.length + 1);
    const docs = take(Int32Array, header.postings);
    const tf = take(Uint16Array, header.postings);
    return wrap({ terms: header.terms, ids, lengths, postings: { offsets, docs, tf } });
  },
};
