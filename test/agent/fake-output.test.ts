import { describe, expect, it } from 'vitest';
import { fakeOutputReasons, reportSides } from '../../src/agent/fake-output.js';
import { scriptLiterals } from '../../src/agent/script-literals.js';
import { checkRelevance } from '../../src/agent/relevance.js';
import { extractFacts } from '../../src/report/extract-facts.js';
import { readReport } from '../../src/symptoms/index.js';

async function report(md: string) {
  const reading = readReport(md);
  return { reading, facts: await extractFacts(md, reading) };
}

const fence = '```';

/** A crash whose traceback quotes a reporter's line that the code block does not show. */
const CRASH = `# RuntimeError: Given groups=1, weight of size [16, 3, 3, 3], expected input[2, 5, 32, 32] to have 3 channels, but got 5 channels instead

My landmark model fails on the first batch.

${fence}python
import torch
import torch.nn as nn

class LandmarkNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 16, 3)

    def forward(self, image, landmarks):
        return self.conv1(torch.cat([image, landmarks], 1))

model = LandmarkNet()
${fence}

${fence}
Traceback (most recent call last):
  File "train.py", line 41, in <module>
    output = model(image, landmarks)
  File "/usr/lib/python3/dist-packages/torch/nn/modules/module.py", line 1194, in _call_impl
    return forward_call(*input, **kwargs)
  File "train.py", line 12, in forward
    return self.conv1(torch.cat([image, landmarks], 1))
RuntimeError: Given groups=1, weight of size [16, 3, 3, 3], expected input[2, 5, 32, 32] to have 3 channels, but got 5 channels instead
${fence}
`;

const FAITHFUL_CRASH = `import os
import torch
import torch.nn as nn

torch.manual_seed(int(os.environ.get("REPGEN_SEED", "0")))

class LandmarkNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 16, 3)

    def forward(self, image, landmarks):
        return self.conv1(torch.cat([image, landmarks], 1))

model = LandmarkNet()
image = torch.randn(2, 3, 32, 32)
landmarks = torch.randn(2, 2, 32, 32)
print("image", tuple(image.shape), "landmarks", tuple(landmarks.shape))
try:
    output = model(image, landmarks)
except RuntimeError as e:
    if "to have 3 channels" in str(e):
        print("the reported channel mismatch")
    raise
`;

/** A silent bug: the loss sits at ln(3) and the reporter pasted the log. */
const SILENT = `# Loss does not decrease: epoch: 10	Train Loss : 1.0986123085021973

${fence}python
model = Model(vocab)
for epoch in range(1, 11):
    loss = train_one_epoch(model, loader)
    print(f"epoch: {epoch}\\tTrain Loss : {loss}")
${fence}

${fence}
epoch: 1	Train Loss : 1.0986123085021973
epoch: 2	Train Loss : 1.0986123085021973
epoch: 10	Train Loss : 1.0986123085021973
${fence}
`;

const FAITHFUL_SILENT = `import os
import torch
import torch.nn as nn

torch.manual_seed(int(os.environ.get("REPGEN_SEED", "0")))
model = nn.Sequential(nn.Linear(8, 3), nn.Softmax(dim=1))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x = torch.randn(64, 8)
y = torch.randint(0, 3, (64,))
for epoch in range(1, 11):
    loss = nn.functional.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"epoch: {epoch}\\tTrain Loss : {loss.item()}")
assert abs(loss.item() - 1.0986) > 0.05, "the loss stays at chance level"
`;

/** Printed tensors, and a short KeyError. */
const PRINTED = `# Wrong slices

${fence}python
import torch
data = torch.tensor([[3, 4, 7, 8, 9, 2], [1, 5, 3, 4, 7, 2]])
print(get_parts(data, 4, 9))
${fence}

${fence}
[tensor([4, 7, 8, 9]), tensor([ 3, 11, 12, 13])]
${fence}
`;

const CONSOLE = `# KeyError on state dict

${fence}pycon
>>> sd = model.state_dict()
>>> sd['fc']
Traceback (most recent call last):
  File "<stdin>", line 1, in <module>
KeyError: 'fc'
${fence}
`;

