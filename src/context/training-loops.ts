import type { Chunk, FileInfo } from './chunk-types.js';
import type { TrainingLoop } from './types.js';

export interface FoundLoop extends TrainingLoop {
  chunkId: number;
}

const OPTIMIZER_NAME = /^(?:optim|optimizer|optimiser|opt)(?:_\w+)?$|_(?:optim|optimizer|opt)$/i;

function receiver(call: string): string {
  const parts = call.split('.');
  return parts.length > 1 ? parts[parts.length - 2]! : '';
}

function hasCall(chunk: Chunk, tail: string): boolean {
  return chunk.calls.some((c) => c === tail || c.endsWith(`.${tail}`));
}

/**
 * `x.step()` is an optimizer step only when x is named or built as an optimizer: a scheduler, an environment
 * or a progress bar also has `.step()`, and counting those would call every RL loop a training loop.
 */
function optimizerStep(chunk: Chunk, info: FileInfo): boolean {
  return chunk.calls.some((c) => {
    if (!c.endsWith('.step')) return false;
    const name = receiver(c);
    return OPTIMIZER_NAME.test(name) || info.optimizerNames.includes(name);
  });
}

const PHASE_EVAL = /(?:^|\.)(?:eval\w*|valid\w*|test\w*|predict\w*|infer\w*)$/i;

function imports(info: FileInfo, ...roots: string[]): boolean {
  return info.importRoots.some((r) => roots.includes(r));
}

/** Classifies one chunk; null when it is not a training or evaluation loop. */
export function classifyLoop(chunk: Chunk, info: FileInfo): FoundLoop | null {
  if (chunk.kind === 'class' || chunk.kind === 'text') return null;
  const base = { path: chunk.path, startLine: chunk.startLine, endLine: chunk.endLine, chunkId: chunk.id };
  const symbol = chunk.symbol ? { symbol: chunk.symbol } : {};
  const method = chunk.symbol?.split('.').pop() ?? '';
  const found = (framework: TrainingLoop['framework'], phase: 'train' | 'eval'): FoundLoop => ({ ...base, ...symbol, framework, phase });

  if (chunk.kind === 'method' && /^(training_step|validation_step|test_step)$/.test(method) && !imports(info, 'tensorflow', 'keras')) {
    return found('lightning', method === 'training_step' ? 'train' : 'eval');
  }
  if (chunk.kind === 'method' && /^(train_step|test_step)$/.test(method) && imports(info, 'tensorflow', 'keras')) {
    return found('keras', method === 'train_step' ? 'train' : 'eval');
  }
  if (hasCall(chunk, 'GradientTape')) return found('tensorflow', 'train');
  if (imports(info, 'transformers') && chunk.calls.some((c) => /(?:^|\.)\w*Trainer$/.test(c) || /trainer\.train$/i.test(c))) {
    return found('huggingface', 'train');
  }
  if (imports(info, 'tensorflow', 'keras', 'tf_keras') && chunk.calls.some((c) => /\.(fit|fit_generator|train_on_batch)$/.test(c))) {
    return found('keras', 'train');
  }
  if (imports(info, 'tensorflow', 'keras', 'tf_keras') && chunk.calls.some((c) => /\.evaluate$/.test(c) && /model/i.test(receiver(c)))) {
    return found('keras', 'eval');
  }
  if (!chunk.hasLoop) return null;
  if (hasCall(chunk, 'backward') && (optimizerStep(chunk, info) || hasCall(chunk, 'zero_grad'))) return found('pytorch', 'train');
  // Evaluation: a loop under no_grad/inference_mode that runs a model over a loader, in a torch file.
  if (
    imports(info, 'torch') &&
    chunk.calls.some((c) => /(?:^|\.)(no_grad|inference_mode)$/.test(c)) &&
    (PHASE_EVAL.test(chunk.symbol ?? '') || /\bfor\b[^\n]*\bin\b[^\n]*load/i.test(chunk.text))
  ) {
    return found('pytorch', 'eval');
  }
  return null;
}

export function findTrainingLoops(chunks: Chunk[], files: FileInfo[]): FoundLoop[] {
  const byPath = new Map(files.map((f) => [f.path, f]));
  const loops: FoundLoop[] = [];
  for (const chunk of chunks) {
    const info = byPath.get(chunk.path);
    if (!info) continue;
    const loop = classifyLoop(chunk, info);
    if (loop) loops.push(loop);
  }
  return loops;
}
