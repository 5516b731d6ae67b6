import { z } from 'zod';

export const ChunkKind = z.enum(['function', 'method', 'class', 'module', 'text']);
export type ChunkKind = z.infer<typeof ChunkKind>;

export const ContextChunk = z.object({
  path: z.string(),
  startLine: z.number().int().min(1),
  endLine: z.number().int().min(1),
  kind: ChunkKind,
  symbol: z.string().optional(),
  score: z.number(),
  /** Which signals put this chunk here ("traceback frame timm/utils/metrics.py:23", "bm25 rank 2", "dependency of …"). */
  reasons: z.array(z.string()),
  text: z.string(),
});
export type ContextChunk = z.infer<typeof ContextChunk>;

export const ContextBundle = z.object({ rank: z.number().int().min(1), chunks: z.array(ContextChunk), tokens: z.number().int().min(0) });
export type ContextBundle = z.infer<typeof ContextBundle>;

export const TrainingLoop = z.object({
  path: z.string(),
  startLine: z.number().int(),
  endLine: z.number().int(),
  framework: z.enum(['pytorch', 'keras', 'tensorflow', 'lightning', 'huggingface']),
  symbol: z.string().optional(),
  /** Added: whether the loop trains or evaluates. */
  phase: z.enum(['train', 'eval']).optional(),
});
export type TrainingLoop = z.infer<typeof TrainingLoop>;

export const ContextResult = z.object({
  bundles: z.array(ContextBundle),
  trainingLoops: z.array(TrainingLoop),
  /** The embedding model's name, or "off: <why>" when the semantic leg did not run. */
  semantic: z.string(),
  timings: z.record(z.string(), z.number()),
  /** Added: where the index came from on this call ("built", or a cache hit from "memory" or "disk"). */
  cache: z.enum(['memory', 'disk', 'built']).optional(),
});
export type ContextResult = z.infer<typeof ContextResult>;
