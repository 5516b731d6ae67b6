import { describe, expect, it } from 'vitest';
import { matchRun, readReport, readRun } from '../../src/symptoms/index.js';
import { quoteCoverage } from '../../src/symptoms/match-stated.js';

// Issue 40 items 1 and 2: quoted output is a symptom whatever its shape, and "should work" is an expectation.

/** A run's output: a traceback through the script's line `call` into `file`'s `fn`, ending in `tail`. */
function runOutput(call: string, tail: string, file = '/work/checkout/pkg/mod.py', fn = 'forward'): string {
  return [
    'Traceback (most recent call last):',
    '  File "/tmp/w/repro.py", line 7, in <module>',
    `    ${call}`,
    `  File "${file}", line 40, in ${fn}`,
    '    return self.inner(x)',
    tail,
    '',
  ].join('\n');
}

const TORCHSCRIPT_TAIL = [
  'RuntimeError: ',
  'Previous return statement returned a value of type Dict[str, Tensor] but this return statement returns a value of type List[Tensor]:',
  '  File "/work/checkout/timm/models/_features.py", line 352',
  '        if self.return_dict:',
  '            return out',
  '        return list(out.values())',
  '        ~~~~~~~~~~~~~~~~~~~~~~~~ <--- HERE',
].join('\n');

const TIMM_REPORT = [
  '# features_only models are no longer scriptable',
  '',
  '```python',
  'import timm, torch',
  "model = timm.create_model('resnet18', features_only=True)",
  'torch.jit.script(model)',
  '```',
  '',
  'Started appearing with 1.0.7. I get this error:',
  '',
  '```',
  'revious return statement returned a value of type Dict[str, Tensor] but this return statement returns a value of type List[Tensor]:',
  '  File "/usr/lib/python3.11/site-packages/timm/models/_features.py", line 352',
  '        if self.return_dict:',
  '            return out',
  '        return list(out.values())',
  '        ~~~~~~~~~~~~~~~~~~~~~~~~ <--- HERE',
  '```',
  '',
  'Expected: models with feature extraction turned on are still script-able.',
].join('\n');

