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
});
