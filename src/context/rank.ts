import type { Chunk } from './chunk-types.js';
import type { RepoGraph } from './deps.js';
import type { ReportSignals, TraceFrame } from './report-signals.js';

/** Reciprocal rank fusion constant (Cormack et al. use 60): flattens the head so neither leg dominates. */
const RRF_K = 60;
/** RRF scores are scaled so that rank 1 in one leg is worth 0.5, rank 1 in both about 1. */
const RRF_SCALE = RRF_K / 2;

/**
 * Signal weights, in units of "rank 1 in one retrieval leg" = 0.5. Hard evidence from the report (a traceback
 * frame inside the chunk) outweighs any retrieval rank; softer evidence (a name quoted in the report) is about
 * one good rank.
 */
export const WEIGHTS = {
  frameLine: 3,
  frameFunc: 2,
  frameFile: 0.4,
  /** Each frame further from the raise counts this much less (multiplied per level). */
  frameDecay: 0.75,
  symbolQuoted: 1,
  callQuoted: 0.1,
  callQuotedMax: 0.4,
  errorPhrase: 1.5,
  /** A call of a name the error message quotes, when few chunks make that call. */
  errorNameCall: 0.8,
  errorNameMaxCallers: 20,
} as const;

/**
 * The feature-based re-ranker, used when no cross-encoder is configured. Each feature is a small prior on top
 * of the fused score: definitions beat module glue and text windows; test code and huge chunks are rarely
 * where a reported bug lives; training loops matter when the report is about training.
 */
export const RERANK = {
  kind: { function: 0.1, method: 0.1, class: 0.05, module: 0, text: -0.15 } as Record<Chunk['kind'], number>,
  testPath: -0.35,
  exampleOrDocPath: -0.1,
  hugeChunkLines: 300,
  hugeChunk: -0.1,
  trainingLoop: 0.3,
} as const;

export interface Candidate {
  id: number;
  score: number;
  reasons: string[];
}

export interface RankInput {
  graph: RepoGraph;
  signals: ReportSignals;
  lexical: Array<{ id: number; score: number }>;
  semantic: Array<{ id: number; score: number }>;
  /** Chunk ids of training loops (for the re-ranker's feature). */
  trainingLoopIds: Set<number>;
  /** Chunks worth searching for error phrases (those holding a phrase's rarest word); all when absent. */
  phraseScope?: Iterable<number>;
}

/** Repository files a frame may name: the longest path suffix that matches wins (site-packages, /content/…). */
export function matchFramePath(frameFile: string, paths: Iterable<string>): string | null {
  let best: string | null = null;
  for (const p of paths) {
    if ((frameFile === p || frameFile.endsWith(`/${p}`)) && (!best || p.length > best.length)) best = p;
  }
  return best;
}

function isTestPath(path: string): boolean {
  return /(^|\/)(tests?|testing)\//.test(path) || /(^|\/)(test_[^/]*|[^/]*_test)\.py$/.test(path) || /conftest\.py$/.test(path);
}

