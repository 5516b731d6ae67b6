import { describe, expect, it } from 'vitest';
import { completeCode } from '../../src/complete/index.js';
import { analyzePython } from '../../src/complete/scope.js';

async function freeNames(source: string): Promise<string[]> {
  const a = await analyzePython(source);
  try {
    return [...a.undefined.keys()];
  } finally {
    a.tree.delete();
  }
}

/** Issue 40, item 6b: every binding form Python has is a definition, read from the syntax tree. */
describe('analyzePython: binding forms', () => {
  const bound: [string, string][] = [
    ['except … as e', 'import torch\ntry:\n    torch.ones(2).view(3)\nexcept Exception as e:\n    print(e)\n'],
    ['except* … as eg', 'try:\n    pass\nexcept* ValueError as eg:\n    print(eg)\n'],
    ['with … as f', 'with open("a.txt") as f:\n    print(f.read())\n'],
    ['with … as (f), … as g', 'with open("a") as (f), open("b") as g:\n    print(f, g)\n'],
    ['for targets', 'for i, (a, b) in enumerate([(1, 2)]):\n    print(i, a, b)\n'],
    ['comprehension variables', 'xs = [y * 2 for y in range(3) if y]\nprint({k: v for k, v in {}.items()}, xs)\n'],
    [':= at module level', 'if (n := 3) > 2:\n    print(n)\n'],
    [':= in a comprehension', 'print([z for x in range(3) if (z := x)], z)\n'],
    ['global', 'def f():\n    global g\n    g = 1\n\nf()\nprint(g)\n'],
    [
      'function parameters, typed and splat',
      'def f(a: int, *args: int, b: int = 2, **kw: int) -> int:\n    return a + b + len(args) + len(kw)\n\nprint(f(1))\n',
    ],
    ['lambda parameters', 'f = lambda q, r=2, *a, **k: q + r + len(a) + len(k)\nprint(f(1))\n'],
    ['import a.b', 'import os.path\nprint(os.path.join("a", "b"))\n'],
    [
      'match captures',
      'match [1, 2]:\n    case [a, *rest]:\n        print(a, rest)\n    case {"k": v, **others}:\n        print(v, others)\n    case int() as n:\n        print(n)\n    case dict(x=px):\n        print(px)\n',
    ],
  ];
  for (const [form, source] of bound) it(`binds with ${form}`, async () => expect(await freeNames(source)).toEqual([]));

  it('still reports names nothing binds, and a read before the binder runs', async () => {
    expect(await freeNames('try:\n    pass\nexcept Exception as e:\n    print(err)\n')).toEqual(['err']);
    expect(await freeNames('print(n)\nif (n := 3) > 2:\n    pass\n')).toEqual(['n']);
    expect(await freeNames('match 1:\n    case nn.ReLU:\n        print(model)\n')).toEqual(['model']);
  });
});

describe('completeCode: reports of several projects that bind names these ways', () => {
  const reports: [string, string][] = [
    [
      'einops',
      'import numpy as np\nfrom einops import rearrange\ntry:\n    rearrange(np.zeros((2, 3)), "... a -> a b")\nexcept Exception as e:\n    print(e)  # gives "Ellipsis found in left side"\n',
    ],
    [
      'kornia',
      'import torch\nimport kornia\nwith torch.no_grad() as ctx:\n    out = kornia.augmentation.RandomAffine(10.0)(torch.rand(2, 3, 8, 8))\nprint([s for s in out.shape], ctx)\n',
    ],
    [
      'torchmetrics',
      'import torch\nfrom torchmetrics.classification import MulticlassAccuracy\nif (metric := MulticlassAccuracy(num_classes=3)) is not None:\n    print(metric(torch.tensor([0, 1]), torch.tensor([0, 2])))\n',
    ],
  ];
  for (const [project, code] of reports)
    it(`leaves no name of a ${project} report unresolved`, async () => {
      const c = await completeCode({ blocks: [code], tracebackModuleLines: [], reportText: code });
      expect(c.missing.filter((m) => m.blocking).map((m) => m.name)).toEqual([]);
    });
});
