import { describe, expect, it } from 'vitest';
import { matchRun, readReport, readRun } from '../../src/symptoms/index.js';
import { valueBasis } from '../../src/symptoms/compare-values.js';

const crashIssue = [
  '# shapes',
  '```python',
  'import torch',
  'lr = torch.nn.Linear(19, 1)',
  'lr(torch.zeros(19, 1))',
  '```',
  '```',
  'Traceback (most recent call last):',
  '  File "/path/main.py", line 3, in <module>',
  '    lr(torch.zeros(19, 1))',
  '  File "/path/site-packages/torch/nn/modules/linear.py", line 114, in forward',
  '    return F.linear(input, self.weight, self.bias)',
  'RuntimeError: mat1 and mat2 shapes cannot be multiplied (19x1 and 19x1)',
  '```',
].join('\n');

function crashOutput(
  line: string,
  code = 'return F.linear(input, self.weight, self.bias)',
  file = '/usr/lib/python3/dist-packages/torch/nn/modules/linear.py',
): string {
  return `Traceback (most recent call last):\n  File "/tmp/w/main.py", line 3, in <module>\n    lr(x)\n  File "${file}", line 114, in forward\n    ${code}\n${line}\n`;
}

describe('matchRun: crashes', () => {
  const report = readReport(crashIssue);

  it('same class and message: reproduced', () => {
    const out = crashOutput('RuntimeError: mat1 and mat2 shapes cannot be multiplied (19x1 and 19x1)');
    const m = matchRun(report, readRun(out, { exitCode: 1 }), { output: out });
    expect(m.verdict).toBe('reproduced');
    expect(m.score).toBe(1);
  });

  it("other numbers in the shapes: the reasons say the numbers differ; the verdict follows the judge's word overlap", () => {
    // 9 of 13 words shared (0.69 ≥ 0.6): the judge calls this reproduced, and so do we, with the note.
    const out = crashOutput('RuntimeError: mat1 and mat2 shapes cannot be multiplied (32x7 and 5x1)');
    const m = matchRun(report, readRun(out, { exitCode: 1 }), { output: out });
    expect(m.verdict).toBe('reproduced');
    expect(m.reasons.join('\n')).toMatch(/numbers differ \(report: 1, 2, 19, 1, 19, 1; run: 1, 2, 32, 7, 5, 1\)/);
    // A message made mostly of numbers falls under the bar with numbers kept, over it with them masked: partial.
    const cat = readReport('```\nRuntimeError: size mismatch, m1: [64 x 784], m2: [500 x 10]\n```');
    const got = crashOutput('RuntimeError: size mismatch, m1: [32 x 100], m2: [50 x 7]');
    const p = matchRun(cat, readRun(got, { exitCode: 1 }), { output: got });
    expect(p.verdict).toBe('partial');
    expect(p.reasons[0]).toMatch(/same message once numbers are masked/);
  });

  it('a report that names only a specific class (its trace cut) is reproduced by that class; a generic one decides nothing', () => {
    const named = readReport(
      '# f raises IndexError on an all-positive batch\n\n```python\nf(x)\n```\n\n`IndexError` with the following stacktrace:\n',
    );
    const out = crashOutput('IndexError: index 4 is out of bounds for dimension 0 with size 4');
    const m = matchRun(named, readRun(out, { exitCode: 1 }), { output: out });
    expect(m.verdict).toBe('reproduced');
    expect(m.reasons[0]).toMatch(/the report names the class only/);
    const other = crashOutput('KeyError: 4');
    expect(matchRun(named, readRun(other, { exitCode: 1 })).verdict).toBe('not_reproduced');
    const generic = readReport('# f raises RuntimeError on CPU\n\n```python\nf(x)\n```\n');
    const rt = crashOutput('RuntimeError: something else entirely');
    expect(matchRun(generic, readRun(rt, { exitCode: 1 })).verdict).not.toBe('reproduced');
  });

  it('another exception class: not reproduced; same kind through another class: partial', () => {
    const other = crashOutput('ValueError: optimizer got an empty parameter list');
    expect(matchRun(report, readRun(other, { exitCode: 1 })).verdict).toBe('not_reproduced');
    const sameKind = crashOutput('ValueError: Expected input batch_size (19) to match target batch_size (1).');
    const m = matchRun(report, readRun(sameKind, { exitCode: 1 }));
    expect(m.verdict).toBe('partial');
    expect(m.reasons[0]).toMatch(/same kind: shape_mismatch/);
  });

  it('a clean run: not reproduced', () => {
    const m = matchRun(report, readRun('ok\n', { exitCode: 0 }), { output: 'ok\n' });
    expect(m).toMatchObject({ verdict: 'not_reproduced', score: 0, reasons: ['no exception in the run; the report shows RuntimeError'] });
    expect(m.compared).toEqual([
      {
        what: 'the exception',
        report: 'RuntimeError: mat1 and mat2 shapes cannot be multiplied (19x1 and 19x1)',
        run: 'no exception',
        basis: 'determined',
        agree: false,
        note: 'the run raised no exception',
      },
    ]);
  });

  it("stays as strict as the judge: the output's last exception line must agree too", () => {
    const out = `${crashOutput('RuntimeError: mat1 and mat2 shapes cannot be multiplied (19x1 and 19x1)')}Exception ignored in: <function _Cleanup>\nKeyError: 'cleanup'\n`;
    const m = matchRun(report, readRun(out, { exitCode: 1 }), { output: out });
    expect(m.verdict).toBe('partial');
    expect(m.reasons.join('\n')).toMatch(/last exception line is KeyError/);
  });

  it('fakes are never reproduced: the output printed literally, the error raised by the script itself', () => {
    const out = crashOutput('RuntimeError: mat1 and mat2 shapes cannot be multiplied (19x1 and 19x1)');
    const printed = `import sys\nsys.stderr.write("RuntimeError: mat1 and mat2 shapes cannot be multiplied (19x1 and 19x1)")`;
    expect(matchRun(report, readRun(out, { exitCode: 1 }), { output: out, script: printed }).verdict).toBe('not_reproduced');
    // The message built at run time: no literal, no telling `raise` argument; the raising frame gives it away.
    const raised = 'import torch\nmsg = "mat1 and mat2 shapes cannot be multiplied (%dx1 and %dx1)" % (19, 19)\nraise RuntimeError(msg)';
    const ownFrame = crashOutput(
      'RuntimeError: mat1 and mat2 shapes cannot be multiplied (19x1 and 19x1)',
      'raise RuntimeError(msg)',
      '/tmp/w/main.py',
    );
    const m = matchRun(report, readRun(ownFrame, { exitCode: 1 }), { output: ownFrame, script: raised });
    expect(m.verdict).toBe('not_reproduced');
    expect(m.reasons[0]).toMatch(/raised by the script's own code \(raise RuntimeError\(msg\)\)/);
    // Built at run time so no literal and no `raise RuntimeError(` shows: the frame that raised still gives it away.
    const sneaky = crashOutput(
      'RuntimeError: mat1 and mat2 shapes cannot be multiplied (19x1 and 19x1)',
      'raise getattr(builtins, n)(msg)',
      '/tmp/w/main.py',
    );
    const s = matchRun(report, readRun(sneaky, { exitCode: 1 }), { output: sneaky, script: 'import builtins\nn = "Runtime" + "Error"\n' });
    expect(s.verdict).toBe('not_reproduced');
    expect(s.reasons[0]).toMatch(/raised by the script's own code/);
  });

  it('an error line printed without a traceback is not the library raising it: partial', () => {
    const out = 'RuntimeError: mat1 and mat2 shapes cannot be multiplied (19x1 and 19x1)\n';
    const m = matchRun(report, readRun(out, { exitCode: 1 }), {
      output: out,
      script: 'import sys\nsys.exit("Runtime" + "Error: mat1 and mat2 shapes " + msg)',
    });
    expect(m.verdict).toBe('partial');
    expect(m.reasons.at(-1)).toBe('but the run printed the error without a traceback, where the report shows one');
  });

  it('comments quoting the expected error and unrelated guards of the same class are not faking', () => {
    const out = crashOutput('RuntimeError: mat1 and mat2 shapes cannot be multiplied (19x1 and 19x1)');
    const script = [
      '# Expected: RuntimeError: mat1 and mat2 shapes cannot be multiplied (19x1 and 19x1)',
      'import torch',
      'if not torch.__version__:',
      '    raise RuntimeError("torch is not installed")  # never happens',
      'x = torch.zeros(19, 1)  # \'#\' inside quotes: "#"',
      'torch.nn.Linear(19, 1)(x)',
    ].join('\n');
    expect(matchRun(report, readRun(out, { exitCode: 1 }), { output: out, script }).verdict).toBe('reproduced');
    const faked = `${script}\nraise RuntimeError("mat1 and mat2 shapes cannot be multiplied (%dx1 and %dx1)" % (n, n))`;
    expect(matchRun(report, readRun(out, { exitCode: 1 }), { output: out, script: faked }).reasons[0]).toMatch(
      /raises RuntimeError itself, with the reported message/,
    );
  });

  it("reusing the report's own code is not faking", () => {
    const out = crashOutput('RuntimeError: mat1 and mat2 shapes cannot be multiplied (19x1 and 19x1)');
    const script = 'import torch\nlr = torch.nn.Linear(19, 1)\nlr(torch.zeros(19, 1))\n';
    expect(matchRun(report, readRun(out, { exitCode: 1 }), { output: out, script }).verdict).toBe('reproduced');
  });
});

describe('matchRun: silent bugs', () => {
  const report = readReport(
    '# flat loss\n```python\ntrain()\n```\n```\nepoch: 1\tTrain Loss : 1.0986\nepoch: 2\tTrain Loss : 1.0986\nepoch: 3\tTrain Loss : 1.0986\n```',
  );

  it('same metric pattern and line shape: reproduced', () => {
    const out =
      'epoch: 1\tTrain Loss : 1.0990\nepoch: 2\tTrain Loss : 1.0990\nepoch: 3\tTrain Loss : 1.0990\nepoch: 4\tTrain Loss : 1.0990\n';
    const m = matchRun(report, readRun(out, { exitCode: 0 }), { output: out });
    expect(m.verdict).toBe('reproduced');
    expect(m.reasons).toContain('same symptom: loss_not_decreasing on train_loss');
  });

  it('the same line shape works from the reading alone (lineShapes) when no output is given', () => {
    const out = 'epoch: 1\tTrain Loss : 2.0\nepoch: 2\tTrain Loss : 2.0\nepoch: 3\tTrain Loss : 2.0\n';
    expect(matchRun(report, readRun(out)).verdict).toBe('reproduced');
  });

  it('a healthy loss in the same format: partial at most; a crash: not reproduced', () => {
    const healthy = 'epoch: 1\tTrain Loss : 1.0986\nepoch: 2\tTrain Loss : 0.5\nepoch: 3\tTrain Loss : 0.1\n';
    expect(matchRun(report, readRun(healthy), { output: healthy }).verdict).toBe('partial');
    const crash = 'Traceback (most recent call last):\n  File "m.py", line 1, in <module>\nRuntimeError: boom\n';
    expect(matchRun(report, readRun(crash, { exitCode: 1 }), { output: crash })).toMatchObject({
      verdict: 'not_reproduced',
      reasons: ['the run crashed (RuntimeError) where the report shows no crash'],
    });
  });

  it('the pattern in another print format: partial (the judge wants the line shape)', () => {
    const out = 'loss=1.0986\nloss=1.0986\nloss=1.0986\n';
    expect(matchRun(report, readRun(out), { output: out }).verdict).toBe('partial');
  });

  it('wrong values: the values must agree, not only the shape', () => {
    const wrong = readReport('# wrong\n```python\nf()\n```\n```\n[tensor([2, 0, 0, 0]), tensor([])]\n```');
    const same = '[tensor([2, 0, 0, 0]), tensor([])]\n';
    const fixed = '[tensor([5, 7, 8, 1]), tensor([])]\n';
    expect(matchRun(wrong, readRun(same), { output: same }).verdict).toBe('reproduced');
    expect(matchRun(wrong, readRun(fixed), { output: fixed }).verdict).toBe('partial');
    expect(matchRun(wrong, readRun(same), { output: same, script: 'print("[tensor([2, 0, 0, 0]), tensor([])]")' }).verdict).toBe(
      'not_reproduced',
    );
  });

  it('a symptom only described in prose does not block a run that prints the reported line and values', () => {
    const nan = readReport(
      '# NaN in GroupNormalization\n\nThe layer produces NaN outputs with a small epsilon.\n```python\nprint(f"NaN detected: {bad}")\n```\n## Observed\n```\nNaN detected: True\n```',
    );
    expect(nan.expected.map((s) => s.kind)).toEqual(['nan_inf']);
    expect(matchRun(nan, readRun('NaN detected: True\n'), { output: 'NaN detected: True\n' }).verdict).toBe('reproduced');
    expect(matchRun(nan, readRun('NaN detected: False\n'), { output: 'NaN detected: False\n' }).verdict).toBe('not_reproduced');
  });

  it('a report with nothing to match: not reproduced, and says why', () => {
    const m = matchRun(readReport('# How do I do X?'), readRun('x'));
    expect(m.verdict).toBe('not_reproduced');
    expect(m.reasons[0]).toMatch(/shows no symptom/);
  });
});

describe("matchRun: silent-bug values, determined vs the reporter's random state (docs/verdicts.md)", () => {
  const issue = (code: string, output: string) => readReport(`# bug\n\`\`\`python\n${code}\n\`\`\`\n\`\`\`\n${output}\n\`\`\``);
  const unseeded = 'import torch\nmodel = torch.nn.Linear(10, 1)\nx = torch.randn(100, 10)\ntrain(model, x)';
  const seeded = `torch.manual_seed(0)\n${unseeded}`;
  const line = 'Train set: Loss: 0.9857, Accuracy: 0/100 (0%)';

  it('values that depend on an unseeded init are compared by pattern only: "partial: pattern reproduced", and the agent may stop', () => {
    const out = 'Train set: Loss: 1.1121, Accuracy: 0/100 (0%)\n';
    const m = matchRun(issue(unseeded, line), readRun(out), { output: out });
    expect(m.verdict).toBe('partial');
    expect(m.patternOnly).toBe(true);
    expect(m.reasons.at(-1)).toMatch(/^pattern reproduced: .*random weight initialisation \(`nn\.Linear`\) with no seed/);
    expect(m.compared?.[0]).toMatchObject({ report: line, run: out.trim(), basis: 'random_state', agree: true });
    expect(m.reasons.join(' ')).not.toMatch(/values agree with the report/);
  });

  it('a pattern value that differs (0 % in the report, 40 % in the run) is not the pattern: partial, and the agent goes on', () => {
    const out = 'Train set: Loss: 1.1121, Accuracy: 40/100 (40%)\n';
    const m = matchRun(issue(unseeded, line), readRun(out), { output: out });
    expect(m).toMatchObject({ verdict: 'partial' });
    expect(m.patternOnly).toBeUndefined();
    expect(m.compared?.[0]?.note).toBe('0 in the report, 40 in the run: the pattern differs (the report shows zero)');
  });

  it('seeded code makes the same values determined: within the stated tolerance reproduced, beyond it partial with both numbers', () => {
    const near = 'Train set: Loss: 0.9901, Accuracy: 0/100 (0%)\n';
    const far = 'Train set: Loss: 1.1121, Accuracy: 0/100 (0%)\n';
    const ok = matchRun(issue(seeded, line), readRun(near), { output: near });
    expect(ok.verdict).toBe('reproduced');
    expect(ok.compared?.[0]).toMatchObject({ basis: 'determined', agree: true });
    expect(ok.compared?.[0]?.note).toMatch(
      /^values agree within 5 % or 0\.01 \(the report's code seeds its random generator \(`torch\.manual_seed`\)\)$/,
    );
    const off = matchRun(issue(seeded, line), readRun(far), { output: far });
    expect(off.verdict).toBe('partial');
    expect(off.patternOnly).toBeUndefined();
    expect(off.compared?.[0]?.note).toMatch(/^0\.9857 in the report, 1\.1121 in the run: not within 5 % or 0\.01/);
  });

  it("code with no randomness and no outside data is determined; data read from a file is the reporter's", () => {
    const det = issue('import torch\nx = torch.tensor([1, 2, 3])\nprint(x * 2)', 'tensor([2, 4, 6])');
    const fixed = 'tensor([2, 4, 7])\n';
    expect(matchRun(det, readRun(fixed), { output: fixed }).compared?.[0]).toMatchObject({ basis: 'determined', agree: false });
    const data = issue("import pandas as pd\ndf = pd.read_csv('/home/me/data.csv')\nprint(df.mean())", 'mean: 3.5');
    const out = 'mean: 7.25\n';
    const m = matchRun(data, readRun(out), { output: out });
    expect(m).toMatchObject({ verdict: 'partial', patternOnly: true });
    expect(m.compared?.[0]?.note).toMatch(/data or weights only the reporter has \(`read_csv\(`\)/);
  });

  it('NaN at a step is a pattern: NaN against NaN agrees whatever the random state; NaN against a number does not', () => {
    const report = issue(unseeded, 'step 3 loss: nan');
    expect(matchRun(report, readRun('step 3 loss: nan\n'), { output: 'step 3 loss: nan\n' }).compared?.[0]?.agree).toBe(true);
    expect(matchRun(report, readRun('step 3 loss: 0.25\n'), { output: 'step 3 loss: 0.25\n' }).verdict).toBe('not_reproduced');
  });

  it('a reported pattern symptom (flat loss) with random-state values: the symptom kind plus the pattern reproduce it', () => {
    const report = issue(unseeded, 'epoch: 1 Train Loss : 1.2345\nepoch: 2 Train Loss : 1.2345\nepoch: 3 Train Loss : 1.2345');
    const out = 'epoch: 1 Train Loss : 0.7000\nepoch: 2 Train Loss : 0.7000\nepoch: 3 Train Loss : 0.7000\n';
    const m = matchRun(report, readRun(out), { output: out });
    expect(m.verdict).toBe('reproduced');
    expect(m.compared?.[0]).toMatchObject({ basis: 'random_state', agree: true, notCompared: ['1.2345'] });
  });

  it('a chance-level loss (ln 3 = 1.0986…) is a pattern value: the run must show it too', () => {
    const report = issue(unseeded, 'epoch: 10 Train Loss : 1.0986123085021973');
    const chance = 'epoch: 10 Train Loss : 1.0986122131347656\n';
    expect(matchRun(report, readRun(chance), { output: chance })).toMatchObject({ verdict: 'reproduced' });
    const learning = 'epoch: 10 Train Loss : 0.3133\n';
    const m = matchRun(report, readRun(learning), { output: learning });
    expect(m.verdict).toBe('partial');
    expect(m.patternOnly).toBeUndefined();
    expect(m.compared?.[0]?.note).toMatch(/the pattern differs \(the report shows a chance-level loss \(ln k\)\)/);
  });

  it('so-063 shaped: parameters of a function the snippet calls with what it builds are not "never built" (issue 25)', () => {
    const code = [
      'import torch',
      'def softmax_loss(network, labels):',
      '    logits = network(torch.ones(4, 3))',
      '    p = torch.exp(logits) / torch.exp(logits).sum()',
      '    return -(p[range(4), labels]).log().mean()',
      'torch.manual_seed(0)',
      'net = torch.nn.Linear(3, 3)',
      'y = torch.tensor([0, 1, 2, 0])',
      'print("loss", softmax_loss(net, y))',
    ].join('\n');
    const basis = valueBasis(issue(code, 'loss 2.4849'));
    expect(basis.why).not.toMatch(/never builds/);
    expect(basis).toMatchObject({ basis: 'determined' });
  });

  it("the unseeded model or data of a snippet that never builds them is the reporter's: `model` as a parameter does not count as built", () => {
    const report = issue(
      'def train_model(model, optimizer, train_loader, criterion=criterion):\n  for x, y in train_loader:\n    loss = criterion(model(x), y)\n  print("Train Loss: %.3f" % loss)',
      'Train Loss: 10.627',
    );
    const out = 'Train Loss: 3.100\n';
    const m = matchRun(report, readRun(out), { output: out });
    expect(m).toMatchObject({ verdict: 'partial', patternOnly: true });
    expect(m.compared?.[0]?.note).toMatch(/a model or data the report's code uses but never builds \(`model`, `train_loader`\)/);
  });
});

describe('matchRun: a reported warning, raised once made an error', () => {
  const report = readReport(
    '# unload() keeps peft_config\n\n```python\nfrom peft import get_peft_model\n```\n\nI get the following warning:\n```\n' +
      '/usr/lib/python3/dist-packages/peft/tuners/tuners_utils.py:285: UserWarning: Already found a `peft_config` attribute in the model. This will lead to having multiple adapters in the model.\n' +
      '  warnings.warn(\n```\n',
  );
  const script =
    'import warnings\nwarnings.filterwarnings("error", category=UserWarning)\nfrom peft import get_peft_model\nget_peft_model(m, c)\n';
  const raised =
    'Traceback (most recent call last):\n  File "/tmp/r/repro.py", line 4, in <module>\n    get_peft_model(m, c)\n' +
    '  File "/workspace/src/peft/tuners/tuners_utils.py", line 285, in __init__\n    warnings.warn(\n' +
    'UserWarning: Already found a `peft_config` attribute in the model. This will lead to having multiple adapters in the model.\n';

  it('the warning raised from inside the library, with its message: reproduced', () => {
    const m = matchRun(report, readRun(raised, { exitCode: 1 }), { script, output: raised, projectRoots: ['/workspace'] });
    expect(m.verdict, m.reasons.join('\n')).toBe('reproduced');
  });

  it('the warning only printed (exit 0), or another warning raised: not reproduced', () => {
    const printed =
      '/workspace/src/peft/tuners/tuners_utils.py:285: UserWarning: Already found a `peft_config` attribute in the model.\n  warnings.warn(\n';
    expect(matchRun(report, readRun(printed, { exitCode: 0 }), { script, output: printed }).verdict).not.toBe('reproduced');
    const other = raised.replace(
      /UserWarning: Already found.*\n$/,
      'UserWarning: You are trying to modify a model with PEFT for a second time.\n',
    );
    expect(matchRun(report, readRun(other, { exitCode: 1 }), { script, output: other, projectRoots: ['/workspace'] }).verdict).not.toBe(
      'reproduced',
    );
  });
});

describe('matchRun: against the project, the reported line printed, then the script’s own check fails', () => {
  // diffusers #10738's shape: the report's output is a line the bug produces, and no expectation to assert.
  const report = readReport(
    '# schedule too short\n\n```python\nrun()\n```\n\nIt logs:\n```text\nsteps run 8/10 (sigma index out of range)\n```\n',
  );
  const out =
    'steps run 8/10 (sigma index out of range)\nTraceback (most recent call last):\n  File "/tmp/r/repro.py", line 9, in <module>\n' +
    '    assert done == total, f"steps run {done}/{total}"\nAssertionError: steps run 8/10\n';

  it('reproduced against the project; without a checkout it stays a crash the report does not show', () => {
    const withProject = matchRun(report, readRun(out, { exitCode: 1 }), { script: 'run()\n', output: out, projectRoots: ['/workspace'] });
    expect(withProject.verdict, withProject.reasons.join('\n')).toBe('reproduced');
    expect(matchRun(report, readRun(out, { exitCode: 1 }), { script: 'run()\n', output: out }).verdict).toBe('not_reproduced');
  });

  it('an AssertionError raised inside the library is still a crash the report does not show', () => {
    const lib = out.replace('File "/tmp/r/repro.py", line 9, in <module>', 'File "/workspace/sched.py", line 9, in step');
    expect(matchRun(report, readRun(lib, { exitCode: 1 }), { script: 'run()\n', output: lib, projectRoots: ['/workspace'] }).verdict).toBe(
      'not_reproduced',
    );
  });
});

describe('matchRun: against the project, a report that says in words what should happen and shows the wrong line', () => {
  const report = readReport(
    '# schedule too short\n\nThe scheduler should run all of its steps.\n\n```python\nrun()\n```\n\nIt logs:\n```text\nsteps run 8/10 (sigma index out of range)\n```\n',
  );
  const out =
    'steps run 8/10 (sigma index out of range)\nTraceback (most recent call last):\n  File "/tmp/r/repro.py", line 9, in <module>\n' +
    '    assert done == total, f"steps run {done}/{total}"\nAssertionError: steps run 8/10\n';
  const script = 'run()\ndone, total = 8, 10\nprint(f"steps run {done}/{total} (sigma index out of range)")\nassert done == total\n';

  it('the line printed, then the script’s own check with no value: the line decides against the project only', () => {
    expect(report.expectations?.length ?? 0).toBeGreaterThan(0);
    const p = matchRun(report, readRun(out, { exitCode: 1 }), { script, output: out, projectRoots: ['/workspace'] });
    expect(p.verdict, p.reasons.join('\n')).toBe('reproduced');
    const n = matchRun(report, readRun(out, { exitCode: 1 }), { script, output: out });
    expect(n.verdict).toBe('not_reproduced');
    expect(n.reasons[0]).toMatch(/states no value the report gives/);
    // Without the reported line the check alone shows nothing.
    const bare = out.replace(/^steps run 8\/10 \(sigma index out of range\)\n/, '');
    expect(matchRun(report, readRun(bare, { exitCode: 1 }), { script, output: bare, projectRoots: ['/workspace'] }).verdict).not.toBe(
      'reproduced',
    );
  });
});
