import { describe, expect, it } from 'vitest';
import { completeCode, statedImageSizes, strideProbeSizes, type Completion } from '../../src/complete/index.js';

async function complete(
  code: string | string[],
  extra: { reportText?: string; tracebackModuleLines?: string[] } = {},
): Promise<Completion> {
  return completeCode({ blocks: Array.isArray(code) ? code : [code], ...extra });
}

/** The lines of a script tier 0 added, without the mark. */
function addedLines(script: string): string[] {
  return script
    .split('\n')
    .filter((l) => l.endsWith('# added by RepGen'))
    .map((l) => l.replace(/\s+# added by RepGen$/, ''));
}

describe('inference of undefined names from their uses', () => {
  it('adds conventional imports, each recorded and marked', async () => {
    const c = await complete('x = torch.ones(2)\ny = F.relu(nn.Linear(2, 2)(x))\n');
    const script = c.candidates[0]?.script ?? '';
    expect(addedLines(script).slice(0, 3)).toEqual(['import torch', 'import torch.nn as nn', 'import torch.nn.functional as F']);
    expect(c.edits).toContain('added `import torch` (the code uses `torch` without importing it)');
    expect(c.missing).toEqual([]);
  });

  it("a free name passed as a hyper-parameter keyword gets that keyword's stated default, whatever it is called", async () => {
    const c = await complete('import torch\nm = torch.nn.Linear(2, 2)\nopt = torch.optim.SGD(m.parameters(), lr=step_len, momentum=mom)\n');
    const added = addedLines(c.candidates[0]?.script ?? '');
    expect(added).toContain('step_len = 0.01');
    expect(added).toContain('mom = 0.9');
    expect(c.missing).toEqual([]);
  });

  it('a free name passed to a class the report defines gets the value its constructor parameter would get', async () => {
    const c = await complete(
      'import torch.nn as nn\nclass Net(nn.Module):\n    def __init__(self, hidden_size, ngpu):\n        super().__init__()\n        self.ngpu = ngpu\n        self.fc = nn.Linear(4, hidden_size)\n\nnet = Net(width, n_gpus)\n',
    );
    const added = addedLines(c.candidates[0]?.script ?? '');
    expect(added).toContain('width = 64');
    expect(added).toContain('n_gpus = 16');
    expect(c.missing).toEqual([]);
  });

  it('a name the code calls is never given a keyword default', async () => {
    const c = await complete('import torch\nm = torch.nn.Linear(2, 2)\nopt = torch.optim.SGD(m.parameters(), lr=pick_lr(m))\n');
    expect(addedLines(c.candidates[0]?.script ?? '')).not.toContain('pick_lr = 0.01');
  });

  it('a CamelCase call whose result is added to a module becomes an identity layer stand-in', async () => {
    const c = await complete(
      'import torch.nn as nn\nclass Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.features = nn.Sequential()\n        t = Transition(4, 8)\n        self.features.add_module("t", t)\n\nnet = Net()\n',
    );
    const script = c.candidates[0]?.script ?? '';
    expect(script).toContain('class Transition(nn.Module):  # added by RepGen');
    expect(script).toContain('        return x  # added by RepGen');
    expect(script.indexOf('class Transition')).toBeLessThan(script.indexOf('net = Net()'));
  });

  it('a function passed to Module.apply becomes a no-op with one parameter', async () => {
    const c = await complete('import torch.nn as nn\nm = nn.Linear(2, 2)\nm.apply(init_weights)\n');
    expect(addedLines(c.candidates[0]?.script ?? '')).toContain('def init_weights(m):');
  });

  it('an object whose attributes are only read as numbers becomes a namespace of small numbers', async () => {
    const c = await complete('import torch.nn as nn\nemb = nn.Embedding(vocab.size + 1, 8)\n');
    expect(addedLines(c.candidates[0]?.script ?? '')).toContain('vocab = types.SimpleNamespace(size=100)');
  });

  it('a loader iterated as (input, target) into a model with an Embedding and CrossEntropyLoss gets integer ids and class-id targets', async () => {
    const code = [
      'import torch, torch.nn as nn',
      'class M(nn.Module):',
      '    def __init__(self):',
      '        super().__init__()',
      '        self.e = nn.Embedding(50, 8)',
      '        self.fc = nn.Linear(8, 3)',
      '    def forward(self, x):',
      '        return self.fc(self.e(x).mean(1))',
      'model = M()',
      'loss_fn = nn.CrossEntropyLoss()',
      'for xb, yb in train_dl:',
      '    loss = loss_fn(model(xb), yb)',
    ].join('\n');
    const c = await complete(code);
    const script = c.candidates[0]?.script ?? '';
    expect(addedLines(script)).toContain("train_dl_y = repgen_targets(model, train_dl_x, 'class')");
    expect(addedLines(script)).toContain('train_dl = DataLoader(TensorDataset(train_dl_x, train_dl_y), batch_size=16)');
    // Inserted after the model exists and before the loop that reads it.
    expect(script.indexOf('train_dl_x = ')).toBeGreaterThan(script.indexOf('model = M()'));
    expect(script.indexOf('train_dl_x = ')).toBeLessThan(script.indexOf('for xb, yb in train_dl:'));
    expect(script).toContain('if isinstance(m, nn.Embedding):');
  });

  it('MSELoss targets are floats, `.float()` on the target means floats, `.eq(target)` means class ids', async () => {
    const mse = await complete(
      'import torch.nn as nn\nmodel = nn.Linear(3, 1)\ncrit = nn.MSELoss()\nfor x, y in loader:\n    crit(model(x), y)\n',
    );
    expect(addedLines(mse.candidates[0]?.script ?? '')).toContain("loader_y = repgen_targets(model, loader_x, 'float')");
    const eq = await complete(
      'import torch.nn as nn\nmodel = nn.Linear(3, 4)\nfor x, y in loader:\n    out = model(x)\n    acc = out.argmax(1).eq(y).sum()\n',
    );
    expect(addedLines(eq.candidates[0]?.script ?? '')).toContain("loader_y = repgen_targets(model, loader_x, 'class')");
  });

  it("the batch size the code states is the synthetic loader's", async () => {
    const c = await complete('import torch.nn as nn\nbatch_size = 8\nmodel = nn.Linear(3, 1)\nfor x, y in loader:\n    model(x)\n');
    expect(addedLines(c.candidates[0]?.script ?? '')).toContain('loader = DataLoader(TensorDataset(loader_x, loader_y), batch_size=8)');
  });

  it("an optimizer over the model's parameters, a criterion from the targets' use", async () => {
    const code =
      'import torch.nn as nn\nmodel = nn.Linear(3, 2)\nfor x, y in loader:\n    optimizer.zero_grad()\n    loss = criterion(model(x), y)\n    loss.backward()\n    optimizer.step()\n    print((model(x).argmax(1) == y).float().mean())\n';
    const added = addedLines((await complete(code)).candidates[0]?.script ?? '');
    expect(added).toContain('optimizer = torch.optim.SGD(model.parameters(), lr=0.01)');
    expect(added).toContain('criterion = nn.CrossEntropyLoss()');
  });

  it('a name compared with a string gets that string; hyper-parameters get stated defaults', async () => {
    const added = addedLines(
      (await complete('import torch\nif mode == "train":\n    x = torch.ones(batch_size)\n')).candidates[0]?.script ?? '',
    );
    expect(added).toContain('mode = "train"');
    expect(added).toContain('batch_size = 32');
  });
});

describe('"cannot know": the engine says what is missing instead of guessing', () => {
  it('a function called at module level whose result is used is not invented, and the script is not run', async () => {
    const c = await complete('import torch\ndf = load_my_data("x.csv")\nprint(df.shape)\n');
    expect(c.candidates).toEqual([]);
    expect(c.missing).toEqual([
      {
        name: 'load_my_data',
        why: expect.stringMatching(/called but never defined, and what it returns cannot be inferred/),
        blocking: true,
      },
    ]);
  });

  it('a name whose uses say nothing is reported, blocking only where it runs at import time', async () => {
    const top = await complete('import torch\nresult = torch.ones(2) + mystery\n');
    expect(top.missing).toEqual([{ name: 'mystery', why: 'its uses do not say what it holds', blocking: true }]);
    const inside = await complete('import torch\ndef f():\n    return torch.cat((ghost, torch.ones(1)))\n');
    expect(inside.missing).toEqual([{ name: 'ghost', why: 'its uses do not say what it holds', blocking: false }]);
  });

  it('a model class whose constructor takes an argument it cannot read is not instantiated with a guess', async () => {
    const c = await complete(
      'import torch.nn as nn\nclass Net(nn.Module):\n    def __init__(self, block):\n        super().__init__()\n        self.b = block(3)\n    def forward(self, x):\n        return self.b(x)\n',
    );
    expect(c.candidates.every((k) => !/Net\(/.test(k.added.join('\n')))).toBe(true);
    expect(c.missing[0]).toMatchObject({ name: 'Net', why: expect.stringMatching(/`block` cannot be inferred/), blocking: false });
  });

  it('a data loader with no model to shape it by is reported, not invented', async () => {
    const c = await complete('for x, y in train_loader:\n    print(x.shape)\n');
    expect(c.candidates).toEqual([]);
    expect(c.missing[0]).toMatchObject({
      name: 'train_loader',
      why: expect.stringMatching(/no model in the code to shape it by/),
      blocking: true,
    });
  });
});

describe('harness synthesis', () => {
  const unet = [
    'import torch, torch.nn as nn',
    'class Down(nn.Module):',
    '    def __init__(self, c):',
    '        super().__init__()',
    '        self.conv = nn.Conv2d(c, c, 3, stride=2, padding=1)',
    '    def forward(self, x):',
    '        return self.conv(x)',
    'class Net(nn.Module):',
    '    def __init__(self, in_shape, num_classes):',
    '        super().__init__()',
    '        in_channels, height, width = in_shape',
    '        self.stem = nn.Conv2d(in_channels, 8, 3)',
    '        self.down = Down(8)',
    '    def forward(self, x):',
    '        return self.down(self.stem(x))',
  ].join('\n');

  it('instantiates the root module (not its sub-blocks) and calls it on an input shaped by its first layer, over several image sizes', async () => {
    const c = await complete(unet, { reportText: 'RuntimeError: Sizes of tensors must match' });
    expect(c.candidates.length).toBeGreaterThan(2);
    const first = c.candidates[0];
    expect(first?.label).toBe('harness: Net, 224×224 input, forward');
    expect(first?.added).toContain('model = Net((3, 224, 224), 10)');
    expect(first?.added).toContain('x = repgen_example_input(model, batch=2, size=224)');
    expect(first?.added).toContain('out = model(x)');
    expect(c.candidates.some((k) => k.added.includes('model = Net((3, 256, 256), 10)'))).toBe(true);
    expect(c.candidates.every((k) => !k.added.some((l) => /Down\(/.test(l)))).toBe(true);
  });

  it('tries the image sizes the report states first', async () => {
    const c = await complete(unet, { reportText: 'my images are 96x96, resized with transforms.Resize(96)' });
    expect(c.candidates[0]?.label).toBe('harness: Net, 96×96 input, forward');
  });

  it('adds a backward pass when the report is about gradients', async () => {
    const c = await complete(unet, { reportText: 'the error comes from loss.backward()' });
    expect(c.candidates[0]?.label).toMatch(/forward \+ backward$/);
    expect(c.candidates[0]?.added.at(-1)).toBe('(out[0] if isinstance(out, (tuple, list)) else out).float().mean().backward()');
  });

  it('a Linear-first model gets one candidate (no image size to search)', async () => {
    const c = await complete(
      'import torch.nn as nn\nclass MLP(nn.Module):\n    def __init__(self, input_size, hidden):\n        super().__init__()\n        self.fc = nn.Linear(input_size, hidden)\n    def forward(self, x):\n        return self.fc(x)\n',
    );
    expect(c.candidates).toHaveLength(1);
    expect(c.candidates[0]?.added).toContain('model = MLP(10, 16)');
  });

  it('calls a training function the report never calls, synthesising model, loader, optimizer and loss from their use', async () => {
    const code = [
      'def train(model, optimizer, loader, epochs, criterion=criterion):',
      '    for epoch in range(epochs):',
      '        for i, (xb, yb) in enumerate(loader):',
      '            out = model(xb)',
      '            loss = criterion(out, yb)',
      '            optimizer.zero_grad()',
      '            loss.backward()',
      '            optimizer.step()',
      '            _, pred = out.max(1)',
      '            correct = pred.eq(yb).sum().item()',
      '        print(loss.item())',
    ].join('\n');
    const c = await complete(code);
    const k = c.candidates[0];
    expect(k?.label).toBe('harness: train(model, optimizer, loader, epochs)');
    expect(k?.added).toEqual(
      expect.arrayContaining([
        'criterion = nn.CrossEntropyLoss()',
        'model = nn.Sequential(nn.Flatten(), nn.LazyLinear(4))',
        'epochs = 10',
        "loader_y = repgen_targets(model, loader_x, 'class')",
        'optimizer = torch.optim.SGD(model.parameters(), lr=0.01)',
        'train(model, optimizer, loader, epochs)',
      ]),
    );
    // The default `criterion=criterion` is evaluated when the def runs: the definition comes before it.
    expect(k?.script.indexOf('criterion = nn.CrossEntropyLoss()')).toBeLessThan(k?.script.indexOf('def train(') ?? 0);
  });

  it("uses the snippet's own never-instantiated model class where a function needs a model", async () => {
    const code =
      'import torch.nn as nn\nclass Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(5, 2)\n    def forward(self, x):\n        return self.fc(x)\n\ndef fit(model, loader):\n    for x, y in loader:\n        model(x)\n';
    const c = await complete(code);
    expect(c.candidates[0]?.added).toEqual(expect.arrayContaining(['model = Net()', 'fit(model, loader)']));
  });

  it("prints what a never-called function returns, binding parameters to the module's own values", async () => {
    const c = await complete('import torch\na, b = 1, 3\ndata = torch.arange(5)\ndef part(self, data, s, e):\n    return data[s:e]\n');
    expect(c.candidates[0]?.added.at(-1)).toBe('print(part(None, data, a, b))');
  });

  it("appends the traceback's module-level statement when it runs something the snippet never calls", async () => {
    const c = await complete('import torch\ndef run():\n    return torch.ones(2) @ torch.ones(3)\n', { tracebackModuleLines: ['run()'] });
    expect(c.candidates[0]?.script).toContain('\nrun()  # added by RepGen');
    expect(c.edits).toContain("appended `run()`, the statement the report's traceback shows it ran");
  });
});

describe("input sizes from the model's own downsampling", () => {
  it('derives sizes that halve evenly and then turn odd from the stride-2 convolutions and poolings', () => {
    const six = Array.from({ length: 6 }, () => 'nn.Conv2d(8, 8, 4, stride=2, padding=1)').join('\n');
    expect(strideProbeSizes(six)).toEqual([320, 224]);
    expect(strideProbeSizes('nn.Conv2d(3, 8, 3)\nnn.MaxPool2d(2)\nnn.MaxPool2d(2)\nnn.MaxPool2d(2)')).toEqual([40, 228]);
  });

  it('derives none for a model that never downsamples, and ignores transposed convolutions', () => {
    expect(strideProbeSizes('nn.Conv2d(3, 8, 3, stride=1)\nnn.ConvTranspose2d(8, 8, 4, stride=2)')).toEqual([]);
  });
});

describe('data substitution and reporting', () => {
  it("an ImageFolder on the reporter's disk becomes FakeData through the same transforms, with worker processes off", async () => {
    const c = await complete(
      'import torch\nfrom torchvision import datasets, transforms\nds = datasets.ImageFolder("/kaggle/input/x", transforms.ToTensor())\ndl = torch.utils.data.DataLoader(ds, batch_size=4, num_workers=4)\n',
    );
    const script = c.candidates[0]?.script ?? '';
    expect(script).toContain('ds = RepgenFakeImages("/kaggle/input/x", transforms.ToTensor())');
    expect(script).toContain('num_workers=0)');
    expect(script).toContain('class RepgenFakeImages(torchvision.datasets.FakeData):  # added by RepGen');
    expect(c.missing).toEqual([]);
  });

  it('reads stated image sizes from transforms, NxN and shapes', () => {
    expect(statedImageSizes('transforms.Resize(256), transforms.CenterCrop(224); input 64x64; shape [8, 3, 128, 128]')).toEqual([
      256, 224, 64, 128,
    ]);
    expect(statedImageSizes('batch of 3x4 matrices')).toEqual([]);
  });

  // How long this takes is measured by scripts/bench/snippet-analysis.ts, against a baseline of the same run.
  it('analyses a long report snippet (360 lines): every line kept, the uncalled functions named', async () => {
    const big = Array.from({ length: 120 }, (_, i) => `def f${i}(x):\n    return torch.relu(x) + ${i}\n`).join('\n');
    const c = await complete(`import torch\n${big}`);
    expect(c.candidates).toHaveLength(1);
    expect(c.candidates[0]?.script).toContain('def f119(x):');
    expect(c.edits).toEqual([]);
    expect(c.missing.map((m) => m.name)).toEqual(['f119(x)', 'f118(x)', 'f117(x)']);
  });
});

describe('scope analysis', () => {
  it('`from torch import nn` binds nn, not torch; `import a.b` binds a', async () => {
    const c = await complete(
      'from torch.autograd import Variable\nfrom torch import nn\nimport os.path\nx = Variable(torch.ones(1))\nprint(nn, os.path)\n',
    );
    expect(c.candidates[0]?.added).toEqual(['import torch']);
  });

  it('class-body names are not visible in methods; comprehension and lambda variables are bound', async () => {
    const c = await complete(
      'class A:\n    k = 3\n    def f(self):\n        return k\nys = [v * 2 for v in range(3)]\ng = lambda q: q + 1\n',
    );
    expect(c.missing.map((m) => m.name)).toEqual(['k']);
  });
});

describe('module-level order', () => {
  it('a name read at module level before the statement that binds it is completed there', async () => {
    const c = await complete(
      'import torch.nn as nn\nif loss == "MSE":\n    criterion = nn.MSELoss()\nfor i in range(2):\n    loss = criterion\n',
    );
    const script = c.candidates[0]?.script ?? '';
    expect(script).toContain('loss = "MSE"  # added by RepGen\nif loss == "MSE":');
  });

  it('a read after the binding, or in the same loop, is not touched', async () => {
    const c = await complete('total = 0\nfor i in range(3):\n    total = total + i\nprint(total)\n');
    expect(c.candidates[0]?.added).toEqual([]);
  });
});

describe('loops', () => {
  it('a read in a loop before the loop first binds the name is undefined on the first pass, and completed', async () => {
    const c = await complete(
      'import torch.nn as nn\nnet = nn.Linear(2, 2)\nfor i in range(2):\n    crit = crit(net(torch.ones(1, 2)), torch.ones(1, 2))\n',
    );
    expect([...c.missing.map((m) => m.name), ...c.candidates[0]!.added]).toContain('crit = nn.MSELoss()');
    const bound = await complete('total = 0\nfor i in range(3):\n    total = total + i\n');
    expect(bound.candidates[0]?.added).toEqual([]);
  });

  it('a batch unpacked in the body (`for i, data in enumerate(dl)` then `x, y = data`) makes an (input, target) loader', async () => {
    const c = await complete(
      'import torch.nn as nn\nmodel = nn.Linear(3, 2)\ncrit = nn.CrossEntropyLoss()\nfor i, data in enumerate(dl):\n    x, y = data\n    crit(model(x), y)\n',
    );
    expect(c.candidates[0]?.added).toContain("dl_y = repgen_targets(model, dl_x, 'class')");
  });

  it('a free function called on a model output and a target is a loss', async () => {
    const c = await complete(
      'import torch.nn as nn\nnet = nn.Linear(3, 1)\nfor x, y in loader:\n    pred = net(x)\n    err = score(pred, y)\n',
    );
    expect(c.candidates[0]?.added).toContain('score = nn.MSELoss()');
  });
});

describe("the reporter's own model", () => {
  it('an undefined model called at module level gets a stand-in, so that the code around it runs', async () => {
    const c = await complete('import torch\nout = model(torch.zeros(2, 3))\nprint(out.shape)\n');
    expect(c.missing).toEqual([]);
    expect(c.candidates[0]?.added).toContain('model = nn.Sequential(nn.Flatten(), nn.LazyLinear(4))');
  });

  it('is reported, not replaced, when the traceback fails inside code of the reporter that the report does not show', async () => {
    const reportText =
      'Traceback (most recent call last):\n  File "train.py", line 2, in <module>\n  File "net.py", line 5, in forward\nRuntimeError: boom';
    const c = await complete('import torch\nout = model(torch.zeros(2))\n', { reportText });
    expect(c.candidates).toEqual([]);
    expect(c.missing).toEqual([
      { name: 'model', why: expect.stringMatching(/fails inside code it does not show \(`forward`\)/), blocking: true },
    ]);
  });
});

describe('the statement the report failed at', () => {
  it('a name used only after it blocks nothing: that code never ran in the report', async () => {
    const code = 'import torch\nx = torch.ones(2) @ torch.ones(3)\nprint(mystery)\n';
    const after = await complete(code, { tracebackModuleLines: ['x = torch.ones(2) @ torch.ones(3)'] });
    expect(after.candidates).toHaveLength(1);
    expect(after.missing).toEqual([{ name: 'mystery', why: 'its uses do not say what it holds', blocking: false }]);
    const before = await complete(code, { tracebackModuleLines: ['print(mystery)'] });
    expect(before.candidates).toEqual([]);
  });
});

describe('definitions with variants', () => {
  it('numpy data the code hands to torch unchanged: a candidate with float64 arrays first, float32 second', async () => {
    const c = await complete('import torch, torch.nn as nn\nm = nn.Linear(3, 1)\nm(torch.from_numpy(X))\n');
    expect(c.candidates.map((k) => k.label)).toEqual(["the report's code, completed", "the report's code, completed; X float32"]);
    expect(c.candidates[1]?.added).toContain('X = repgen_numpy(repgen_example_input(m, batch=4), float64=False)');
  });
});
