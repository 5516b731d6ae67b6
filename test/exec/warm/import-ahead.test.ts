import { describe, expect, it } from 'vitest';
import { emptyAheadBook, importsAhead, recordImportsAhead, servesRun } from '../../../src/exec/warm/import-ahead.js';
import { RunRequest } from '../../../src/exec/types.js';
import type { PreloadFrame } from '../../../src/exec/warm/fork-server-frames.js';

const req = (content: string, more: { path: string; content: string }[] = []) =>
  RunRequest.parse({ files: [{ path: 'main.py', content }, ...more], entry: 'main.py' });
const b64 = (s: string) => Buffer.from(s).toString('base64');
const frame = (over: Partial<PreloadFrame>): PreloadFrame => ({
  loaded: [],
  skipped: [],
  failed: null,
  threads: 1,
  stdout: '',
  stderr: '',
  ...over,
});

describe('importsAhead', () => {
  it("the run's leading imports less what every server imports, cut at the first known bad module", () => {
    const r = req('import torch\nimport torchvision\nimport flaky\nimport pandas\nprint(1)\n');
    expect(importsAhead(r, new Set())).toEqual({ leading: ['torchvision', 'flaky', 'pandas'], ahead: ['torchvision', 'flaky', 'pandas'] });
    expect(importsAhead(r, new Set(['flaky']))).toEqual({ leading: ['torchvision', 'flaky', 'pandas'], ahead: ['torchvision'] });
  });

  it('never imports TensorFlow, Keras or JAX ahead: they start threads, and a fork after them can deadlock', () => {
    const r = req('import pandas\nimport tensorflow as tf\nimport scipy\nfrom jax import numpy as jnp\n');
    expect(importsAhead(r, new Set())).toEqual({ leading: ['pandas', 'tensorflow', 'scipy', 'jax'], ahead: ['pandas'] });
    expect(importsAhead(req('from keras.layers import Dense\n'), new Set())).toEqual({ leading: ['keras.layers'], ahead: [] });
  });

  it("refuses a run whose own files shadow a module every server imports (a cold run imports the run's own)", () => {
    expect(importsAhead(req('import torch\n', [{ path: 'torch.py', content: '' }]), new Set())).toMatch(/shadow torch/);
    expect(importsAhead(req('import numpy\n', [{ path: 'numpy/__init__.py', content: '' }]), new Set())).toMatch(/shadow numpy/);
    expect(importsAhead(req('import torch\n', [{ path: 'sub/torch.py', content: '' }]), new Set())).toEqual({ leading: [], ahead: [] });
  });
});

describe('the book of what a server imported ahead', () => {
  it('serves only runs that import all of it first', () => {
    const book = emptyAheadBook();
    expect(servesRun(book, [])).toBe(true);
    expect(
      recordImportsAhead(book, frame({ loaded: ['timm'], skipped: ['os'], stdout: b64('hi\n') }), ['timm', 'os'], new Set()),
    ).toBeNull();
    expect(servesRun(book, ['timm', 'pandas'])).toBe(true);
    expect(servesRun(book, ['pandas'])).toBe(false);
    expect(servesRun(book, [])).toBe(false);
    expect([...book.asked].sort()).toEqual(['os', 'timm']);
    expect(book.prelude.stdout.toString()).toBe('hi\n');
  });

  it('a module that failed (half-imported in the server) is bad and the server must not fork; the modules after it were never imported', () => {
    const book = emptyAheadBook();
    const bad = new Set<string>();
    const done = frame({ loaded: ['a'], failed: { module: 'broken', error: 'ValueError: no' }, stderr: b64('warn\n') });
    expect(recordImportsAhead(book, done, ['a', 'broken', 'c'], bad)).toBe(
      'importing broken ahead failed (ValueError: no): the warm interpreter was retired',
    );
    expect(book.imported).toEqual(['a']);
    expect([...bad]).toEqual(['broken']);
    expect(book.asked.has('c')).toBe(false);
  });

  it('a module that left a thread running is bad, and the server must not fork', () => {
    const bad = new Set<string>();
    const why = recordImportsAhead(emptyAheadBook(), frame({ loaded: ['ok', 'threaded'], threads: 2 }), ['ok', 'threaded', 'c'], bad);
    expect(why).toMatch(/importing threaded ahead left 2 threads/);
    expect([...bad]).toEqual(['threaded']);
  });
});
