import { estimateTokens, type Chunk } from './chunk-types.js';
import { dependencyClosure, type RepoGraph } from './deps.js';
import type { Candidate } from './rank.js';
import type { FoundLoop } from './training-loops.js';
import type { ContextBundle, ContextChunk } from './types.js';

export interface BundleOptions {
  /** Bundles to return. */
  top: number;
  /** Tokens per bundle (about 4 characters each). */
  tokenBudget: number;
  /** Call levels the dependency closure follows. */
  depth: number;
}

function toContextChunk(chunk: Chunk, score: number, reasons: string[], text = chunk.text): ContextChunk {
  const out: ContextChunk = {
    path: chunk.path,
    startLine: chunk.startLine,
    endLine: chunk.endLine,
    kind: chunk.kind,
    score: Math.round(score * 1000) / 1000,
    reasons,
    text,
  };
  if (chunk.symbol) out.symbol = chunk.symbol;
  return out;
}

/**
 * One bundle per top candidate, in rank order: the candidate itself, the training loop most relevant to the
 * report (the paper's strongest signal), then what the candidate needs to run (its file's imports, the
 * helpers it calls), all within the token budget. A candidate already shown inside an earlier bundle's
 * closure still gets its own bundle: the agent retries per bundle, centred on a different suspect each time.
 */
export function makeBundles(graph: RepoGraph, ranked: Candidate[], loops: FoundLoop[], opts: BundleOptions): ContextBundle[] {
  const bundles: ContextBundle[] = [];
  const scoreOf = new Map(ranked.map((c) => [c.id, c.score]));
  const bestLoop = loops[0];
  for (const cand of ranked) {
    if (bundles.length >= opts.top) break;
    const chunk = graph.chunks[cand.id]!;
    const chunks: ContextChunk[] = [];
    let tokens = estimateTokens(chunk.text);
    if (tokens > opts.tokenBudget) {
      const text = chunk.text.slice(0, opts.tokenBudget * 4);
      chunks.push(toContextChunk(chunk, cand.score, [...cand.reasons, 'truncated to the token budget'], text));
      tokens = estimateTokens(text);
    } else chunks.push(toContextChunk(chunk, cand.score, cand.reasons));
    if (bestLoop && bestLoop.chunkId !== chunk.id) {
      const loopChunk = graph.chunks[bestLoop.chunkId]!;
      const cost = estimateTokens(loopChunk.text);
      // The loop may take at most half of what is left, so that the candidate's own dependencies still fit.
      if (cost <= (opts.tokenBudget - tokens) / 2) {
        chunks.push(
          toContextChunk(loopChunk, scoreOf.get(loopChunk.id) ?? 0, [
            `training loop (${bestLoop.framework}), the most relevant to the report`,
          ]),
        );
        tokens += cost;
      }
    }
    const shown = new Set([chunk.id, bestLoop?.chunkId]);
    for (const dep of dependencyClosure(graph, chunk, { depth: opts.depth, tokenBudget: opts.tokenBudget - tokens })) {
      if (shown.has(dep.id)) continue;
      const depChunk = graph.chunks[dep.id]!;
      chunks.push(toContextChunk(depChunk, scoreOf.get(dep.id) ?? 0, [dep.reason]));
      tokens += estimateTokens(depChunk.text);
    }
    bundles.push({ rank: bundles.length + 1, chunks, tokens });
  }
  return bundles;
}