describe('quoted output with no exception class (item 1)', () => {
  it("reads TorchScript's class-alone line: the run's message is the next line, not empty", () => {
    const run = readRun(runOutput('torch.jit.script(model)', TORCHSCRIPT_TAIL, '/x/site-packages/torch/jit/_script.py', 'script'));
    expect(run.exception?.type).toBe('RuntimeError');
    expect(run.exception?.message.split('\n')[0]).toMatch(/^Previous return statement returned a value of type Dict/);
  });

  it('timm: a compiler message pasted after "I get this error:", its first letter cut, is the symptom, never the `<--- HERE` line', () => {
    const report = readReport(TIMM_REPORT);
    expect(report.expected.length).toBeGreaterThan(0);
    expect(report.expected.map((s) => s.evidence).join('\n')).not.toMatch(/<--- HERE/);
    expect(report.lastOutputLine).not.toMatch(/<--- HERE/);
    const quoted = report.expected.find((s) => s.quoted);
    expect(quoted?.quoted).toMatch(/^revious return statement returned/);
    const out = runOutput('torch.jit.script(model)', TORCHSCRIPT_TAIL, '/x/site-packages/torch/jit/_script.py', 'script');
    const m = matchRun(report, readRun(out), {
      output: out,
      script: "import timm, torch\ntorch.jit.script(timm.create_model('resnet18'))",
    });
    expect(m.verdict).toBe('reproduced');
    const other = runOutput('torch.jit.script(model)', 'RuntimeError: Expected a value of type Tensor for argument x but found int');
    expect(matchRun(report, readRun(other), { output: other }).verdict).not.toBe('reproduced');
  });

  it('timm: the same message pasted with its class alone on a line above it is read as that class with that message', () => {
    const md = TIMM_REPORT.replace('```\nrevious', '```\nRuntimeError:\nrevious');
    const report = readReport(md);
    expect(report.expected[0]?.exception).toEqual({ type: 'RuntimeError', message: expect.stringMatching(/^revious return statement/) });
    const out = runOutput('torch.jit.script(model)', TORCHSCRIPT_TAIL, '/x/site-packages/torch/jit/_script.py', 'script');
    expect(matchRun(report, readRun(out), { output: out }).verdict).toBe('reproduced');
  });

  it('einops: a message quoted in a code comment after the call (`# gives "…"`) is matched by its words, whatever the class', () => {
    const md = [
      '# wrong error message for ellipsis on the right',
      '```python',
      'import numpy as np',
      'from einops import rearrange',
      'x = np.zeros((2, 3, 4))',
      'rearrange(x, "a b c -> a ... c")  # gives "Ellipsis found in left side, but not right side of a pattern a b c -> a ... c"',
      '```',
      'It is the right side that has the ellipsis.',
    ].join('\n');
    const report = readReport(md);
    const quoted = report.expected.find((s) => s.quoted);
    expect(quoted?.quoted).toBe('Ellipsis found in left side, but not right side of a pattern a b c -> a ... c');
    const tail =
      'einops.EinopsError:  Error while processing rearrange-reduction pattern "a b c -> a ... c".\n Input tensor shape: (2, 3, 4). Additional info: {}.\n Ellipsis found in left side, but not right side of a pattern a b c -> a ... c';
    const out = runOutput('rearrange(x, "a b c -> a ... c")', tail, '/work/checkout/einops/einops.py', 'reduce');
    expect(matchRun(report, readRun(out), { output: out }).verdict).toBe('reproduced');
    const clean = 'done\n';
    expect(matchRun(report, readRun(clean), { output: clean }).verdict).toBe('not_reproduced');
  });

  it('accelerate: a `# KeyError` comment after the last call is the KeyError the run must raise', () => {
    const md = [
      '# patch_environment does not restore variables',
      '```python',
      'import os',
      'from accelerate.utils import patch_environment',
      'with patch_environment(aa=1):',
      '    pass',
      'os.environ["AA"]  # KeyError',
      '```',
      'After leaving the context, the initial environment variables should be restored.',
    ].join('\n');
    const report = readReport(md);
    expect(report.expected[0]?.exception?.type).toBe('KeyError');
    expect(report.expected[0]?.kind).toBe('key_error');
    const out = runOutput('os.environ["AA"]', "KeyError: 'AA'", '/usr/lib/python3.11/os.py', '__getitem__');
    expect(matchRun(report, readRun(out), { output: out }).verdict).toBe('reproduced');
  });

  it('kornia: a RuntimeError named in prose with its message cut is matched through the project function the report shows', () => {
    const md = [
      '# RandomAffine fails when the batch size changes',
      '```python',
      'import torch, kornia',
      'aug = kornia.augmentation.RandomAffine(10.0, p=1.0)',
      'aug(torch.rand(2, 3, 8, 8))',
      'aug(torch.rand(4, 3, 8, 8))',
      '```',
      'A RuntimeError is thrown when the batch size changes:',
      '```',
      'Traceback (most recent call last):',
      '  File "/home/u/t.py", line 5, in <module>',
      '    aug(torch.rand(4, 3, 8, 8))',
      '  File "/home/u/.venv/lib/python3.10/site-packages/kornia/augmentation/base.py", line 210, in forward',
      '    output = self.apply_func(in_tensor, params)',
      '  File "/home/u/.venv/lib/python3.10/site-packages/kornia/augmentation/_2d/geometric/affine.py", line 88, in apply_transform',
      '    return warp_affine(input, transform[:, :2, :], (height, width))',
      '```',
    ].join('\n');
    const report = readReport(md);
    expect(report.expected[0]?.exception).toEqual({ type: 'RuntimeError', message: '' });
    const through = runOutput(
      'aug(torch.rand(4, 3, 8, 8))',
      'RuntimeError: The size of tensor a (4) must match the size of tensor b (2) at non-singleton dimension 0',
      '/work/checkout/kornia/augmentation/_2d/geometric/affine.py',
      'apply_transform',
    );
    const m = matchRun(report, readRun(through), { output: through });
    expect(m.verdict).toBe('reproduced');
    expect(m.reasons.join(' ')).toMatch(/apply_transform/);
    const elsewhere = runOutput('aug(torch.rand(4, 3, 8, 8))', 'RuntimeError: boom', '/work/checkout/kornia/color/hsv.py', 'rgb_to_hsv');
    expect(matchRun(report, readRun(elsewhere), { output: elsewhere }).verdict).toBe('partial');
  });

  it('tolerates a cut first and last word, and no more', () => {
    expect(
      quoteCoverage(
        'revious return statement returned a value of type Dict',
        'Previous return statement returned a value of type Dict[str]',
      ),
    ).toBe(1);
    expect(quoteCoverage('the axes do not match the pattern', 'shape mismatch in layer')).toBeLessThan(0.6);
  });
});

