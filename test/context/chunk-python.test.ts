import { describe, expect, it } from 'vitest';
import { chunkFile, optimizerNamesIn, parseImport } from '../../src/context/chunk-python.js';
import { loadPythonParser } from '../../src/context/python-parser.js';

const SOURCE = `import torch
from torch import nn
import torch.nn.functional as F
from ..utils.metrics import accuracy as acc, AverageMeter

SCALE = 2


@torch.no_grad()
def evaluate(model, loader):
    for x, y in loader:
        acc(model(x), y)


class Head(nn.Module):
    """A linear head."""
    bias = True

    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, 10)

    @property
    def width(self):
        return self.fc.out_features

    def forward(self, x):
        return F.relu(self.fc(x)) * SCALE


if __name__ == '__main__':
    evaluate(Head(4), [])
`;

describe('chunkFile', () => {
  it('cuts functions, methods, class headers and module blocks with spans, symbols, calls and imports', async () => {
    const py = await loadPythonParser();
    const { chunks, info } = chunkFile({ path: 'pkg/models/head.py', language: 'python', text: SOURCE }, py, 10);
    expect(chunks.map((c) => [c.kind, c.symbol ?? '', c.startLine, c.endLine])).toEqual([
      ['module', '', 1, 6],
      ['function', 'evaluate', 9, 12],
      ['class', 'Head', 15, 18],
      ['method', 'Head.__init__', 19, 21],
      ['method', 'Head.width', 23, 25],
      ['method', 'Head.forward', 27, 28],
      ['module', '', 31, 32],
    ]);
    expect(chunks[0]!.id).toBe(10);
    const evaluate = chunks[1]!;
    expect(evaluate.hasLoop).toBe(true);
    expect(evaluate.calls).toEqual(expect.arrayContaining(['torch.no_grad', 'acc', 'model']));
    expect(chunks[5]!.calls).toEqual(expect.arrayContaining(['F.relu', 'self.fc']));
    expect(info.module).toBe('pkg.models.head');
    expect(info.imports).toMatchObject({
      torch: { module: 'torch' },
      nn: { module: 'torch', name: 'nn' },
      F: { module: 'torch.nn.functional' },
      acc: { module: '..utils.metrics', name: 'accuracy' },
      AverageMeter: { module: '..utils.metrics', name: 'AverageMeter' },
    });
    expect(info.importRoots).toEqual(['torch']);
    expect(info.defs).toMatchObject({ evaluate: 11, Head: 12, 'Head.forward': 15 });
    expect(info.parsed).toBe(true);
  });

  it('indexes a file that does not parse as text windows, keeping its definition names', async () => {
    const py = await loadPythonParser();
    const broken = 'def ok():\n    return 1\n\nwhile = {{ oops\n\ndef also_here(x):\n    for i in x: step(i)\n';
    const { chunks, info } = chunkFile({ path: 'legacy.py', language: 'python', text: broken }, py, 0);
    expect(info.parsed).toBe(false);
    expect(chunks).toHaveLength(1);
    expect(chunks[0]).toMatchObject({ kind: 'text', startLine: 1, endLine: 8, symbol: 'ok,also_here', hasLoop: true });
    expect(chunks[0]!.calls).toContain('step');
  });

  it('reads import statements, relative and aliased', () => {
    const into = {};
    const roots = new Set<string>();
    parseImport('from . import (models,\n  losses as L)', into, roots);
    parseImport('import numpy as np, os.path', into, roots);
    expect(into).toEqual({
      models: { module: '.', name: 'models' },
      L: { module: '.', name: 'losses' },
      np: { module: 'numpy' },
      os: { module: 'os' },
      'os.path': { module: 'os.path' },
    });
    expect([...roots].sort()).toEqual(['numpy', 'os']);
  });

  it('finds the names bound to optimizers, across lines and dotted, and nothing in files without one', () => {
    const text = [
      'opt = torch.optim.AdamW(model.parameters())',
      'self.optimizer =\n    optim.SGD (params, lr=0.1)',
      'trainer.opts.d = optimizers.Lion(p)',
      'xx.yy=RAdam(p); zz = NAdam(p)',
      'o2 = create_optimizer_v2(model, "adam")',
      'not_an_opt = Adam',
      'msg = "use Adam(" + x',
    ].join('\n');
    expect(optimizerNamesIn(text)).toEqual(['opt', 'optimizer', 'd', 'yy', 'zz', 'o2']);
    // A long run of word characters with no optimizer in it (the pattern once retried at each of them).
    expect(optimizerNamesIn(`${'a'.repeat(200_000)} = SG(`)).toEqual([]);
    expect(optimizerNamesIn('x = Adafactor(p)\ny = LBFGS(p)\nz = Lamb(p)\nw = LAMB(p)\nv = build_optimizer(cfg)')).toEqual([
      'x',
      'y',
      'z',
      'w',
      'v',
    ]);
  });
});
