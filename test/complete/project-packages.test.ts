import { describe, expect, it } from 'vitest';
import { completeCode } from '../../src/complete/index.js';

const CODE = "m = mylib.create_model('net', features_only=True)\ny = m(x)\nassert len(y) == 6  # fails\n";

describe("the project's own packages", () => {
  it('a name used as one of them is imported, and the input of its model factory is shaped by the model', async () => {
    const c = await completeCode({ blocks: [CODE], packages: ['mylib'] });
    const script = c.candidates[0]?.script ?? '';
    expect(script).toMatch(/^import mylib {2}# added by RepGen$/m);
    expect(script).toMatch(/^x = repgen_example_input\(m, batch=\d+\) {2}# added by RepGen$/m);
    expect(c.missing).toEqual([]);
  });

  it('without the project (a plain report), the same name stays missing: nothing is imported on a guess', async () => {
    const c = await completeCode({ blocks: [CODE] });
    expect(c.candidates).toEqual([]);
    expect(c.missing.map((m) => m.name)).toContain('mylib');
  });

  it('a project name used as a value, not as a module, is not imported', async () => {
    const c = await completeCode({ blocks: ['print(mylib + 1)\n'], packages: ['mylib'] });
    expect(c.candidates[0]?.script ?? '').not.toContain('import mylib');
  });

  it('a name the project exports, called without its import, is imported from the module that exports it', async () => {
    const code = "import torch\nx = torch.randn(2, 3)\nprint(shape_of(x, 'b c'))\nm = ExactMatch(num_labels=3)\nprint(m.compute())\n";
    const c = await completeCode({ blocks: [code], packages: ['mylib'], exports: { shape_of: 'mylib', ExactMatch: 'mylib.metrics' } });
    const script = c.candidates[0]?.script ?? '';
    expect(script).toMatch(/^from mylib import shape_of {2}# added by RepGen$/m);
    expect(script).toMatch(/^from mylib\.metrics import ExactMatch {2}# added by RepGen$/m);
    expect(c.missing).toEqual([]);
  });

  it('a name the project exports but the code only reads as a value is not taken from the project', async () => {
    const c = await completeCode({ blocks: ['print(data.sum())\nprint(data + 1)\n'], packages: ['mylib'], exports: { data: 'mylib.io' } });
    expect(c.candidates[0]?.script ?? '').not.toContain('from mylib.io import data');
  });
});
