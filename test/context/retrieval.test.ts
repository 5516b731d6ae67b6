import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { buildContext } from '../../src/context/index.js';
import { IndexLru } from '../../src/context/index/cache.js';
import { ContextResult } from '../../src/context/types.js';

const REPO = fileURLToPath(new URL('../../fixtures/repos/vision-classifier', import.meta.url));
const MODELS = fileURLToPath(new URL('../../fixtures/models', import.meta.url));
const memory = new IndexLru(4);
const lexicalOnly = { embedder: null, crossEncoder: null, cacheDir: 'off', memory, env: {} } as const;

/** The primary (first) chunk of each bundle, as "path::symbol". */
function primaries(result: ContextResult): string[] {
  return result.bundles.map((b) => `${b.chunks[0]!.path}::${b.chunks[0]!.symbol ?? b.chunks[0]!.kind}`);
}

const TRACEBACK_REPORT = {
  title: 'Validation crashes when the dataset has two classes',
  body: [
    'Training a binary classifier, the first validation fails:',
    '```',
    'Traceback (most recent call last):',
    '  File "/home/me/vision-classifier/train.py", line 63, in main',
    '    top1, top5 = validate(model, loader_eval, loss_fn)',
    '  File "/home/me/vision-classifier/train.py", line 32, in validate',
    '    acc1, acc5 = accuracy(output, target, topk=(1, 5))',
    '  File "/usr/lib/python3/site-packages/vision/utils/metrics.py", line 26, in accuracy',
    '    _, pred = output.topk(maxk, 1, True, True)',
    'RuntimeError: selected index k out of range',
    '```',
  ].join('\n'),
};

const API_REPORT = {
  title: '`GroupNorm` accepts `num_groups` that does not divide `num_channels`',
  body: 'Constructing `vision.layers.norm.GroupNorm(3, 64)` succeeds, and `F.group_norm` fails later in forward.',
};

const PROSE_REPORT = {
  title: 'Loss becomes NaN with label smoothing',
  body:
    'When I train with label smoothing and a batch happens to contain only ignored targets (every label is ' +
    'the ignore index), the smoothed cross entropy returns NaN and training never recovers.',
};

/** Words the code never uses: only meaning connects "rescale pictures" to resize_image. */
const SYNONYM_REPORT = { title: 'Wrong dimensions', body: 'When I rescale pictures the dimensions are wrong.' };