/** Fuses the two legs (RRF), adds the report's hard signals and re-ranks by features. Pure. */
export function rankCandidates(input: RankInput): Candidate[] {
  const { graph, signals } = input;
  const byId = new Map<number, Candidate>();
  const get = (id: number): Candidate => {
    let c = byId.get(id);
    if (!c) byId.set(id, (c = { id, score: 0, reasons: [] }));
    return c;
  };
  for (const [i, hit] of input.lexical.entries()) {
    const c = get(hit.id);
    c.score += RRF_SCALE / (RRF_K + i + 1);
    if (i < 20) c.reasons.push(`bm25 rank ${i + 1}`);
  }
  for (const [i, hit] of input.semantic.entries()) {
    const c = get(hit.id);
    c.score += RRF_SCALE / (RRF_K + i + 1);
    if (i < 20) c.reasons.push(`semantic rank ${i + 1} (cosine ${hit.score.toFixed(2)})`);
  }
  applyFrames(graph, signals.frames, get);
  applyIdentifiers(graph, signals.identifiers, get, byId);
  applyErrorPhrases(graph, signals.errorPhrases, get, input.phraseScope);
  applyErrorNames(graph, signals.errorNames, get);
  for (const c of byId.values()) {
    const chunk = graph.chunks[c.id]!;
    c.score += RERANK.kind[chunk.kind];
    const framed = c.reasons.some((r) => r.startsWith('traceback'));
    if (isTestPath(chunk.path) && !framed) c.score += RERANK.testPath;
    else if (/(^|\/)(examples?|docs?|benchmarks?)\//.test(chunk.path) && !framed) c.score += RERANK.exampleOrDocPath;
    if (chunk.endLine - chunk.startLine > RERANK.hugeChunkLines) c.score += RERANK.hugeChunk;
    if (signals.aboutTraining && input.trainingLoopIds.has(c.id)) {
      c.score += RERANK.trainingLoop;
      c.reasons.push('training loop (report is about training)');
    }
  }
  return [...byId.values()].filter((c) => c.score > 0).sort((a, b) => b.score - a.score || a.id - b.id);
}

function applyFrames(graph: RepoGraph, frames: TraceFrame[], get: (id: number) => Candidate): void {
  const paths = [...graph.filesByPath.keys()];
  for (const frame of frames) {
    const path = matchFramePath(frame.file, paths);
    if (!path) continue;
    const file = graph.filesByPath.get(path)!;
    const decay = WEIGHTS.frameDecay ** frame.depth;
    const where = `${path}:${frame.line}${frame.func ? ` in ${frame.func}` : ''}`;
    for (const id of file.chunkIds) {
      const chunk = graph.chunks[id]!;
      const inSpan = frame.line >= chunk.startLine && frame.line <= chunk.endLine;
      const name = chunk.symbol?.split('.').pop();
      const sameFunc = !!frame.func && name === frame.func;
      const c = inSpan || sameFunc ? get(id) : null;
      if (inSpan && (sameFunc || !frame.func || chunk.kind === 'module' || chunk.kind === 'text')) {
        c!.score += WEIGHTS.frameLine * decay;
        c!.reasons.push(`traceback frame ${where}`);
      } else if (sameFunc) {
        // Line numbers drift between the reporter's version and this checkout; the function name does not.
        c!.score += WEIGHTS.frameFunc * decay;
        c!.reasons.push(`traceback function ${where}`);
      } else if (inSpan) {
        c!.score += WEIGHTS.frameFile * decay;
        c!.reasons.push(`traceback line ${where}`);
      }
    }
  }
}

function applyIdentifiers(graph: RepoGraph, identifiers: string[], get: (id: number) => Candidate, byId: Map<number, Candidate>): void {
  if (!identifiers.length) return;
  const wanted = new Map<string, string>();
  for (const ident of identifiers) {
    const last = ident.split('.').pop()!;
    if (last.length > 2) wanted.set(last, ident);
  }
  const named = new Set<number>();
  for (const [part, quoted] of wanted) {
    // __init__ and friends name nothing in particular.
    if (part.startsWith('__')) continue;
    for (const id of graph.bySymbolPart.get(part) ?? []) {
      if (named.has(id)) continue;
      named.add(id);
      const c = get(id);
      c.score += WEIGHTS.symbolQuoted;
      c.reasons.push(`report names ${quoted}`);
    }
  }
  // Calls of quoted APIs only nudge chunks already retrieved: on their own they would pull in every caller.
  for (const c of byId.values()) {
    const chunk = graph.chunks[c.id]!;
    const hits = chunk.calls.filter((call) => wanted.has(call.split('.').pop()!));
    if (!hits.length) continue;
    c.score += Math.min(WEIGHTS.callQuotedMax, WEIGHTS.callQuoted * hits.length);
    c.reasons.push(`calls ${hits.slice(0, 3).join(', ')} named in the report`);
  }
}

function applyErrorNames(graph: RepoGraph, names: string[], get: (id: number) => Candidate): void {
  for (const name of names) {
    const callers = graph.byCallName.get(name) ?? [];
    // A name called everywhere ("pop", "get") points nowhere in particular.
    if (!callers.length || callers.length > WEIGHTS.errorNameMaxCallers) continue;
    for (const id of callers) {
      const c = get(id);
      c.score += WEIGHTS.errorNameCall;
      c.reasons.push(`calls ${name}, which the error message names`);
    }
  }
}

function applyErrorPhrases(graph: RepoGraph, phrases: string[], get: (id: number) => Candidate, scope?: Iterable<number>): void {
  if (!phrases.length) return;
  for (const id of scope ?? graph.chunks.map((c) => c.id)) {
    const chunk = graph.chunks[id]!;
    const found = phrases.find((p) => chunk.text.includes(p));
    if (!found) continue;
    const c = get(chunk.id);
    c.score += WEIGHTS.errorPhrase;
    c.reasons.push(`error text "${found}" is in this code`);
  }
}
