import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { syntheticDownloads, weightsIrrelevant } from '../../src/agent/offline-weights.js';
import { mapWeightsOffline, type CompletedSnippet } from '../../src/agent/tier0.js';
import { readReport } from '../../src/symptoms/index.js';

// Issue 40 item 5: pretrained weights and downloaded datasets are replaced when the report's symptom is structural.

const snippetOf = (script: string): CompletedSnippet => ({
  script,
  candidates: [{ script } as CompletedSnippet['candidates'][number]],
  edits: [],
  unresolved: [],
  missing: [],
  static: { findings: [] } as unknown as CompletedSnippet['static'],
  analysisMs: 0,
});

const TIMM_LR = [
  '# reg_token gets no layer-decay group',
  '```python',
  'import timm',
  'from timm.optim import param_groups_layer_decay',
  "model = timm.create_model('vit_base_patch16_reg4_dinov2', pretrained=True)",
  'for g in param_groups_layer_decay(model, layer_decay=0.75):',
  "    print(g['lr_scale'], g['param_names'][:3])",
  '```',
  'Output:',
  '```',
  "0.0238 ['cls_token', 'pos_embed', 'patch_embed.proj.weight']",
  "1.0 ['reg_token', 'norm.weight', 'norm.bias']",
  '```',
  '`reg_token` matches no group and falls into the last group, giving it lr_scale=1.0 instead of the minimum scale cls_token gets.',
].join('\n');

describe('structural symptoms stated in words (timm, accelerate, kornia)', () => {
  it('a parameter-group printout and names are structural: pretrained=True becomes random init, and the edit says so', () => {
    const report = readReport(TIMM_LR);
    expect(weightsIrrelevant(report.expected)).toBe(true);
    const mapped = mapWeightsOffline(snippetOf(report.codeBlocks[0]?.code ?? ''), report.expected);
    expect(mapped?.script).toContain('pretrained=False');
    expect(mapped?.edits.map((e) => e.detail).join('\n')).toMatch(/loaded no pretrained weights/);
  });

  it('values a model or data decide are never structural, whatever words they also have', () => {
    expect(weightsIrrelevant([{ kind: 'wrong_values', category: 'silent', evidence: 'the loss of group 2 is nan' }])).toBe(false);
    expect(weightsIrrelevant([{ kind: 'wrong_values', category: 'silent', evidence: 'the prediction is far from 110' }])).toBe(false);
    expect(weightsIrrelevant([{ kind: 'wrong_values', category: 'silent', evidence: 'layers 10-14 are mapped to the wrong names' }])).toBe(
      true,
    );
  });
});

describe('downloaded datasets as synthetic data of the same shapes (keras, torchvision)', () => {
  it('keras: mnist/cifar10 load_data() give random arrays of the real shapes and dtypes, and weights="imagenet" none', () => {
    const code = [
      'import keras',
      'from keras.datasets import mnist',
      '(x_train, y_train), (x_test, y_test) = mnist.load_data()',
      '(c_train, cy_train), _ = keras.datasets.cifar10.load_data()',
      'print(x_train.shape, x_train.dtype, y_test.shape, c_train.shape, cy_train.shape)',
    ].join('\n');
    const out = syntheticDownloads(code);
    expect(out).not.toBeNull();
    expect(out).not.toMatch(/load_data\(\)/);
    // The replaced lines run with numpy alone (the imports of keras are left out here: they are not the replacement).
    const runnable = (out ?? '').split('\n').slice(2).join('\n');
    expect(execFileSync('/usr/bin/python3', ['-c', runnable], { encoding: 'utf8' }).trim()).toBe(
      '(60000, 28, 28) uint8 (10000,) (50000, 32, 32, 3) (50000, 1)',
    );
    const keras = readReport(
      [
        '# ResNet50 rejects 1-channel input',
        '```python',
        'from keras.applications import ResNet50',
        'm = ResNet50(weights="imagenet", input_shape=(64, 64, 1), include_top=False)',
        '```',
        '```',
        'ValueError: The input must have 3 channels; Received `input_shape=(64, 64, 1)`',
        '```',
      ].join('\n'),
    );
    const mapped = mapWeightsOffline(snippetOf(keras.codeBlocks[0]?.code ?? ''), keras.expected);
    expect(mapped?.script).toContain('weights=None');
  });

  it('torchvision: MNIST(..., download=True) becomes FakeData of the same size, image shape and classes; not for value symptoms', () => {
    const code = "train = torchvision.datasets.MNIST('data', train=True, download=True, transform=t)";
    expect(syntheticDownloads(code)).toContain('FakeData(size=60000 if train else 10000, image_size=(1, 28, 28), num_classes=10');
    const structural = mapWeightsOffline(snippetOf(code), [{ kind: 'shape_mismatch', category: 'crash', evidence: 'RuntimeError' }]);
    expect(structural?.edits.map((e) => e.detail).join('\n')).toMatch(/random data of the same shapes/);
    expect(
      mapWeightsOffline(snippetOf(code), [{ kind: 'accuracy_stuck', category: 'silent', evidence: 'accuracy stuck at 10%' }]),
    ).toBeNull();
  });
});
