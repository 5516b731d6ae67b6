import { describe, expect, it } from 'vitest';
import { analyzePython } from '../../src/complete/scope.js';
import { planTensors, type TensorDefinition } from '../../src/complete/tensor-plans.js';

/** The tensor definitions for every free name of `code` (names in `models` are the model). */
async function plans(code: string, models: string[] = []): Promise<Map<string, TensorDefinition>> {
  const a = await analyzePython(code);
  try {
    return planTensors(a, [...a.undefined.keys()], a.undefined, new Set(models));
  } finally {
    a.tree.delete();
  }
}

const line = (p: Map<string, TensorDefinition>, n: string) => p.get(n)?.lines.join('\n');

describe('free tensors shaped by what consumes them', () => {
  it('the inputs of a layer bound earlier: shaped at run time by the layer (query, key and value of an attention)', async () => {
    const p = await plans('import torch.nn as nn\nattn = nn.MultiheadAttention(16, 4, batch_first=True)\nout, _ = attn(q, k, v)\n');
    expect(line(p, 'q')).toBe('q = repgen_example_input(attn, batch=4)');
    expect(line(p, 'v')).toBe('v = repgen_example_input(attn, batch=4)');
    expect(p.get('q')?.why).toBe('the input `attn` is called on, shaped by its first layer');
  });

  it('a layer bound below the first use: its constructor runs where the tensor is needed, when all it reads is bound there', async () => {
    const p = await plans('import torch.nn as nn\nprint(x.shape)\nlayer = nn.Conv2d(3, 8, 3)\nlayer(x)\n');
    expect(line(p, 'x')).toBe('x = repgen_example_input(nn.Conv2d(3, 8, 3), batch=4)');
    const unbound = await plans('import torch.nn as nn\nprint(x.shape)\nlayer = nn.Conv2d(c, 8, 3)\nc = 3\nlayer(x)\n');
    expect(unbound.has('x')).toBe(false);
  });

  it('a second positional input of an ordinary layer is not guessed (an LSTM state)', async () => {
    const p = await plans('import torch.nn as nn\nlstm = nn.LSTM(4, 8)\nlstm(seq, state)\n');
    expect(line(p, 'seq')).toBe('seq = repgen_example_input(lstm, batch=4)');
    expect(p.has('state')).toBe(false);
  });

  it('(X, y) numpy data of a TensorDataset: rows shaped by the model, targets by its output, float64 then float32', async () => {
    const code = [
      'import torch, torch.nn as nn',
      'model = nn.Linear(6, 3)',
      'crit = nn.CrossEntropyLoss()',
      'ds = TensorDataset(torch.tensor(X), torch.tensor(y))',
      'for xb, yb in DataLoader(ds, batch_size=4):',
      '    crit(model(xb), yb)',
    ].join('\n');
    const p = await plans(code);
    expect(line(p, 'X')).toBe('X = repgen_numpy(repgen_example_input(model, batch=64))');
    expect(p.get('X')?.variants).toEqual([
      { label: 'X float32', lines: ['X = repgen_numpy(repgen_example_input(model, batch=64), float64=False)'] },
    ]);
    expect(line(p, 'y')).toBe("y = repgen_numpy(repgen_targets_like(repgen_output(model, X), 'class'))");
    expect(p.get('y')?.after).toEqual(['X']);
  });

  it('data given to torch as tensors (FloatTensor) is not given dtype variants; tensors never become numpy', async () => {
    const p = await plans('import torch, torch.nn as nn\nm = nn.Linear(2, 1)\nm(torch.FloatTensor(a))\nm(b)\n');
    expect(p.get('a')?.variants).toBeUndefined();
    expect(line(p, 'b')).toBe('b = repgen_example_input(m, batch=4)');
  });

  it("both arguments of a loss free: a pair of its signature's shapes (scores and class ids, values, probabilities)", async () => {
    const ce = await plans('import torch.nn.functional as F\nF.cross_entropy(logits, labels)\n');
    expect(line(ce, 'logits')).toBe('logits = torch.randn(4, 10)');
    expect(line(ce, 'labels')).toBe('labels = torch.randint(0, 10, (4,))');
    const bce = await plans('import torch.nn as nn\nnn.BCELoss()(p, t)\n');
    expect(line(bce, 'p')).toBe('p = torch.rand(4, 1)');
    expect(line(bce, 't')).toBe('t = torch.randint(0, 2, (4, 1)).float()');
  });

  it('one argument of a loss bound before: the other is shaped by it', async () => {
    const t = await plans('import torch, torch.nn.functional as F\nout = torch.randn(3, 5)\nF.cross_entropy(out, target)\n');
    expect(line(t, 'target')).toBe("target = repgen_targets_like(out, 'class')");
    const x = await plans('import torch, torch.nn.functional as F\nlabels = torch.tensor([0, 2, 1])\nF.cross_entropy(scores, labels)\n');
    expect(line(x, 'scores')).toBe('scores = torch.randn(len(labels), int(labels.max()) + 1)');
  });

  it('a name nothing consumes gets no definition', async () => {
    const p = await plans('import torch\nprint(mystery + 1)\n');
    expect(p.size).toBe(0);
  });
});
