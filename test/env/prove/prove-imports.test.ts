import { describe, expect, it } from 'vitest';
import { keptFailures } from '../../../src/env/prove/prove-imports.js';

const f = (error: string) => ({ module: 'm', error, versions: {} });

describe('keptFailures: which failed proofs repeat, so their answer is kept', () => {
  it('keeps what an import fails the same way every time', () => {
    expect(keptFailures([f("ModuleNotFoundError: No module named 'tensorflow'")])).toBe(true);
    expect(
      keptFailures([
        f("ImportError: cannot import name 'cached_download' from 'huggingface_hub'"),
        f("AttributeError: module 'torch' has no attribute 'xpu'"),
      ]),
    ).toBe(true);
    expect(keptFailures([f('SyntaxError: invalid syntax (x.py, line 3)')])).toBe(true);
  });

  it('runs again what may not repeat (memory, a timeout, anything else), or nothing failed', () => {
    expect(keptFailures([])).toBe(false);
    expect(keptFailures([f('MemoryError: ')])).toBe(false);
    expect(keptFailures([f("ImportError: cannot import name 'x' from 'y'"), f('RuntimeError: CUDA error: out of memory')])).toBe(false);
    expect(keptFailures([f('OSError: [Errno 28] No space left on device')])).toBe(false);
    // The type must lead the message: a message that only mentions one is not it.
    expect(keptFailures([f("RuntimeError: wrapped ImportError: cannot import name 'x'")])).toBe(false);
  });
});
