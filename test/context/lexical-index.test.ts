import { describe, expect, it } from 'vitest';
import { lexicalAdapter, type LexicalAdapterName } from '../../src/context/lexical-index.js';
import { tokenize } from '../../src/context/tokenize.js';

const DOCS = [
  { id: 0, name: tokenize('accuracy vision/utils/metrics'), body: tokenize('maxk = max(topk); _, pred = output.topk(maxk, 1, True, True)') },
  { id: 1, name: tokenize('GroupNorm.__init__ vision/layers/norm'), body: tokenize("raise ValueError('num_channels must be divisible by num_groups')") },
  { id: 2, name: tokenize('resize_image vision/data/transforms'), body: tokenize("F.interpolate(img, size=(width, height), mode='bilinear')") },
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
