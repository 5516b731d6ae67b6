import { describe, expect, it } from 'vitest';
import { oracleSection, readReport, readRun } from '../../src/symptoms/index.js';
import { cpuMsOf } from '../helpers/cpu-time.js';

describe('readReport', () => {
  it("never reads the reporter's environment listing as the bug's output, and still reads its versions", () => {
    const collectEnv = [
      '# draw_line draws nothing for coordinates past 255',
      '',
      '```python',
      'from kornia.utils.draw import draw_line',
      'img = draw_line(img, a, b, color)',
      '```',
      '',
      '### Environment',
      '',
      '```console',
      'Collecting environment information...',
      'PyTorch version: 1.8.2',
      'Is debug build: False',
      'CUDA used to build PyTorch: 11.1',
      'ROCM used to build PyTorch: N/A',
      '```',
    ].join('\n');
    const r = readReport(collectEnv);
    expect(r.expected).toEqual([]);
    expect(r.lastOutputLine).toBe('');
    expect(r.versions).toContainEqual({ name: 'torch', version: '1.8.2' });
    // An issue template's list (transformers-cli env), unfenced language: versions, not output.
    const template = readReport(
      '# x\n\n```\n- `transformers` version: 4.40.0\n- Platform: Linux-5.15\n- Python version: 3.10.12\n- PyTorch version (GPU?): 2.2.1+cu121 (True)\n```',
    );
    expect(template.expected).toEqual([]);
    // Output that merely mentions a version is still output.
    const printed = readReport('# x\n\n```\ntorch version: 2.1.0\nloss: nan\nloss: nan\n```');
    expect(printed.lastOutputLine).toBe('loss: nan');
  });

  it('separates code, pasted output and version blocks; reads title, versions and the expected crash', () => {
    const md = [
      '# RuntimeError: expected scalar type Float but found Double',
      '',
      'Running on Python 3.10 with CUDA 11.8 and PyTorch version: 1.13.1.',
      '```python',
      'import torch',
      'x = torch.randn(2, 2, dtype=torch.float64)',
      'torch.nn.Linear(2, 2)(x)',
      '```',
      'Output:',
      '```',
      'Traceback (most recent call last):',
      '  File "bug.py", line 3, in <module>',
      '    torch.nn.Linear(2, 2)(x)',
      'RuntimeError: expected scalar type Float but found Double',
      '```',
      '```',
      'numpy==1.26.4',
      'torch==1.13.1',
      '```',
    ].join('\n');
    const r = readReport(md);
    expect(r.title).toBe('RuntimeError: expected scalar type Float but found Double');
    expect(r.codeBlocks).toEqual([
      { lang: 'python', code: 'import torch\nx = torch.randn(2, 2, dtype=torch.float64)\ntorch.nn.Linear(2, 2)(x)' },
    ]);
    expect(r.tracebacks.map((t) => t.exception.type)).toEqual(['RuntimeError']);
    expect(r.versions).toEqual([
      { name: 'python', version: '3.10' },
      { name: 'cuda', version: '11.8' },
      { name: 'torch', version: '1.13.1' },
      { name: 'numpy', version: '1.26.4' },
    ]);
    expect(r.expected).toHaveLength(1);
    expect(r.expected[0]).toMatchObject({
      kind: 'dtype_mismatch',
      category: 'crash',
      exception: { type: 'RuntimeError', message: 'expected scalar type Float but found Double' },
    });
    expect(r.lastOutputLine).toBe('RuntimeError: expected scalar type Float but found Double');
    expect(r.outputText).toContain('Traceback (most recent call last):');
  });

  it('reads the versions of an issue template (diffusers’), which it once asked the reporter for again', () => {
    const md =
      '### System Info\n\n- 🤗 Diffusers version: 0.35.0\n- Python version: 3.10.12\n- PyTorch version (GPU?): 2.8.0+cu129 (True)\n- Accelerate version: 1.10.1\n';
    expect(readReport(md).versions).toEqual([
      { name: 'diffusers', version: '0.35.0' },
      { name: 'python', version: '3.10.12' },
      { name: 'accelerate', version: '1.10.1' },
      { name: 'torch', version: '2.8.0+cu129' },
    ]);
  });

  it('reads a silent bug from pasted training output: metric lines, series and pattern', () => {
    const md =
      '# loss stays at 0.693\n\n```python\nfor epoch in range(3):\n    train()\n```\n\nI get:\n\n```\nEpoch 1/3 - loss: 0.6931 - accuracy: 0.5000\nEpoch 2/3 - loss: 0.6931 - accuracy: 0.5000\nEpoch 3/3 - loss: 0.6931 - accuracy: 0.5000\n```\n';
    const r = readReport(md);
    expect(r.metricLines).toHaveLength(3);
    expect(r.metrics).toEqual([
      { name: 'loss', values: [0.6931, 0.6931, 0.6931] },
      { name: 'accuracy', values: [0.5, 0.5, 0.5] },
    ]);
    expect(r.expected.map((s) => `${s.kind}:${s.metric}`)).toEqual(['loss_not_decreasing:loss', 'accuracy_at_chance:accuracy']);
  });

  it('takes tracebacks from python-tagged blocks that hold only output, and error lines from prose', () => {
    const md =
      "I get\n```python\n...\n.../.venv/lib/python3.12/site-packages/keras/src/backend/common/name_scope.py\", line 61, in __exit__\n    name_scope_stack.pop()\n    ^^^^^^^^^^^^^^^^^^^^\nAttributeError: 'NoneType' object has no attribute 'pop'\n```\nor\n```python\n .../name_scope.py\", line 61, in __exit__\n    name_scope_stack.pop()\nIndexError: pop from empty list\n```\nSee `KeyError: 'scope'` too.";
    const r = readReport(md);
    expect(r.codeBlocks).toEqual([]);
    // The traceback was pasted without its header and cut at the front: still read as one.
    expect(r.tracebacks).toHaveLength(2);
    expect(r.tracebacks[0]?.frames).toEqual([
      {
        file: '/.venv/lib/python3.12/site-packages/keras/src/backend/common/name_scope.py',
        line: 61,
        function: '__exit__',
        code: 'name_scope_stack.pop()',
      },
    ]);
    expect(r.tracebacks[0]?.userFrame).toBeNull();
    expect(r.expected.map((s) => s.exception?.type)).toEqual(['AttributeError', 'IndexError']);
    expect(r.errorLines).toContain("KeyError: 'scope'");
  });

  it('prose-only reports: symptoms described in words, with the sentence as evidence', () => {
    const r = readReport('# Training problem\n\nAfter a few steps the loss becomes NaN. The model hangs at the end of the epoch.');
    expect(r.codeBlocks).toEqual([]);
    expect(r.expected.map((s) => s.kind)).toEqual(['nan_inf', 'timeout']);
    expect(r.expected[0]?.evidence).toBe('After a few steps the loss becomes NaN.');
    expect(r.lastOutputLine).toBe('');
  });

  it('an empty report and a report with no code and no error show nothing to match', () => {
    for (const md of ['', '   \n', '# Question\n\nHow do I train a model faster? Thanks.']) {
      const r = readReport(md);
      expect(r.expected).toEqual([]);
      expect(r.codeBlocks).toEqual([]);
      expect(r.outputText).toBe('');
    }
  });

  it('prefers the body over a truncated title', () => {
    const md =
      '# RuntimeError: mean(): could not infer output dtype. Got...\n\n```\nRuntimeError: mean(): could not infer output dtype. Input dtype must be either a floating point or complex dtype. Got: Long\n```';
    const r = readReport(md);
    expect(r.expected).toHaveLength(1);
    expect(r.expected[0]?.exception?.message).toMatch(/Got: Long$/);
  });

  it('reads a 5 MB report (a pasted training log) without failing', () => {
    const md = `# Big\n\n\`\`\`python\nimport torch\n\`\`\`\n\n\`\`\`\n${'Epoch 1/10 - loss: 0.5 - accuracy: 0.5\n'.repeat(130_000)}RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB\n\`\`\`\n`;
    expect(md.length).toBeGreaterThan(5_000_000);
    const r = readReport(md);
    expect(r.expected.map((s) => s.kind)).toEqual(['out_of_memory']);
    expect(r.metrics.map((m) => [m.name, m.values.length])).toEqual([
      ['loss', 130_000],
      ['accuracy', 130_000],
    ]);
  });

  it('hostile input: megabyte-long lines do not make the pattern scanners quadratic', () => {
    const spent = cpuMsOf(() => {
      for (const line of [
        'A'.repeat(1_000_000),
        'a.'.repeat(500_000),
        `Traceback (most recent call last):\n  File "${'x'.repeat(1_000_000)}`,
      ]) {
        expect(readReport(`# t\n\n\`\`\`\n${line}\n\`\`\`\n`).tracebacks).toEqual([]);
        expect(readRun(line).symptoms).toEqual([]);
      }
    });
    // Unguarded, a 50 000-character line already took 10 s; a megabyte one would take hours. CPU time, not wall
    // time: a loaded machine does not inflate it.
    expect(spent).toBeLessThan(15_000);
  });

  it('takes the one exception the title or prose names as raised when the pasted stack trace was cut before its last line', () => {
    const md = [
      'metric raises IndexError with only positive targets',
      '',
      '```python',
      'm = Metric()',
      'm(x, y)',
      '```',
      '',
      '`IndexError` with the following stacktrace:',
      '',
      '```',
      'File ~/env/lib/python3.11/site-packages/torch/nn/modules/module.py:1501, in Module._call_impl(self, *args, **kwargs)',
      '-> 1501     return forward_call(*args, **kwargs)',
      '```',
    ].join('\n');
    const r = readReport(md);
    expect(r.expected).toEqual([expect.objectContaining({ category: 'crash', exception: { type: 'IndexError', message: '' } })]);
  });

  it('names no exception from sentences about what should happen, nor when the prose names two', () => {
    const should = readReport('Calling it with -1 should raise a ValueError.\n\n```python\nf(-1)\n```\n');
    expect(should.expected.some((e) => e.exception?.type === 'ValueError')).toBe(false);
    const two = readReport('It raises IndexError on CPU and RuntimeError on GPU.\n\n```python\nf(1)\n```\n');
    expect(two.expected.some((e) => e.category === 'crash')).toBe(false);
  });
});

