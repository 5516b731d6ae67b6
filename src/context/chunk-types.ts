import type { ChunkKind } from './types.js';

/** What one import statement binds: `from .x import y as z` binds "z" to module ".x", name "y". */
export interface ImportRef {
  module: string;
  name?: string;
}

/** One indexed piece of a file. Plain data: the disk cache stores it by column (cache-layout.ts) and a reload makes it again. */
export interface Chunk {
  id: number;
  path: string;
  startLine: number;
  endLine: number;
  kind: ChunkKind;
  /** Qualified name: "fn", "Class", "Class.method"; absent for module blocks and text. */
  symbol?: string;
  text: string;
  /** Call targets as written ("loss.backward", "F.relu", "helper"). */
  calls: string[];
  /** Whether a for/while loop starts inside the chunk. */
  hasLoop: boolean;
}

/** Per-file facts the dependency closure and the training-loop finder need. */
export interface FileInfo {
  path: string;
  /** Dotted module name derived from the path ("timm/utils/metrics.py" → "timm.utils.metrics"). */
  module: string;
  /** Local name → what it refers to. */
  imports: Record<string, ImportRef>;
  /** Top-level module names the file imports ("torch", "tensorflow", "keras", "lightning", …). */
  importRoots: string[];
  /** Top-level defined name → chunk id (functions, classes) and "Class.method" → chunk id. */
  defs: Record<string, number>;
  /** Ids of the file's chunks in line order. */
  chunkIds: number[];
  /** Names bound to optimizer objects in this file (`opt = torch.optim.Adam(…)`). */
  optimizerNames: string[];
  parsed: boolean;
}

export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}
