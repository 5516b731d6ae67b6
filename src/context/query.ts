// The query side of the context builder: which report terms to search, which chunks can hold an error phrase,
// and the re-rankings after retrieval (training loops, the cross-encoder). Pure but for the encoder's call.
import type { RepoIndex } from './index/build-index.js';
import type { CrossEncoder } from './embedder.js';
import { weightedTerms } from './lexical-index.js';
import type { Candidate } from './rank.js';
import type { ReportSignals } from './report-signals.js';
import { tokenize } from './tokenize.js';
import type { FoundLoop } from './training-loops.js';

/** Unique query terms kept: a report with a long log would otherwise query thousands. */
const MAX_QUERY_TERMS = 64;
/** Terms in more than this share of chunks say little (BM25 weighs them near zero) and cost the most to score. */
const MAX_TERM_SHARE = 0.25;
/** Candidates the cross-encoder re-scores (it is the slow part of a query). */
const CROSS_ENCODER_POOL = 30;

/**
 * Picks the query terms: without document frequencies, the most repeated; with them, the most informative
 * (idf × damped count), dropping terms the repository does not have or has everywhere.
 */
export function queryTerms(tokens: string[], index: RepoIndex): Array<[string, number]> {
  const counts = [...weightedTerms(tokens)];
  const df = index.lexical.documentFrequency?.bind(index.lexical);
  if (!df) return counts.sort((a, b) => b[1] - a[1]).slice(0, MAX_QUERY_TERMS * 3);
  const n = index.chunks.length;
  const scored = counts
    .map(([term, count]) => ({ term, count, df: df(term) }))
    .filter((t) => t.df > 0 && t.df <= Math.max(1, MAX_TERM_SHARE * n))
    .map((t) => ({ ...t, value: Math.log(n / t.df) * (1 + Math.log(t.count)) }));
  scored.sort((a, b) => b.value - a.value);
  return scored.slice(0, MAX_QUERY_TERMS).map((t) => [t.term, t.count]);
}

/**
 * Chunks that can hold an error phrase: those with the phrase's rarest word. Scanning every chunk's text for
 * every phrase would cost tens of milliseconds per query on a large repository; the postings make it a lookup.
 */
export function phraseCandidates(phrases: string[], index: RepoIndex): Set<number> | undefined {
  const df = index.lexical.documentFrequency?.bind(index.lexical);
  if (!df || !phrases.length) return undefined;
  const scope = new Set<number>();
  for (const phrase of phrases) {
    const words = tokenize(phrase).filter((w) => df(w) > 0);
    // A word the index lacks means no chunk holds the phrase.
    if (words.length < tokenize(phrase).length) continue;
    const rarest = words.sort((a, b) => df(a) - df(b))[0];
    if (!rarest) continue;
    for (const hit of index.lexical.search([rarest], index.chunks.length)) scope.add(hit.id);
  }
  return scope;
}

/** Orders the training loops for this report: ones already ranked first, then training over evaluation. */
export function rankLoops(loops: FoundLoop[], ranked: Candidate[], signals: ReportSignals): FoundLoop[] {
  const score = new Map(ranked.map((c) => [c.id, c.score]));
  const value = (l: FoundLoop): number =>
    (score.get(l.chunkId) ?? 0) +
    (l.phase === 'train' ? 0.2 : signals.aboutTraining ? 0 : 0.1) +
    (/(^|\/)train[^/]*\.py$/.test(l.path) ? 0.1 : 0) -
    (/(^|\/)tests?\//.test(l.path) ? 0.5 : 0);
  return [...loops].sort((a, b) => value(b) - value(a) || a.chunkId - b.chunkId);
}

export async function crossRerank(ranked: Candidate[], index: RepoIndex, query: string, encoder: CrossEncoder): Promise<Candidate[]> {
  const pool = ranked.slice(0, CROSS_ENCODER_POOL);
  const scores = await encoder.score(
    query.slice(0, 2000),
    pool.map((c) => {
      const chunk = index.chunks[c.id]!;
      return `${chunk.path} ${chunk.symbol ?? ''}\n${chunk.text}`.slice(0, 2000);
    }),
  );
  // Standardized cross-encoder scores move a candidate by about one retrieval rank per standard deviation;
  // the report's hard signals (tracebacks) still dominate.
  const mean = scores.reduce((a, b) => a + b, 0) / (scores.length || 1);
  const sd = Math.sqrt(scores.reduce((a, b) => a + (b - mean) ** 2, 0) / (scores.length || 1)) || 1;
  const rescored = pool.map((c, i) => ({
    ...c,
    score: c.score + (0.5 * (scores[i]! - mean)) / sd,
    reasons: [...c.reasons, `cross-encoder ${scores[i]!.toFixed(2)}`],
  }));
  return [...rescored.sort((a, b) => b.score - a.score), ...ranked.slice(CROSS_ENCODER_POOL)];
}