describe('buildContext on a DL-shaped fixture repository', () => {
  it('puts the raising function first for a report with a traceback, with the frame as the reason', async () => {
    const result = await buildContext({ repoDir: REPO, report: TRACEBACK_REPORT, top: 3 }, lexicalOnly);
    expect(primaries(result).slice(0, 3)).toContain('vision/utils/metrics.py::accuracy');
    const top = result.bundles[0]!.chunks[0]!;
    expect(top.symbol).toBe('accuracy');
    expect(top.reasons.some((r) => r.startsWith('traceback frame vision/utils/metrics.py:26'))).toBe(true);
    expect(result.semantic).toBe('off: disabled by the caller');
    // The contract the agent codes against.
    expect(ContextResult.parse(result)).toEqual(result);
  });

  it('finds the buggy method in the top 3 for a report with only API names', async () => {
    const result = await buildContext({ repoDir: REPO, report: API_REPORT, top: 3 }, lexicalOnly);
    expect(primaries(result)).toContain('vision/layers/norm.py::GroupNorm.__init__');
  });

  it('finds the buggy method in the top 3 for a prose-only report', async () => {
    const result = await buildContext({ repoDir: REPO, report: PROSE_REPORT, top: 3 }, lexicalOnly);
    expect(primaries(result)).toContain('vision/losses.py::LabelSmoothingCrossEntropy.forward');
  });

  it('finds code that raises the reported error message', async () => {
    const report = { body: 'Building the model fails with\n\nValueError: num_channels must be divisible by num_groups (got 64 and 3)' };
    const result = await buildContext({ repoDir: REPO, report, top: 3 }, lexicalOnly);
    const top = result.bundles[0]!.chunks[0]!;
    expect(top.symbol).toBe('GroupNorm.__init__');
    expect(top.reasons).toContain('error text "num_channels must be divisible by num_groups" is in this code');
  });

  it('finds the call that an error message names', async () => {
    const report = {
      title: 'Export to CoreML fails',
      body: "RuntimeError: PyTorch convert function for op 'tensor_split' not implemented.",
    };
    const result = await buildContext({ repoDir: REPO, report, top: 3 }, lexicalOnly);
    const hit = result.bundles.map((b) => b.chunks[0]!).find((c) => c.symbol === 'apply_rotary_embedding');
    expect(hit?.reasons).toContain('calls tensor_split, which the error message names');
  });

  it('bundles carry the dependency closure and the training loop within the token budget', async () => {
    const result = await buildContext({ repoDir: REPO, report: TRACEBACK_REPORT, top: 5, tokenBudget: 1500 }, lexicalOnly);
    for (const b of result.bundles) expect(b.tokens).toBeLessThanOrEqual(1500);
    const validate = result.bundles.find((b) => b.chunks[0]!.symbol === 'validate')!;
    const reasons = validate.chunks.flatMap((c) => c.reasons);
    expect(reasons).toContain('imports of train.py');
    expect(validate.chunks.some((c) => c.symbol === 'accuracy' && c.reasons.includes('called by validate'))).toBe(true);
    expect(validate.chunks.some((c) => c.symbol === 'AverageMeter.__init__')).toBe(true);
    const first = result.bundles[0]!;
    expect(first.chunks.some((c) => c.reasons.some((r) => r.startsWith('training loop (pytorch)')))).toBe(true);
    expect(result.trainingLoops.map((l) => `${l.symbol}:${l.phase}`)).toEqual(
      expect.arrayContaining(['train_one_epoch:train', 'validate:eval']),
    );
    // StepScheduler.step and warmup_schedule loop over .step() of a scheduler: not training loops.
    expect(result.trainingLoops.map((l) => l.symbol)).not.toContain('warmup_schedule');
  });

  it('the semantic leg (a real ONNX model through transformers.js) finds code that shares only meaning with the report', async () => {
    const lexical = await buildContext({ repoDir: REPO, report: SYNONYM_REPORT, top: 3 }, lexicalOnly);
    expect(primaries(lexical)).not.toContain('vision/data/transforms.py::resize_image');
    const env = { REPGEN_EMBED_MODEL: 'tiny-embed', REPGEN_MODEL_DIR: MODELS };
    const result = await buildContext({ repoDir: REPO, report: SYNONYM_REPORT, top: 3 }, { cacheDir: 'off', memory, env });
    expect(result.semantic).toBe('tiny-embed');
    expect(primaries(result)).toContain('vision/data/transforms.py::resize_image');
    const chunk = result.bundles.flatMap((b) => b.chunks).find((c) => c.symbol === 'resize_image')!;
    expect(chunk.reasons.some((r) => r.startsWith('semantic rank'))).toBe(true);
    expect(result.timings.embedMs).toBeGreaterThan(0);
  });

  it('says why the semantic leg is off when the model cannot load, and still answers lexically', async () => {
    const env = { REPGEN_EMBED_MODEL: 'no-such-model', REPGEN_MODEL_DIR: MODELS };
    const result = await buildContext({ repoDir: REPO, report: TRACEBACK_REPORT, top: 3 }, { cacheDir: 'off', memory, env });
    expect(result.semantic).toMatch(/^off: model folder .*no-such-model does not exist$/);
    expect(result.bundles[0]!.chunks[0]!.symbol).toBe('accuracy');
    const unset = await buildContext({ repoDir: REPO, report: TRACEBACK_REPORT, top: 1 }, { cacheDir: 'off', memory, env: {} });
    expect(unset.semantic).toBe('off: no embedding model configured (REPGEN_EMBED_MODEL)');
  });

  it('re-ranks with a configured cross-encoder and says so in the reasons', async () => {
    const env = { REPGEN_RERANK_MODEL: 'tiny-rerank', REPGEN_MODEL_DIR: MODELS };
    const result = await buildContext({ repoDir: REPO, report: PROSE_REPORT, top: 3 }, { embedder: null, cacheDir: 'off', memory, env });
    expect(result.bundles[0]!.chunks[0]!.reasons.some((r) => r.startsWith('cross-encoder '))).toBe(true);
    expect(result.timings.crossEncoderMs).toBeGreaterThan(0);
    expect(primaries(result)).toContain('vision/losses.py::LabelSmoothingCrossEntropy.forward');
  });
});
