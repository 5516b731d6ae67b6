import { mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { exportsFromSources, readProjectExports } from '../../src/workspace/project-exports.js';
import { makeTempDir } from '../helpers/temp-dir.js';

describe('exportsFromSources (what a checkout’s packages export by name)', () => {
  const files = new Map([
    ['src/metrics/__init__.py', 'from metrics.classification import (  # the public API\n    ExactMatch,\n    Accuracy as Acc,\n)\n'],
    ['src/metrics/classification/__init__.py', 'from .exact_match import ExactMatch\n'],
    ['src/metrics/classification/exact_match.py', 'class ExactMatch:\n    pass\n\ndef _helper():\n    pass\n'],
    ['src/metrics/functional/ops.py', 'def reshape_points(x):\n    return x\n\ndef common():\n    pass\n'],
    ['src/metrics/functional/other.py', 'def common():\n    pass\n'],
    ['src/metrics/_private/hidden.py', 'def secret():\n    pass\n'],
    ['src/metrics/tests/test_ops.py', 'def test_it():\n    pass\n'],
  ]);
  const out = exportsFromSources(files);

  it('takes a re-exported name from the shortest package that re-exports it, aliases included', () => {
    expect(out['ExactMatch']).toBe('metrics');
    expect(out['Acc']).toBe('metrics');
  });

  it('takes a name one public module defines from that module, and leaves out ambiguous, private and test names', () => {
    expect(out['reshape_points']).toBe('metrics.functional.ops');
    expect(out).not.toHaveProperty('common');
    expect(out).not.toHaveProperty('secret');
    expect(out).not.toHaveProperty('_helper');
    expect(out).not.toHaveProperty('test_it');
  });
});

describe('readProjectExports (the checkout read statically, bounded, no link followed)', () => {
  const root = makeTempDir('repgen-exports-');
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('reads the flat and the src/ layout, and never follows a link out of the checkout', async () => {
    const outside = join(root, 'outside');
    mkdirSync(outside);
    writeFileSync(join(outside, 'leak.py'), 'def stolen():\n    pass\n');
    const co = join(root, 'co');
    mkdirSync(join(co, 'src', 'pkg'), { recursive: true });
    mkdirSync(join(co, 'flat'), { recursive: true });
    writeFileSync(join(co, 'src', 'pkg', '__init__.py'), 'from .core import run\n');
    writeFileSync(join(co, 'src', 'pkg', 'core.py'), 'def run():\n    pass\n');
    writeFileSync(join(co, 'flat', '__init__.py'), 'def flat_fn():\n    pass\n');
    symlinkSync(outside, join(co, 'src', 'pkg', 'linked'));
    symlinkSync(join(outside, 'leak.py'), join(co, 'flat', 'leak.py'));
    const out = await readProjectExports({ hostPath: co, packages: ['pkg', 'flat', '../outside'] });
    expect(out).toEqual({ run: 'pkg', flat_fn: 'flat' });
    expect(await readProjectExports({ hostPath: co, packages: [] })).toBeUndefined();
    expect(await readProjectExports(undefined)).toBeUndefined();
  });
});