describe('"should work" is an expectation (item 2)', () => {
  it('timm: "are still script-able" makes a run raising inside torch.jit.script the expectation failing, deterministically', () => {
    const md = [
      '# features_only models cannot be scripted',
      '```python',
      'import timm, torch',
      "model = timm.create_model('resnet18', features_only=True)",
      'torch.jit.script(model)',
      '```',
      'Expected: models with feature extraction turned on are still script-able.',
    ].join('\n');
    const report = readReport(md);
    expect(report.expected).toEqual([expect.objectContaining({ category: 'crash', raisedIn: expect.stringContaining('jit') })]);
    const inScript = runOutput(
      'torch.jit.script(model)',
      'torch.jit.frontend.NotSupportedError: Comprehension ifs are not supported yet',
      '/x/site-packages/torch/jit/_script.py',
      'script',
    );
    expect(matchRun(report, readRun(inScript), { output: inScript }).verdict).toBe('reproduced');
    const missing = runOutput('import timm', "ModuleNotFoundError: No module named 'timm'", '/x/importlib/__init__.py', 'import_module');
    expect(matchRun(report, readRun(missing), { output: missing }).verdict).toBe('not_reproduced');
    const elsewhere = runOutput(
      "timm.create_model('resnet18', features_only=True)",
      'RuntimeError: bad config',
      '/work/checkout/timm/models/_builder.py',
      'build',
    );
    expect(matchRun(report, readRun(elsewhere), { output: elsewhere }).verdict).toBe('partial');
    expect(matchRun(report, readRun('ok\n'), { output: 'ok\n' }).verdict).toBe('not_reproduced');
  });

  it('keras: "should be exportable" is held to the export call; accelerate: "should run without error" to any call', () => {
    const keras = readReport(
      [
        '# export fails for a model with a Lambda layer',
        '```python',
        'import keras',
        'model = keras.Sequential([keras.layers.Lambda(lambda x: x * 2)])',
        'model.export("out")',
        '```',
        'A model with a Lambda layer should be exportable.',
      ].join('\n'),
    );
    const out = runOutput(
      'model.export("out")',
      'ValueError: Cannot export a model with a Lambda layer',
      '/work/checkout/keras/src/export/export_lib.py',
      'export_saved_model',
    );
    expect(matchRun(keras, readRun(out), { output: out }).verdict).toBe('reproduced');
    const acc = readReport(
      [
        '# prepare fails',
        '```python',
        'from accelerate import Accelerator',
        'Accelerator().prepare(model)',
        '```',
        'This should run without errors on CPU.',
      ].join('\n'),
    );
    const raised = runOutput(
      'Accelerator().prepare(model)',
      'TypeError: unsupported operand',
      '/work/checkout/accelerate/accelerator.py',
      'prepare',
    );
    expect(matchRun(acc, readRun(raised), { output: raised, projectRoots: ['/work/checkout'] }).verdict).toBe('reproduced');
    // A sentence that names no call is held to the project: an exception that never passes through it is not enough.
    expect(matchRun(acc, readRun(raised), { output: raised }).verdict).toBe('partial');
  });
});

describe('"should work" beside printed values (torchmetrics)', () => {
  it('a run that does not raise is judged by the printed values, not refused for raising nothing', () => {
    const md = [
      '# compute differs after update with a list',
      '```python',
      'import torch, torchmetrics',
      'metric = torchmetrics.MeanSquaredError()',
      'metric.update(torch.tensor([1.0]), torch.tensor([1.0]))',
      'print(metric.compute())  # tensor(nan)',
      '```',
      'Both ways of updating the metric should work.',
    ].join('\n');
    const report = readReport(md);
    expect(report.expected.some((s) => s.raisedIn !== undefined)).toBe(true);
    const out = 'tensor(nan)\n';
    const m = matchRun(report, readRun(out), { output: out });
    expect(m.reasons.join(' ')).not.toMatch(/raised no exception/);
  });
});

