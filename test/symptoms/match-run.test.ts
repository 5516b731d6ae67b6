import { describe, expect, it } from 'vitest';
import { matchRun, readReport, readRun } from '../../src/symptoms/index.js';

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

function crashOutput(line: string, code = 'return F.linear(input, self.weight, self.bias)', file = '/usr/lib/python3/dist-packages/torch/nn/modules/linear.py'): string {
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

  it('other numbers in the shapes: the reasons say the numbers differ; the verdict follows the judge\'s word overlap', () => {
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
    expect(m).toEqual({ verdict: 'not_reproduced', score: 0, reasons: ['no exception in the run; the report shows RuntimeError'] });
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
    const ownFrame = crashOutput('RuntimeError: mat1 and mat2 shapes cannot be multiplied (19x1 and 19x1)', 'raise RuntimeError(msg)', '/tmp/w/main.py');
    const m = matchRun(report, readRun(ownFrame, { exitCode: 1 }), { output: ownFrame, script: raised });
    expect(m.verdict).toBe('not_reproduced');
    expect(m.reasons[0]).toMatch(/raised by the script's own code \(raise RuntimeError\(msg\)\)/);
    // Built at run time so no literal and no `raise RuntimeError(` shows: the frame that raised still gives it away.
    const sneaky = crashOutput('RuntimeError: mat1 and mat2 shapes cannot be multiplied (19x1 and 19x1)', 'raise getattr(builtins, n)(msg)', '/tmp/w/main.py');
    const s = matchRun(report, readRun(sneaky, { exitCode: 1 }), { output: sneaky, script: 'import builtins\nn = "Runtime" + "Error"\n' });
    expect(s.verdict).toBe('not_reproduced');
    expect(s.reasons[0]).toMatch(/raised by the script's own code/);
  });

  it('an error line printed without a traceback is not the library raising it: partial', () => {
    const out = 'RuntimeError: mat1 and mat2 shapes cannot be multiplied (19x1 and 19x1)\n';
    const m = matchRun(report, readRun(out, { exitCode: 1 }), { output: out, script: 'import sys\nsys.exit("Runtime" + "Error: mat1 and mat2 shapes " + msg)' });
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
      "x = torch.zeros(19, 1)  # '#' inside quotes: \"#\"",
      'torch.nn.Linear(19, 1)(x)',
    ].join('\n');
    expect(matchRun(report, readRun(out, { exitCode: 1 }), { output: out, script }).verdict).toBe('reproduced');
    const faked = `${script}\nraise RuntimeError("mat1 and mat2 shapes cannot be multiplied (%dx1 and %dx1)" % (n, n))`;
    expect(matchRun(report, readRun(out, { exitCode: 1 }), { output: out, script: faked }).reasons[0]).toMatch(/raises RuntimeError itself, with the reported message/);
  });

  it("reusing the report's own code is not faking", () => {
    const out = crashOutput('RuntimeError: mat1 and mat2 shapes cannot be multiplied (19x1 and 19x1)');
    const script = 'import torch\nlr = torch.nn.Linear(19, 1)\nlr(torch.zeros(19, 1))\n';
    expect(matchRun(report, readRun(out, { exitCode: 1 }), { output: out, script }).verdict).toBe('reproduced');
  });
});

describe('matchRun: silent bugs', () => {
  const report = readReport('# flat loss\n```python\ntrain()\n```\n```\nepoch: 1\tTrain Loss : 1.0986\nepoch: 2\tTrain Loss : 1.0986\nepoch: 3\tTrain Loss : 1.0986\n```');

  it('same metric pattern and line shape: reproduced', () => {
    const out = 'epoch: 1\tTrain Loss : 1.0990\nepoch: 2\tTrain Loss : 1.0990\nepoch: 3\tTrain Loss : 1.0990\nepoch: 4\tTrain Loss : 1.0990\n';
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
    expect(matchRun(report, readRun(crash, { exitCode: 1 }), { output: crash })).toMatchObject({ verdict: 'not_reproduced', reasons: ['the run crashed (RuntimeError) where the report shows no crash'] });
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
    expect(matchRun(wrong, readRun(same), { output: same, script: 'print("[tensor([2, 0, 0, 0]), tensor([])]")' }).verdict).toBe('not_reproduced');
  });

  it('a symptom only described in prose does not block a run that prints the reported line and values', () => {
    const nan = readReport('# NaN in GroupNormalization\n\nThe layer produces NaN outputs with a small epsilon.\n```python\nprint(f"NaN detected: {bad}")\n```\n## Observed\n```\nNaN detected: True\n```');
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
