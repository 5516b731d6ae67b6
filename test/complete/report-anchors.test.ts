import { describe, expect, it } from 'vitest';
import { reportedStatement, standInWidth, unseenFramesOf } from '../../src/complete/report-anchors.js';
import { analyzePython, type Analysis } from '../../src/complete/scope.js';

async function withAnalysis<T>(code: string, f: (a: Analysis) => T): Promise<T> {
  const a = await analyzePython(code);
  try {
    return f(a);
  } finally {
    a.tree.delete();
  }
}

describe("what the report's traceback says about the snippet", () => {
  it('finds the module statement its last `<module>` line is in, inside a loop too, whitespace and comments aside', async () => {
    const code = 'import torch\nx = torch.ones(2)\nfor i in range(3):\n    y = x @ x  # boom\nprint(y)\n';
    expect(await withAnalysis(code, (a) => reportedStatement(a, ['x = torch.ones(2)', 'y = x@x']))).toBe(2);
    expect(await withAnalysis(code, (a) => reportedStatement(a, ['something else()']))).toBeNull();
  });

  it("names the reporter's functions it runs through that the snippet does not define, not library frames", async () => {
    const report = [
      'Traceback (most recent call last):',
      '  File "train.py", line 9, in <module>',
      '    out = net(x)',
      '  File "/usr/lib/python3/dist-packages/torch/nn/modules/module.py", line 1190, in _call_impl',
      '  File "model.py", line 30, in forward',
      '  File "train.py", line 4, in helper',
      'RuntimeError: boom',
    ].join('\n');
    expect(await withAnalysis('def helper():\n    pass\nout = net(x)\n', (a) => unseenFramesOf(a, report))).toEqual(['forward']);
  });

  it("a stand-in model's width: the class count the code states, a wide score vector for a classifier, else the fallback", () => {
    expect(standInWidth('num_classes = 7\ncriterion = nn.CrossEntropyLoss()', 4)).toBe(7);
    expect(standInWidth('criterion = nn.CrossEntropyLoss()', 4)).toBe(1000);
    expect(standInWidth('loss = F.mse_loss(out, y)', 1)).toBe(1);
  });
});