describe('"X doesn\'t work" is the same expectation, said of the bug (item 2)', () => {
  it('keras: "ops.reshape(tensor, -1) wasn\'t working on torch backend" is held to reshape', () => {
    const report = readReport(
      ['# Fix torch reshape', '', "ops.reshape(tensor, -1) wasn't working on torch backend. It's a fairly common numpy-ism."].join('\n'),
    );
    expect(report.expected).toEqual([expect.objectContaining({ category: 'crash', raisedIn: String.raw`\breshape\b` })]);
    const raised = runOutput(
      'y = ops.reshape(x, -1)',
      "TypeError: reshape(): argument 'shape' (position 2) must be tuple of ints, not int",
      '/work/checkout/keras/src/backend/torch/numpy.py',
      'reshape',
    );
    expect(matchRun(report, readRun(raised), { output: raised }).verdict).toBe('reproduced');
    const other = runOutput('y = ops.transpose(x)', 'TypeError: bad axes', '/work/checkout/keras/src/ops/numpy.py', 'transpose');
    expect(matchRun(report, readRun(other), { output: other }).verdict).toBe('partial');
    expect(matchRun(report, readRun('(6,)\n'), { output: '(6,)\n' }).verdict).toBe('not_reproduced');
  });

  it('torchmetrics: "`MeanAveragePrecision` does not work …" names the class; lightning: "`apply_to_collection` is broken …"', () => {
    const tm = readReport(
      ['# mAP with empty targets', '`MeanAveragePrecision` does not work when an image has no ground-truth boxes.'].join('\n'),
    );
    expect(tm.expected).toEqual([expect.objectContaining({ raisedIn: String.raw`\bMeanAveragePrecision\b` })]);
    const lu = readReport(['# frozen dataclasses', 'Since 0.9 `apply_to_collection` is broken for frozen dataclasses.'].join('\n'));
    expect(lu.expected).toEqual([expect.objectContaining({ category: 'crash', raisedIn: String.raw`\bapply_to_collection\b` })]);
    const inProject = runOutput(
      'apply_to_collection(data, torch.Tensor, move)',
      'AttributeError: cannot set attribute',
      '/work/checkout/src/lightning_utilities/core/apply_func.py',
      'apply_to_collection',
    );
    expect(matchRun(lu, readRun(inProject), { output: inProject }).verdict).toBe('reproduced');
    const elsewhere = runOutput('data = Frozen(a=torch.ones(1))', 'TypeError: bad field', '/work/checkout/tests/helpers.py', 'make');
    expect(matchRun(lu, readRun(elsewhere), { output: elsewhere }).verdict).toBe('partial');
    // A sentence that names no call is nothing a run could be held to.
    expect(readReport('# My model is weird\n\nIt does not work well, please help.\n').expected).toEqual([]);
  });

  it('is no symptom beside what the report shows: code, a traceback, a value it expected, or a quoted message decide', () => {
    // Beside code it may mean a wrong result (lightning-utilities: stale cached properties, no crash): the code decides.
    const withCode = readReport(
      [
        "# `apply_to_collection` doesn't work for cached properties",
        'When running `apply_to_collection` on a `dataclass`, cached properties do not get modified.',
        '```py',
        'new_data = apply_to_collection(data, Tensor, lambda x: x.to(torch.float64))',
        'print(new_data.b.dtype)',
        '```',
      ].join('\n'),
    );
    expect(withCode.expected.some((s) => s.raisedIn !== undefined)).toBe(false);
    const withValue = readReport(
      [
        '# r2 score',
        '```python',
        'print(r2(p, t))  # tensor(82685.5)',
        '```',
        'R2Score does not work: it returns 82685.5, expected 0.',
      ].join('\n'),
    );
    expect(withValue.expected.some((s) => s.raisedIn !== undefined)).toBe(false);
    const withTrace = readReport(
      [
        '# parse_shape does not work for scalars',
        '```',
        'Traceback (most recent call last):',
        '  File "x.py", line 1, in <module>',
        'ValueError: not enough values to unpack (expected 1, got 0)',
        '```',
        "parse_shape doesn't work with a 0-d tensor.",
      ].join('\n'),
    );
    expect(withTrace.expected).toEqual([expect.objectContaining({ exception: expect.objectContaining({ type: 'ValueError' }) })]);
    // "I can't run it on GPU" says nothing about the call.
    expect(readReport('# slow\nI cannot run this on my GPU, so I tried CPU. The loss should go down faster.').expected).toEqual([]);
  });
});
