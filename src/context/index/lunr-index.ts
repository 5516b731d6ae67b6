import lunr from 'lunr';
import { weightedTerms, type LexicalAdapter, type LexicalDoc, type LexicalHit, type LexicalIndex } from '../lexical-index.js';

/** Symbol and path matches weigh more than body matches. */
const NAME_BOOST = 3;

function wrap(index: lunr.Index): LexicalIndex {
  return {
    adapter: 'lunr',
    search(terms: string[], limit: number): LexicalHit[] {
      if (!terms.length) return [];
      const results = index.query((q) => {
        for (const [term, count] of weightedTerms(terms)) {
          // Terms were tokenized by our own tokenizer: lunr's pipeline and wildcards stay out of it.
          q.term(term, { usePipeline: false, wildcard: lunr.Query.wildcard.NONE, boost: Math.min(count, 5) });
        }
      });
      return results.slice(0, limit).map((r) => ({ id: Number(r.ref), score: r.score }));
    },
    serialize: () => JSON.stringify(index),
  };
}

/** lunr 2.3.9 (BM25) over pre-tokenized chunks; its stemmer and stop-word filter are off. */
export const lunrAdapter: LexicalAdapter = {
  build(docs: Iterable<LexicalDoc>): LexicalIndex {
    const builder = new lunr.Builder();
    builder.ref('id');
    builder.field('name', { boost: NAME_BOOST });
    builder.field('body');
    builder.pipeline.reset();
    builder.searchPipeline.reset();
    for (const doc of docs) builder.add({ id: String(doc.id), name: doc.name.join(' '), body: doc.body.join(' ') });
    return wrap(builder.build());
  },
  load: (data: Buffer | string) => wrap(lunr.Index.load(JSON.parse(data.toString()) as object)),
};
