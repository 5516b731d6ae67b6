import { describe, expect, it } from 'vitest';
import { analyzePython } from '../../src/complete/scope.js';
import { wrapPastedMethods, type WrappedMethods } from '../../src/complete/wrap-methods.js';

async function wrap(code: string): Promise<WrappedMethods | null> {
  const a = await analyzePython(code);
  try {
    return wrapPastedMethods(a);
  } finally {
    a.tree.delete();
  }
}

describe('pieces of an nn.Module pasted without their class', () => {
  it("`self.x = ...` lines and a `def forward(self, x)` become one class; the reporter's lines stay unmarked", async () => {
    const w = await wrap(
      'import torch.nn as nn\nself.fc = nn.Linear(4, 2)\nself.act = nn.ReLU()\n\ndef forward(self, x):\n    return self.act(self.fc(x))\n',
    );
    expect(w?.code).toBe(
      [
        'import torch.nn as nn',
        'class Model(nn.Module):  # added by RepGen',
        '    def __init__(self):  # added by RepGen',
        '        super().__init__()  # added by RepGen',
        '        self.fc = nn.Linear(4, 2)',
        '        self.act = nn.ReLU()',
        '',
        '    def forward(self, x):',
        '        return self.act(self.fc(x))',
        '',
        '',
      ].join('\n'),
    );
    expect(w?.edits).toEqual([
      'put the method `forward`, 2 `self.…` lines (an `__init__` body) pasted without their class into `class Model(nn.Module)`',
    ]);
  });

  it('takes the class name from `super(Name, self)`, and the one the code calls, in that order', async () => {
    const named = await wrap(
      'def __init__(self):\n    super(Encoder, self).__init__()\n    self.fc = nn.Linear(3, 3)\ndef forward(self, x):\n    return self.fc(x)\n',
    );
    expect(named?.code).toMatch(/^class Encoder\(nn\.Module\):/m);
    const called = await wrap('def forward(self, x):\n    return self.fc(x)\n\nnet = Net()\n');
    expect(called?.code).toMatch(/^class Net\(nn\.Module\):/m);
  });

  it('a pasted __init__ without super().__init__() gets one before its own lines', async () => {
    const w = await wrap('def __init__(self, n):\n    self.fc = nn.Linear(n, 1)\ndef forward(self, x):\n    return self.fc(x)\n');
    expect(w?.code).toContain(
      '    def __init__(self, n):\n        super().__init__()  # added by RepGen\n        self.fc = nn.Linear(n, 1)\n',
    );
  });

  it('a layer the code calls on self but never shows becomes an nn.Identity stand-in, said in the edits', async () => {
    const w = await wrap('self.conv = nn.Conv2d(3, 8, 3)\ndef forward(self, x):\n    return self.head(self.conv(x))\n');
    expect(w?.code).toContain('        self.head = nn.Identity()  # added by RepGen\n');
    expect(w?.edits.at(-1)).toMatch(/^defined `self\.head` as `nn\.Identity\(\)`/);
  });

  it('lines of a forward body become `forward(self, <the names they read first>)`, returning what they compute last', async () => {
    const w = await wrap('self.fc = nn.Linear(8, 2)\nh = self.fc(x)\nout = torch.relu(h)\n');
    expect(w?.code).toContain(
      '    def forward(self, x):  # added by RepGen\n        h = self.fc(x)\n        out = torch.relu(h)\n        return out  # added by RepGen',
    );
  });

  it("joins pasted methods to the snippet's one nn.Module class that lacks a forward", async () => {
    const w = await wrap(
      'import torch.nn as nn\nclass Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(2, 2)\n\ndef forward(self, x):\n    return self.fc(x)\n',
    );
    expect(w?.code).toBe(
      'import torch.nn as nn\nclass Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(2, 2)\n\n    def forward(self, x):\n        return self.fc(x)\n\n',
    );
    expect(w?.edits).toEqual(["put the pasted method `forward` into `Net`, the report's nn.Module class that lacks it"]);
  });

  it('leaves alone code with no such piece, and a function whose `self` it never reads', async () => {
    expect(await wrap('import torch\nx = torch.ones(2)\n')).toBeNull();
    expect(await wrap('def part(self, data, s, e):\n    return data[s:e]\n')).toBeNull();
  });
});
