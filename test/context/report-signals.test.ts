import { describe, expect, it } from 'vitest';
import { extractReportSignals } from '../../src/context/report-signals.js';
import { tokenize } from '../../src/context/tokenize.js';

describe('tokenize', () => {
  it('splits code identifiers and keeps the whole names', () => {
    expect(tokenize('torch.nn.functional.cross_entropy')).toEqual([
      'torch.nn.functional.cross_entropy',
      'torch',
      'nn',
      'functional',
      'cross_entropy',
      'cross',
      'entropy',
    ]);
    expect(tokenize('GroupNormalization ResNet50')).toEqual([
      'groupnormalization',
      'group',
      'normalization',
      'resnet50',
      'res',
      'net',
      '50',
    ]);
    expect(tokenize('self._create_hrnet(x)')).toEqual(['_create_hrnet', 'create', 'hrnet']);
    expect(tokenize('RuntimeError: selected index k out of range')).toEqual([
      'runtimeerror',
      'runtime',
      'error',
      'selected',
      'index',
      'out',
      'range',
    ]);
  });
});

describe('extractReportSignals', () => {
  it('reads traceback frames innermost first, exceptions, identifiers and error phrases', () => {
    const s = extractReportSignals({
      title: 'apply_rot_embed_cat breaks with `timm.layers.RotaryEmbeddingCat`',
      body: [
        'Traceback (most recent call last):',
        '  File "train.py", line 764, in validate',
        '    acc1, acc5 = accuracy(output, target, topk=(1, 5))',
        '  File "/content/timm/utils/metrics.py", line 29, in accuracy',
        "ValueError: Expected input batch_size (4) to match target batch_size (8) for 'loss'.",
        'My training loss diverges.',
      ].join('\n'),
    });
    expect(s.frames).toEqual([
      { file: 'train.py', line: 764, func: 'validate', depth: 1 },
      { file: '/content/timm/utils/metrics.py', line: 29, func: 'accuracy', depth: 0 },
    ]);
    expect(s.exceptions).toEqual([
      { type: 'ValueError', message: "Expected input batch_size (4) to match target batch_size (8) for 'loss'." },
    ]);
    // Values (sizes, quoted names) vary between runs; the literal words around them are what the code raises.
    expect(s.errorPhrases).toEqual(['Expected input batch_size', 'to match target batch_size']);
    expect(s.identifiers).toEqual(
      expect.arrayContaining(['apply_rot_embed_cat', 'timm.layers.RotaryEmbeddingCat', 'RotaryEmbeddingCat', 'accuracy']),
    );
    expect(s.identifiers).not.toContain('train.py');
    expect(s.query).not.toContain('File "train.py"');
    expect(s.aboutTraining).toBe(true);
  });

  it('reads frames whose head the reporter cut off', () => {
    const s = extractReportSignals({
      body: '.../site-packages/keras/src/backend/common/name_scope.py", line 61, in __exit__\n    stack.pop()\nIndexError: pop from empty list',
    });
    expect(s.frames).toEqual([{ file: '.../site-packages/keras/src/backend/common/name_scope.py', line: 61, func: '__exit__', depth: 0 }]);
    expect(s.exceptions).toEqual([{ type: 'IndexError', message: 'pop from empty list' }]);
  });
});
