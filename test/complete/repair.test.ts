import { describe, expect, it } from 'vitest';
import {
  dedentCommon,
  normalizeCharacters,
  python2To3,
  repairIndentation,
  repairSnippet,
  reprToExpression,
  stripMagics,
  stripPastedOutput,
  stripReplPrompts,
} from '../../src/complete/repair.js';

describe('extraction and repair rules', () => {
  it('strips >>> / ... prompts and drops the interpreter output between them', () => {
    const r = stripReplPrompts(
      '>>> import torch\n>>> for i in range(2):\n...     print(i)\n...\n0\n1\n>>> torch.ones(2).sum()\ntensor(2.)\n',
    );
    expect(r.code).toBe('import torch\nfor i in range(2):\n    print(i)\n\ntorch.ones(2).sum()');
    expect(r.edits[0]).toMatch(/prompts/);
  });

  it('strips IPython In [n]: prompts and their ...: continuations', () => {
    const r = stripReplPrompts('In [1]: import torch\n\nIn [2]: def f(x):\n   ...:     return x\n   ...:\nOut[2]: 3\n');
    expect(r.code).toBe('import torch\ndef f(x):\n    return x\n');
  });

  it('turns a displayed value into the assignment that makes it, when the transcript never assigns the name', () => {
    const r = stripReplPrompts('>>> t\ntensor([[1., 2.],\n        [3., 4.]])\n>>> t.mean()\n');
    expect(r.code).toBe('t = torch.tensor([[1.0, 2.0], [3.0, 4.0]])  # added by RepGen\nt.mean()');
    expect(r.edits).toContain('turned a value the transcript displays into the assignment that makes it');
  });

  it('leaves code without prompts alone', () => {
    expect(stripReplPrompts('x = 1\nprint(x)\n')).toEqual({ code: 'x = 1\nprint(x)\n', edits: [] });
  });

  it('rebuilds tensor and array reprs, and refuses reprs it cannot rebuild', () => {
    expect(reprToExpression('tensor([1, 0, 1])')).toBe('torch.tensor([1, 0, 1])');
    expect(reprToExpression('tensor([0.5000, 1.0000], dtype=torch.float64)')).toBe('torch.tensor([0.5000, 1.0000], dtype=torch.float64)');
    expect(reprToExpression('array([1., 2.])')).toBe('np.array([1.0, 2.0])');
    expect(reprToExpression('<torch.utils.data.dataloader.DataLoader object at 0x7f>')).toBeNull();
  });

  it('removes notebook magics and shell escapes', () => {
    const r = stripMagics('%matplotlib inline\n!pip install torch\nimport torch\nx = 3 != 2\n');
    expect(r.code).toBe('import torch\nx = 3 != 2\n');
  });

  it('removes output pasted among the code: printed tensors over several lines, Epoch lines, progress bars, tracebacks', () => {
    const code = [
      'import torch',
      'x = torch.ones(2, 2)',
      'print(x)',
      'tensor([[1., 1.],',
      '        [1., 1.]])',
      'Epoch 1/10 loss: 0.53',
      ' 50%|#####     | 5/10 [00:01<00:01, 4.2it/s]',
      'Traceback (most recent call last):',
      '  File "a.py", line 3, in <module>',
      'RuntimeError: boom',
      'y = x.sum()',
    ].join('\n');
    const r = stripPastedOutput(code);
    expect(r.code).toBe('import torch\nx = torch.ones(2, 2)\nprint(x)\ny = x.sum()');
    expect(r.edits[0]).toMatch(/removed 7 lines of output/);
  });

  it('does not take a list literal inside a call, or an assignment, for output', () => {
    const code = 'data = torch.tensor([\n[3, 4],\n[1, 2],\n])\nloss = 0.5\n';
    expect(stripPastedOutput(code).code).toBe(code);
  });

  it('replaces typographic quotes, the ellipsis character and non-breaking spaces', () => {
    const r = normalizeCharacters('print(\u201chi\u201d, \u2018x\u2019)\u00a0\nx = [1, \u2026]\n');
    expect(r.code).toBe('print("hi", \'x\') \nx = [1, ...]\n');
    expect(r.edits).toHaveLength(2);
  });

  it('removes the common indentation of code copied out of a class', () => {
    const r = dedentCommon('    def forward(self, x):\n        return x\n');
    expect(r.code).toBe('def forward(self, x):\n    return x\n');
    expect(dedentCommon('x = 1\n  # comment\n').edits).toEqual([]);
  });

  it('rewrites Python 2 print statements and except clauses', () => {
    const r = python2To3('print "loss", loss\nprint x,\nprint\nprint(y)\ntry:\n    pass\nexcept ValueError, e:\n    pass\nprinted = 1\n');
    expect(r.code).toBe(
      'print("loss", loss)\nprint(x, end=\' \')\nprint()\nprint(y)\ntry:\n    pass\nexcept ValueError as e:\n    pass\nprinted = 1\n',
    );
  });

  it('re-indents a line whose dedent matches no open block, to the nearest open level', () => {
    const code = 'for e in range(2):\n     for b in range(3):\n         x = b\n      print(e)\n';
    const r = repairIndentation(code);
    expect(r.code).toBe('for e in range(2):\n     for b in range(3):\n         x = b\n     print(e)\n');
  });

  it('pulls back an unexpected indent, and leaves bracketed continuations and docstrings alone', () => {
    const code = 'x = foo(1,\n        2)\ny = 1\n    z = 2\ns = """\n      text\n"""\n';
    expect(repairIndentation(code).code).toBe('x = foo(1,\n        2)\ny = 1\nz = 2\ns = """\n      text\n"""\n');
  });

  it('leaves correctly indented code untouched, multi-line signatures and one-line blocks included', () => {
    const code = 'class A:\n    def f(self):\n        if True:\n            return 1\n        return 2\n';
    expect(repairIndentation(code).edits).toEqual([]);
    const signature =
      'def f(\n    self,\n    s: int,\n) -> list[str]:\n    for r in s:\n        try: x = 1\n        except E: continue\n    return s\n';
    expect(repairIndentation(signature).edits).toEqual([]);
  });

  it('chains the repairs and keeps an indentation fix only when the result parses', () => {
    const r = repairSnippet('>>> for i in range(2):\n...     print i\n', () => true);
    expect(r.code).toBe('for i in range(2):\n    print(i)');
    const refused = repairSnippet('for e in x:\n  a = 1\n b = 2\n', () => false);
    expect(refused.code).toBe('for e in x:\n  a = 1\n b = 2\n');
  });
});
