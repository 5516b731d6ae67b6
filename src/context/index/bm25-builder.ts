import type { Chunk } from '../chunk-types.js';
import { lexicalNameOf, type LexicalDoc } from '../lexical-index.js';
import { forEachWord, wordTokens } from '../tokenize.js';

/** A term in the name field (symbol, path) counts this many times a body occurrence (BM25F-style). */
const NAME_BOOST = 3;
/** Distinct words whose term rows a builder remembers before it starts over (bounds its memory on any input). */
const WORD_CACHE_LIMIT = 200_000;

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

/**
 * The parts of a BM25 index over a run of consecutive documents (one shard of a repository). Plain typed arrays
 * and a string list: a worker thread hands them to the main thread without copying the arrays, and
 * `mergeBm25Parts` joins the parts of consecutive shards into the index one build over all documents gives.
 */
export type Bm25Part = Stored;

/** Typed-array storage that doubles when full: a push costs no object, and the garbage collector sees one buffer. */
class Grow<T extends Int32Array | Uint16Array> {
  length = 0;
  constructor(public data: T) {}
  push(v: number): void {
    if (this.length === this.data.length) {
      const bigger = new (this.data.constructor as { new (n: number): T })(this.data.length * 2);
      bigger.set(this.data);
      this.data = bigger;
    }
    this.data[this.length++] = v;
  }
}

/**
 * Builds the BM25 parts one document at a time, holding only the postings (as (term row, doc, tf) triples in
 * growable typed arrays) and the term table: no document's tokens outlive its `add`. The triples are sorted
 * into postings by term in `finish` (a counting sort, stable, so each term's postings stay in document order).
 */
export class Bm25Builder {
  private readonly termRow = new Map<string, number>();
  private readonly terms: string[] = [];
  private readonly ids: number[] = [];
  private readonly lengths: number[] = [];
  /** Field-weighted frequency of each term row in the current document; rows touched are listed in `touched`. */
  private docTf = new Int32Array(1024);
  private readonly touched: number[] = [];
  private readonly rows = new Grow(new Int32Array(4096));
  private readonly docs = new Grow(new Int32Array(4096));
  private readonly tfs = new Grow(new Uint16Array(4096));
  private readonly wordRows = new Map<string, Int32Array>();

  private rowOf(term: string): number {
    let row = this.termRow.get(term);
    if (row === undefined) {
      row = this.terms.length;
      this.termRow.set(term, row);
      this.terms.push(term);
      if (row === this.docTf.length) {
        const bigger = new Int32Array(row * 2);
        bigger.set(this.docTf);
        this.docTf = bigger;
      }
    }
    return row;
  }

  private countRow(row: number, weight: number): void {
    if (this.docTf[row] === 0) this.touched.push(row);
    this.docTf[row]! += weight;
  }

  private count(term: string, weight: number): void {
    this.countRow(this.rowOf(term), weight);
  }

  /** The term rows of one word's tokens, remembered: identifiers repeat, so most words skip the tokenizer. */
  private rowsOfWord(word: string): Int32Array {
    let rows = this.wordRows.get(word);
    if (rows === undefined) {
      const tokens: string[] = [];
      wordTokens(word, tokens);
      rows = new Int32Array(tokens.length);
      for (let i = 0; i < tokens.length; i++) rows[i] = this.rowOf(tokens[i]!);
      if (this.wordRows.size >= WORD_CACHE_LIMIT) this.wordRows.clear();
      this.wordRows.set(word, rows);
    }
    return rows;
  }

  /** Counts the tokens of `text` with `weight` each; returns how many there were. */
  private countText(text: string, weight: number): number {
    let length = 0;
    forEachWord(text, (word) => {
      const rows = this.rowsOfWord(word);
      for (let i = 0; i < rows.length; i++) this.countRow(rows[i]!, weight);
      length += rows.length;
    });
    return length;
  }

  /**
   * Adds a chunk as `add(lexicalDocOf(chunk))` would (same terms, frequencies and length), tokenizing straight
   * into the counts through the word cache instead of making the two token lists.
   */
  addChunk(chunk: Pick<Chunk, 'id' | 'symbol' | 'path' | 'text'>): void {
    const d = this.ids.length;
    this.ids.push(chunk.id);
    const body = this.countText(chunk.text, 1);
    const name = this.countText(lexicalNameOf(chunk), NAME_BOOST);
    this.lengths.push(body + name);
    this.endDoc(d);
  }

  add(doc: LexicalDoc): void {
    const d = this.ids.length;
    this.ids.push(doc.id);
    this.lengths.push(doc.body.length + doc.name.length);
    for (const t of doc.body) this.count(t, 1);
    for (const t of doc.name) this.count(t, NAME_BOOST);
    this.endDoc(d);
  }

  /** Writes the current document's (row, doc, tf) triples and clears its counts. */
  private endDoc(d: number): void {
    for (const row of this.touched) {
      this.rows.push(row);
      this.docs.push(d);
      this.tfs.push(Math.min(this.docTf[row]!, 65535));
      this.docTf[row] = 0;
    }
    this.touched.length = 0;
  }

  finish(): Bm25Part {
    const { terms } = this;
    // Row r of the stored index is the r-th term in code unit order.
    const order = terms.map((_, r) => r).sort((a, b) => (terms[a]! < terms[b]! ? -1 : 1));
    const rank = new Int32Array(terms.length);
    for (const [r, row] of order.entries()) rank[row] = r;
    const total = this.rows.length;
    const offsets = new Int32Array(terms.length + 1);
    const rows = this.rows.data;
    for (let i = 0; i < total; i++) offsets[rank[rows[i]!]! + 1]! += 1;
    for (let r = 0; r < terms.length; r++) offsets[r + 1]! += offsets[r]!;
    const cursor = offsets.slice(0, terms.length);
    const docs = new Int32Array(total);
    const tf = new Uint16Array(total);
    const inDocs = this.docs.data;
    const inTf = this.tfs.data;
    for (let i = 0; i < total; i++) {
      const at = cursor[rank[rows[i]!]!]!++;
      docs[at] = inDocs[i]!;
      tf[at] = inTf[i]!;
    }
    return {
      terms: order.map((row) => terms[row]!),
      ids: Int32Array.from(this.ids),
      lengths: Uint32Array.from(this.lengths),
      postings: { offsets, docs, tf },
    };
  }
}