describe('the source line Python echoes under a warning is not output', () => {
  // peft #3025's shape: two warnings, each with its `  warnings.warn(` echo; the last pasted line is an echo.
  const report = readReport(
    '# unload() keeps peft_config\n\n```python\nfrom peft import get_peft_model\n```\n\nI get the following warning:\n```\n' +
      '/usr/local/lib/python3.12/dist-packages/peft/mapping_func.py:72: UserWarning: You are trying to modify a model with PEFT for a second time.\n' +
      '  warnings.warn(\n' +
      '/usr/local/lib/python3.12/dist-packages/peft/tuners/tuners_utils.py:285: UserWarning: Already found a `peft_config` attribute in the model.\n' +
      '  warnings.warn(\n```\n',
  );

  it('the last output line is the last warning, and no symptom is the echo', () => {
    expect(report.lastOutputLine).toMatch(/tuners_utils\.py:285: UserWarning: Already found a `peft_config` attribute/);
    expect(report.expected.map((s) => s.evidence)).not.toContain('warnings.warn(');
  });

  it('the last reported warning is the symptom, to be shown raised; the prompt says how to make it an error', () => {
    expect(report.expected).toHaveLength(1);
    expect(report.expected[0]).toMatchObject({
      category: 'crash',
      exception: { type: 'UserWarning', message: 'Already found a `peft_config` attribute in the model.' },
    });
    expect(oracleSection(report)).toContain('warnings.filterwarnings("error", message="<the start of its message>", category=UserWarning)');
    // A report with a traceback keeps its exception; a warning beside it is not the symptom.
    const both = readReport(
      '# crash\n\n```\nx.py:3: UserWarning: old API\n  warnings.warn(\nTraceback (most recent call last):\n  File "a.py", line 1, in <module>\n    f()\nValueError: bad\n```\n',
    );
    expect(both.expected.map((s) => s.exception?.type)).toEqual(['ValueError']);
    expect(oracleSection(both)).not.toContain('filterwarnings');
  });

  it('an indented line after a line that is not a warning stays (a pasted tensor, a continued message)', () => {
    const r = readReport('# wrong\n\n```python\nprint(x)\n```\n\nIt prints:\n```\ntensor([[1., 2.],\n        [3., 4.]])\n```\n');
    expect(r.lastOutputLine).toBe('[3., 4.]])');
  });
});
