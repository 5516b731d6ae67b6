import { existsSync } from 'node:fs';
import { basename, dirname, isAbsolute, resolve } from 'node:path';
import { SetupError } from '../errors.js';
import type { CrossEncoder, Embedder } from './embedder.js';

export interface TransformersModelOptions {
  /** A model folder: absolute, or relative to `modelDir`. */
  model: string;
  /** transformers.js `env.localModelPath` for relative names. @defaultValue "models" */
  modelDir?: string;
  /** Longest input in model tokens; longer text is truncated. @defaultValue 256 */
  maxTokens?: number;
}

type Transformers = typeof import('@huggingface/transformers');

/**
 * Points transformers.js at a local folder with the hub switched off. `env` is process-global in
 * transformers.js; every load sets it again, so two models in different folders still load correctly.
 */
async function localModel(opts: TransformersModelOptions): Promise<{ hf: Transformers; id: string }> {
  const path = isAbsolute(opts.model) ? opts.model : resolve(opts.modelDir ?? 'models', opts.model);
  if (!existsSync(path)) throw new SetupError(`model folder ${path} does not exist`);
  if (!existsSync(resolve(path, 'onnx', 'model.onnx'))) throw new SetupError(`model folder ${path} has no onnx/model.onnx`);
  const hf = await import('@huggingface/transformers');
  hf.env.allowRemoteModels = false;
  hf.env.allowLocalModels = true;
  hf.env.localModelPath = dirname(path);
  return { hf, id: basename(path) };
}

function why(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).split('\n')[0]!.slice(0, 200);
}

/** A feature-extraction model, mean-pooled and normalized, run in-process by onnxruntime. */
export async function createTransformersEmbedder(opts: TransformersModelOptions): Promise<Embedder> {
  const { hf, id } = await localModel(opts);
  let extractor;
  try {
    extractor = await hf.pipeline('feature-extraction', id, { local_files_only: true, dtype: 'fp32' });
  } catch (err) {
    throw new SetupError(`embedding model ${opts.model} did not load: ${why(err)}`);
  }
  const maxTokens = opts.maxTokens ?? 256;
  return {
    name: opts.model,
    async embed(texts: string[]): Promise<Float32Array[]> {
      if (!texts.length) return [];
      // The pipeline does not truncate by itself; the tokenizer call does, so tokenize first.
      const inputs = extractor.tokenizer(texts, { padding: true, truncation: true, max_length: maxTokens });
      const out = await extractor.model(inputs);
      const hidden = (out.last_hidden_state ?? out.logits) as InstanceType<Transformers['Tensor']>;
      const pooled = hf.mean_pooling(hidden, inputs.attention_mask).normalize(2, -1);
      const [rows, dim] = pooled.dims as [number, number];
      const data = pooled.data as Float32Array;
      return Array.from({ length: rows }, (_, r) => data.slice(r * dim, (r + 1) * dim));
    },
  };
}

/** A sequence-classification model over (query, passage) pairs; the first logit is the score. */
export async function createTransformersCrossEncoder(opts: TransformersModelOptions): Promise<CrossEncoder> {
  const { hf, id } = await localModel(opts);
  let tokenizer;
  let model;
  try {
    tokenizer = await hf.AutoTokenizer.from_pretrained(id, { local_files_only: true });
    model = await hf.AutoModelForSequenceClassification.from_pretrained(id, { local_files_only: true, dtype: 'fp32' });
  } catch (err) {
    throw new SetupError(`cross-encoder ${opts.model} did not load: ${why(err)}`);
  }
  const maxTokens = opts.maxTokens ?? 256;
  return {
    name: opts.model,
    async score(query: string, passages: string[]): Promise<number[]> {
      if (!passages.length) return [];
      const inputs = tokenizer(
        passages.map(() => query),
        {
          text_pair: passages,
          padding: true,
          truncation: true,
          max_length: maxTokens,
        },
      );
      const { logits } = await model(inputs);
      const [rows, labels] = logits.dims as [number, number];
      const data = logits.data as Float32Array;
      return Array.from({ length: rows }, (_, r) => data[r * labels]!);
    },
  };
}
