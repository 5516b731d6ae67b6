import { describe, expect, it } from 'vitest';
import { traceFlow, type Flow } from '../../src/complete/data-flow.js';
import { analyzePython } from '../../src/complete/scope.js';

/** Where the free name `name` of `code` is consumed: 'module f @0', 'loss class @1', or null. */
async function flowOf(code: string, name: string, models: string[] = []): Promise<{ at: string | null; flow: Flow | null }> {
  const a = await analyzePython(code);
  try {
    const flow = traceFlow(
      a,
      (a.undefined.get(name) ?? []).map((u) => u.node),
      new Set(models),
    );
    if (!flow) return { at: null, flow };
    const c = flow.consumer;
    const at = c.kind === 'module' ? `module ${c.callee.text} @${c.position}` : `loss ${c.loss} @${c.position}`;
    return { at, flow };
  } finally {
    a.tree.delete();
  }
}

describe('following a free value to what consumes it', () => {
  it('a layer bound to nn.X(...) consumes its positional inputs (each of query, key, value)', async () => {
    const code = 'import torch.nn as nn\nattn = nn.MultiheadAttention(8, 2)\nout, w = attn(q, k, v)\n';
    expect((await flowOf(code, 'q')).at).toBe('module attn @0');
    expect((await flowOf(code, 'v')).at).toBe('module attn @2');
  });

  it('through from_numpy, TensorDataset, DataLoader and the loop to the model (element 0) and the loss (element 1)', async () => {
    const code = [
      'import torch, torch.nn as nn',
      'from torch.utils.data import TensorDataset, DataLoader',
      'ds = TensorDataset(torch.from_numpy(X).float(), torch.from_numpy(y))',
      'dl = DataLoader(ds, batch_size=8)',
      'net = nn.Linear(5, 3)',
      'crit = nn.CrossEntropyLoss()',
      'for i, (xb, yb) in enumerate(dl):',
      '    loss = crit(net(xb), yb)',
    ].join('\n');
    const x = await flowOf(code, 'X');
    expect(x.at).toBe('module net @0');
    expect(x.flow).toMatchObject({ numpy: true, keepsDtype: true, dataset: { element: 0 } });
    expect((await flowOf(code, 'y')).at).toBe('loss class @1');
  });

  it('through train_test_split to the training part, then to a free model', async () => {
    const code = 'X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.2)\npred = model(torch.tensor(X_tr))\n';
    const x = await flowOf(code, 'X', ['model']);
    expect(x.at).toBe('module model @0');
    expect(x.flow?.numpy).toBe(true);
  });

  it('through an elementwise function and a method into a functional loss, with its kind', async () => {
    const code = 'import torch.nn.functional as F\np = F.softmax(logits, dim=1)\nloss = F.nll_loss(p.log(), t)\nmse = F.mse_loss(a, b)\n';
    expect((await flowOf(code, 'logits')).at).toBe('loss class @0');
    expect((await flowOf(code, 't')).at).toBe('loss class @1');
    expect((await flowOf(code, 'b')).at).toBe('loss float @1');
  });

  it("reads a loss's kind from the nn.XLoss a name is bound to, or one built inline", async () => {
    expect((await flowOf('import torch.nn as nn\nc = nn.BCELoss()\nc(p, t)\n', 't')).at).toBe('loss probability @1');
    expect((await flowOf('import torch.nn as nn\nnn.MSELoss()(p, t)\n', 'p')).at).toBe('loss float @0');
  });

  it('stops at calls that do not carry the value (len, print, an unknown function) and at keyword-only uses', async () => {
    expect((await flowOf('import torch.nn as nn\nm = nn.Linear(2, 2)\nprint(len(x))\nm(helper(x))\n', 'x')).at).toBeNull();
    expect((await flowOf('import torch.nn as nn\nm = nn.Linear(2, 2)\nm(input=x)\n', 'x')).at).toBeNull();
  });
});
