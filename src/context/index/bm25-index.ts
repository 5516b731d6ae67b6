import type { LexicalAdapter, LexicalDoc, LexicalHit, LexicalIndex } from '../lexical-index.js';
import { weightedTerms } from '../lexical-index.js';
import { Bm25Builder, type Bm25Part } from './bm25-builder.js';
import { allInRange, arrayColumn, encodeStrings, sortedIndexOf, stringColumn, type StringColumn } from '../packed-columns.js';

/** Okapi BM25 parameters (the usual values; lunr and MiniSearch default to the same). */
const K1 = 1.2;
const B = 0.75;
/** 3: the terms as UTF-8 bytes cut by offsets, searched in place (2 had them as a JSON list in the header). */
const FORMAT = 3;

type Stored = Bm25Part;

/**
 * The index a query runs on: the stored parts, with the term table behind a column so that a loaded index
 * searches the file's bytes. Parsing 235,000 terms out of JSON was about a tenth of a cached build on a
 * 5,600-file tree; a query looks up a few dozen of them.
 */
interface Searchable extends Omit<Stored, 'terms'> {
  terms: StringColumn;
  encodedTerms(): { offsets: Int32Array; bytes: Buffer };
}

function searchable(stored: Stored): Searchable {
  return { ...stored, terms: arrayColumn(stored.terms), encodedTerms: () => encodeStrings(stored.terms) };
}

function wrap(stored: Searchable): LexicalIndex {
  const termRow = { get: (term: string): number | undefined => sortedIndexOf(stored.terms, term) };
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
    serialize: (): Buffer => Buffer.concat(serializedParts()),
    serializedParts,
  };

  /** What `serialize` gives, in pieces that are views of the index's arrays: a file writes them with no copy. */
  function serializedParts(): Buffer[] {
    const terms = stored.encodedTerms();
    const header = Buffer.from(
      JSON.stringify({ format: FORMAT, terms: stored.terms.length, termBytes: terms.bytes.length, n, postings: docs.length }),
    );
    const pad = (4 - ((4 + header.length) % 4)) % 4;
    const lead = Buffer.alloc(4);
    lead.writeUInt32LE(header.length);
    const view = (a: ArrayBufferView): Buffer => Buffer.from(a.buffer, a.byteOffset, a.byteLength);
    // The term bytes last: every typed array before them stays 4-byte aligned.
    return [
      lead,
      header,
      Buffer.alloc(pad),
      view(terms.offsets),
      view(stored.ids),
      view(stored.lengths),
      view(offsets),
      view(docs),
      view(tf),
      terms.bytes,
    ];
  }
}

export { Bm25Builder, type Bm25Part } from './bm25-builder.js';

/** Binary min-heap of part numbers ordered by their current term, then by part number (so equal terms come in part order). */
function heapLess(terms: string[][], at: Int32Array, a: number, b: number): boolean {
  const ta = terms[a]![at[a]!]!;
  const tb = terms[b]![at[b]!]!;
  return ta < tb || (ta === tb && a < b);
}

/**
 * Joins the BM25 parts of consecutive runs of documents, in document order, into one index: the same terms,
 * postings, lengths and ids (byte for byte once serialized) as one `build` over all the documents. A k-way merge
 * of the parts' sorted term lists; each term's postings are the parts' postings one after the other, with the
 * document numbers shifted by the documents of the parts before.
 */