describe("reportSides: the report's code apart from its output", () => {
  it('counts the lines a traceback quotes and console input as code, the rest as output', async () => {
    const crash = await report(CRASH);
    const sides = reportSides(crash.reading, crash.facts);
    expect(sides.code.has('output = model(image, landmarks)')).toBe(true);
    expect(sides.output.join('\n')).not.toMatch(/output = model|File "|forward_call/);
    expect(sides.output.join('\n')).toMatch(/^RuntimeError: Given groups=1/m);
    const pycon = await report(CONSOLE);
    const s2 = reportSides(pycon.reading, pycon.facts);
    expect(s2.code.has("sd['fc']")).toBe(true);
    expect(s2.output).toEqual(["KeyError: 'fc'"]);
  });
});

describe('scriptLiterals', () => {
  it('joins implicit and + concatenation, keeps format placeholders as gaps, reads f-string expressions and skips comments', () => {
    const lit = scriptLiterals(
      `x = ("ab" 'cd'\n     "ef") + "gh"  # "not me"\nprint(f"v={1.25:.2f} {{x}}", "%d items" % 3)\ns = r"a\\tb"\nt = "a\\tb"\n`,
    );
    expect(lit.strings.map((s) => s.text)).toEqual(['abcdefgh', 'v=\u0000 {x}', '\u0000 items', 'a\\tb', 'a\tb']);
    expect(lit.numbers.map((n) => `${n.raw}@${n.line}`)).toEqual(['1.25@3', '3@3']);
    expect(lit.strings.map((s) => s.line)).toEqual([1, 3, 3, 4, 5]);
  });
});

describe('the fake-output check rejects printed or raised copies of the output', () => {
  const crashFakes: Record<string, string> = {
    'prints the error line':
      'print("RuntimeError: Given groups=1, weight of size [16, 3, 3, 3], expected input[2, 5, 32, 32] to have 3 channels, but got 5 channels instead")',
    'raises the reported message':
      'raise RuntimeError("Given groups=1, weight of size [16, 3, 3, 3], expected input[2, 5, 32, 32] to have 3 channels, but got 5 channels instead")',
    'splits it over implicit concatenation':
      'raise RuntimeError(\n    "Given groups=1, weight of size [16, 3, 3, 3], "\n    "expected input[2, 5, 32, 32] to have 3 channels, but got 5 channels instead"\n)',
    'joins it with +':
      'msg = "Given groups=1, weight of size " + "[16, 3, 3, 3], expected input[2, 5, 32, 32] to have 3 channels"\nraise RuntimeError(msg)',
    'formats it with %':
      'raise RuntimeError("Given groups=1, weight of size [%d, %d, 3, 3], expected input[2, %d, 32, 32] to have 3 channels, but got %d channels instead" % (16, 3, 5, 5))',
    'formats it with an f-string':
      'c = 5\nraise RuntimeError(f"Given groups=1, weight of size [16, 3, 3, 3], expected input[2, {c}, 32, 32] to have 3 channels, but got {c} channels instead")',
    'exits with it':
      'import sys\nsys.exit("RuntimeError: Given groups=1, weight of size [16, 3, 3, 3], expected input[2, 5, 32, 32] to have 3 channels")',
    'logs it': 'import logging\nlogging.error("expected input[2, 5, 32, 32] to have 3 channels, but got 5 channels instead")',
    'dumps a traceback':
      'import sys\nsys.stderr.write("""Traceback (most recent call last):\n  File "train.py", line 41, in <module>\n""")',
  };
  for (const [how, fake] of Object.entries(crashFakes)) {
    it(`a script that ${how}`, async () => {
      const { reading, facts } = await report(CRASH);
      const script = `${FAITHFUL_CRASH.replace(/try:[\s\S]*$/, '')}${fake}\n`;
      const v = checkRelevance(script, reading, facts);
      expect(v.outcome, `${how}: ${JSON.stringify(v)}`).toBe('faked_bug');
    });
  }

  const silentFakes: Record<string, string> = {
    'prints the metric line with an escape': 'print("epoch: 10\\tTrain Loss : 1.0986123085021973")',
    'puts the value in an f-string expression': 'print(f"epoch: {epoch}\\tTrain Loss : {1.0986123085021973}")',
    'assigns the value, then prints it': 'stuck = 1.0986123085021973\nprint(f"epoch: 10\\tTrain Loss : {stuck}")',
    'rounds the value': 'print("epoch: {}\\tTrain Loss : {:.4f}".format(10, 1.0986))',
    'keeps the value in the template text': 'print(f"epoch: {epoch}\\tTrain Loss : 1.0986123085021973")',
    'keeps the value in a string': 'v = "1.0986123085021973"\nprint("loss", v)',
  };
  for (const [how, fake] of Object.entries(silentFakes)) {
    it(`a silent-bug script that ${how}`, async () => {
      const { reading, facts } = await report(SILENT);
      const script = `${FAITHFUL_SILENT.replace(/assert[\s\S]*$/, '')}${fake}\n`;
      expect(fakeOutputReasons(script, reading, facts), how).not.toEqual([]);
    });
  }

  it('a script that builds the printed tensors by hand', async () => {
    const { reading, facts } = await report(PRINTED);
    const script = 'import torch\nprint([torch.tensor([4, 7, 8, 9]), torch.tensor([3, 11, 12, 13])])\n';
    expect(fakeOutputReasons(script, reading, facts).join()).toMatch(/builds the reported output \[4, 7, 8, 9\] by hand/);
  });

  it('a short message raised verbatim with the reported class', async () => {
    const { reading, facts } = await report(CONSOLE);
    expect(fakeOutputReasons("raise KeyError('fc')\n", reading, facts).join()).toMatch(/raises KeyError/);
  });

  it('one script faking it several ways gets every reason', async () => {
    const { reading, facts } = await report(SILENT);
    const script = `${FAITHFUL_SILENT.replace(/assert[\s\S]*$/, '')}print("epoch: 10\\tTrain Loss : 1.0986123085021973")\nv = 1.0986123085021973\nprint("Traceback (most recent call last):")\n`;
    const reasons = fakeOutputReasons(script, reading, facts);
    expect(reasons.length).toBeGreaterThanOrEqual(3);
    expect(reasons.join('\n')).toMatch(/output line/);
    expect(reasons.join('\n')).toMatch(/hard-codes the reported value/);
    expect(reasons.join('\n')).toMatch(/traceback by hand/);
  });
});

describe("the fake-output check never rejects the reporter's calls", () => {
  it('accepts a faithful script calling the model the way the traceback shows', async () => {
    const { reading, facts } = await report(CRASH);
    expect(checkRelevance(FAITHFUL_CRASH, reading, facts)).toEqual({ ok: true, outcome: 'relevant', reasons: [] });
  });

  it("accepts metrics printed in the report's format from computed values, and an assertion on the reported value", async () => {
    const { reading, facts } = await report(SILENT);
    expect(fakeOutputReasons(FAITHFUL_SILENT, reading, facts)).toEqual([]);
  });

  it("accepts the report's own line even when it holds a printed string, and a docstring quoting the error", async () => {
    const md = CRASH.replace(
      'model = LandmarkNet()\n',
      'model = LandmarkNet()\nprint("expected input[2, 5, 32, 32] to have 3 channels, but got 5 channels instead")\n',
    );
    const { reading, facts } = await report(md);
    const script = `"""Reproduces: RuntimeError: Given groups=1, weight of size [16, 3, 3, 3], expected input[2, 5, 32, 32] to have 3 channels."""\n${FAITHFUL_CRASH}print("expected input[2, 5, 32, 32] to have 3 channels, but got 5 channels instead")\n`;
    expect(fakeOutputReasons(script, reading, facts)).toEqual([]);
  });

  it("accepts the console session's own input lines", async () => {
    const { reading, facts } = await report(CONSOLE);
    const script = "import torch.nn as nn\nmodel = nn.Sequential(nn.Linear(2, 2))\nsd = model.state_dict()\nsd['fc']\n";
    expect(fakeOutputReasons(script, reading, facts)).toEqual([]);
  });

  it('accepts computing the printed tensors', async () => {
    const { reading, facts } = await report(PRINTED);
    const script =
      'import torch\ndata = torch.tensor([[3, 4, 7, 8, 9, 2], [1, 5, 3, 4, 7, 2]])\nprint([row[1:5] for row in data])\nassert data[0, 1:5].tolist() == [4, 7, 8, 9]\n';
    expect(fakeOutputReasons(script, reading, facts)).toEqual([]);
  });
});
