import { describe, expect, it } from 'vitest';
import { Bm25Builder, bm25FromParts, type Bm25Part } from '../../src/context/index/bm25-index.js';
import { lexicalDocOf } from '../../src/context/index/build-index.js';
import { lexicalAdapter } from '../../src/context/index/choose-lexical-adapter.js';
import type { Chunk } from '../../src/context/chunk-types.js';
import type { LexicalAdapterName } from '../../src/context/lexical-index.js';
import { tokenize } from '../../src/context/tokenize.js';

const DOCS = [
  {
    id: 0,
    name: tokenize('accuracy vision/utils/metrics'),
    body: tokenize('maxk = max(topk); _, pred = output.topk(maxk, 1, True, True)'),
  },
  {
    id: 1,
    name: tokenize('GroupNorm.__init__ vision/layers/norm'),
    body: tokenize("raise ValueError('num_channels must be divisible by num_groups')"),
  },
  {
    id: 2,
    name: tokenize('resize_image vision/data/transforms'),
    body: tokenize("F.interpolate(img, size=(width, height), mode='bilinear')"),
  },
];

describe.each(['bm25', 'lunr', 'minisearch'] as LexicalAdapterName[])('lexical adapter %s', (name) => {
  it('ranks by BM25 over code tokens and survives a serialize/load round trip', async () => {
    const adapter = await lexicalAdapter(name);
    const index = adapter.build(DOCS);
    const query = tokenize('num_groups must divide the channels');
    const hits = index.search(query, 10);
    expect(hits[0]!.id).toBe(1);
    expect(index.search(tokenize('F.interpolate bilinear'), 10)[0]!.id).toBe(2);
    expect(index.search(tokenize('topk'), 10).map((h) => h.id)).toEqual([0]);
    expect(index.search([], 10)).toEqual([]);
    const loaded = adapter.load(index.serialize());
    expect(loaded.search(query, 10)).toEqual(hits);
    expect(loaded.adapter).toBe(name);
  });
});

describe('BM25 builder and part merge', () => {
  /** The postings the old one-pass build produced: per term (code unit order), (doc, field-weighted tf) in doc order. */
  function naive(docs: Array<{ id: number; name: string[]; body: string[] }>): Map<string, Array<[number, number]>> {
    const post = new Map<string, Array<[number, number]>>();
    for (const [d, doc] of docs.entries()) {
      const local = new Map<string, number>();
      for (const t of doc.body) local.set(t, (local.get(t) ?? 0) + 1);
      for (const t of doc.name) local.set(t, (local.get(t) ?? 0) + 3);
      for (const [t, f] of local) post.set(t, [...(post.get(t) ?? []), [d, Math.min(f, 65535)]]);
    }
    return new Map([...post].sort((a, b) => (a[0] < b[0] ? -1 : 1)));
  }

  function flatten(part: Bm25Part): Map<string, Array<[number, number]>> {
    const out = new Map<string, Array<[number, number]>>();
    for (const [r, term] of part.terms.entries()) {
      const list: Array<[number, number]> = [];
      for (let p = part.postings.offsets[r]!; p < part.postings.offsets[r + 1]!; p++)
        list.push([part.postings.docs[p]!, part.postings.tf[p]!]);
      out.set(term, list);
    }
    return out;
  }

  it('gives the one-pass postings, and the same index from any split into consecutive parts', () => {
    // Deterministic pseudo-random documents over a small vocabulary (with non-ASCII and upper-case terms).
    let seed = 7;
    const rand = (n: number): number => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % n;
    const vocab = ['loss', 'grad', 'Zeta', 'é', 'step', 'optim', 'a_b', 'topk', 'x1', 'norm', 'ünï', 'backward'];
    const docs = Array.from({ length: 60 }, (_, id) => ({
      id: id + 100,
      name: Array.from({ length: rand(3) }, () => vocab[rand(vocab.length)]!),
      body: Array.from({ length: rand(40) }, () => vocab[rand(vocab.length)]!),
    }));
    const whole = new Bm25Builder();
    for (const d of docs) whole.add(d);
    const one = whole.finish();
    expect([...flatten(one)]).toEqual([...naive(docs)]);
    expect([...one.ids]).toEqual(docs.map((d) => d.id));
    expect([...one.lengths]).toEqual(docs.map((d) => d.name.length + d.body.length));
    const bytes = Buffer.from(bm25FromParts([one]).serialize() as Buffer);
    for (const cuts of [
      [0, 60],
      [0, 1, 60],
      [0, 7, 8, 30, 59, 60],
      [0, 0, 20, 20, 60],
    ]) {
      const parts: Bm25Part[] = [];
      for (let i = 0; i + 1 < cuts.length; i++) {
        const b = new Bm25Builder();
        for (const d of docs.slice(cuts[i], cuts[i + 1])) b.add(d);
        parts.push(b.finish());
      }
      expect(Buffer.from(bm25FromParts(parts).serialize() as Buffer).equals(bytes)).toBe(true);
    }
  });
});

describe('BM25 builder fed chunks', () => {
  it('counts a chunk through the word cache as add(lexicalDocOf(chunk)) does, byte for byte', () => {
    // Hostile texts: non-ASCII, NUL, a lone surrogate, stop words only, words over 60 characters, repeated
    // identifiers (cache hits), and more distinct words than the word cache holds (it starts over mid-chunk).
    const many = Array.from({ length: 210_000 }, (_, i) => `w${i.toString(36)}`).join(' ');
    const texts = [
      'def forward(self, x):\n    return self.conv1(x) + self.conv1(x) * ResNet50Block(x)',
      'café.naïve = 变量 \0\ud800 HTTPError',
      'the a is of self cls',
      `${'q'.repeat(61)} ${'Q'.repeat(70)}_tail`,
      '',
      many,
      'def forward(self, x):\n    return loss.backward()',
    ];
    const chunks = texts.map((text, i) => ({
      id: 40 + i,
      path: i % 2 ? `pkg/mod${i}.py` : `configs/c${i}.yaml`,
      text,
      ...(i % 3 ? { symbol: `Model${i}.forward` } : {}),
    }));
    const viaDocs = new Bm25Builder();
    for (const c of chunks) viaDocs.add(lexicalDocOf(c as Chunk));
    const viaChunks = new Bm25Builder();
    for (const c of chunks) viaChunks.addChunk(c);
    const want = Buffer.from(bm25FromParts([viaDocs.finish()]).serialize() as Buffer);
    expect(Buffer.from(bm25FromParts([viaChunks.finish()]).serialize() as Buffer).equals(want)).toBe(true);
  });
});