export function mergeBm25Parts(parts: Bm25Part[]): Bm25Part {
  if (parts.length === 1) return parts[0]!;
  let n = 0;
  let postings = 0;
  let termSlots = 0;
  const docBase = new Int32Array(parts.length);
  for (const [k, p] of parts.entries()) {
    docBase[k] = n;
    n += p.ids.length;
    postings += p.postings.docs.length;
    termSlots += p.terms.length;
  }
  const ids = new Int32Array(n);
  const lengths = new Uint32Array(n);
  for (const [k, p] of parts.entries()) {
    ids.set(p.ids, docBase[k]!);
    lengths.set(p.lengths, docBase[k]!);
  }
  const partTerms = parts.map((p) => p.terms);
  const at = new Int32Array(parts.length);
  const heap: number[] = [];
  const up = (i: number): void => {
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!heapLess(partTerms, at, heap[i]!, heap[parent]!)) break;
      [heap[i], heap[parent]] = [heap[parent]!, heap[i]!];
      i = parent;
    }
  };
  const down = (i: number): void => {
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < heap.length && heapLess(partTerms, at, heap[l]!, heap[m]!)) m = l;
      if (r < heap.length && heapLess(partTerms, at, heap[r]!, heap[m]!)) m = r;
      if (m === i) return;
      [heap[i], heap[m]] = [heap[m]!, heap[i]!];
      i = m;
    }
  };
  for (let k = 0; k < parts.length; k++) {
    if (parts[k]!.terms.length) {
      heap.push(k);
      up(heap.length - 1);
    }
  }
  const terms: string[] = [];
  const offsets = new Int32Array(termSlots + 1);
  const docs = new Int32Array(postings);
  const tf = new Uint16Array(postings);
  let written = 0;
  while (heap.length) {
    const k = heap[0]!;
    const row = at[k]!;
    const term = partTerms[k]![row]!;
    if (terms[terms.length - 1] !== term) {
      offsets[terms.length] = written;
      terms.push(term);
    }
    const p = parts[k]!.postings;
    const base = docBase[k]!;
    for (let i = p.offsets[row]!, end = p.offsets[row + 1]!; i < end; i++) {
      docs[written] = p.docs[i]! + base;
      tf[written] = p.tf[i]!;
      written++;
    }
    at[k] = row + 1;
    if (row + 1 < partTerms[k]!.length) down(0);
    else {
      heap[0] = heap[heap.length - 1]!;
      heap.pop();
      if (heap.length) down(0);
    }
  }
  offsets[terms.length] = written;
  return { terms, ids, lengths, postings: { offsets: offsets.slice(0, terms.length + 1), docs, tf } };
}

/** The lexical index over merged (or single) BM25 parts. */
export function bm25FromParts(parts: Bm25Part[]): LexicalIndex {
  return wrap(searchable(mergeBm25Parts(parts)));
}

/**
 * A compact in-house BM25 index: a term table plus postings in typed arrays. It exists because lunr and
 * MiniSearch keep every posting as a JS object, which on a repository of thousands of files costs gigabytes
 * (lunr) or seconds to serialize and reload (both); typed arrays load from disk in milliseconds. Same scoring
 * model (Okapi BM25, k1 1.2, b 0.75) with the name field weighted as in the other adapters.
 */
export const bm25Adapter: LexicalAdapter = {
  build(input: Iterable<LexicalDoc>): LexicalIndex {
    const builder = new Bm25Builder();
    for (const doc of input) builder.add(doc);
    return wrap(searchable(builder.finish()));
  },
  load(data: Buffer | string): LexicalIndex {
    const buf = typeof data === 'string' ? Buffer.from(data, 'latin1') : data;
    const headerLen = buf.readUInt32LE(0);
    const header = JSON.parse(buf.subarray(4, 4 + headerLen).toString('utf8')) as {
      format: number;
      terms: number;
      termBytes: number;
      n: number;
      postings: number;
    };
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
      const out =
        from % Ctor.BYTES_PER_ELEMENT === 0
          ? new Ctor(buf.buffer as ArrayBuffer, from, count)
          : new Ctor(buf.buffer.slice(from, from + bytes) as ArrayBuffer);
      at += bytes;
      return out;
    };
    const termOffsets = take(Int32Array, header.terms + 1);
    const ids = take(Int32Array, header.n);
    const lengths = take(Uint32Array, header.n);
    const offsets = take(Int32Array, header.terms + 1);
    const docs = take(Int32Array, header.postings);
    const tf = take(Uint16Array, header.postings);
    if (at + header.termBytes !== buf.length) throw new Error('bm25 index is truncated');
    const termBytes = buf.subarray(at, at + header.termBytes);
    if (offsets[0] !== 0 || offsets[header.terms] !== header.postings) throw new Error('bm25 postings do not match their terms');
    for (let r = 0; r < header.terms; r++) if (offsets[r + 1]! < offsets[r]!) throw new Error('bm25 postings go backwards');
    if (!allInRange(docs, header.n)) throw new Error('bm25 postings hold an unknown document');
    return wrap({
      terms: stringColumn(termOffsets, termBytes),
      encodedTerms: () => ({ offsets: termOffsets, bytes: termBytes }),
      ids,
      lengths,
      postings: { offsets, docs, tf },
    });
  },
};
