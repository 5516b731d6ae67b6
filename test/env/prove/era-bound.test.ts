import { describe, expect, it } from 'vitest';
import { boundByEra, withoutEraBound } from '../../../src/env/prove/era-bound.js';
import { indexArgs } from '../../../src/env/sandboxed/uv-run.js';
import { indexSpec, requirement } from '../../helpers/loopback-pypi.js';

const dated = { ...indexSpec({ url: 'http://127.0.0.1:1/simple' }, [requirement('transformers')]), eraDate: '2025-03-19T09:57:58Z' };

describe("a ladder's move up, bounded by the era", () => {
  it('resolves the package as of the commit date, through uv’s --exclude-newer-package (compile only, not the sync)', () => {
    const bounded = boundByEra(dated, 'transformers');
    expect(bounded?.excludeNewerPackages).toEqual({ transformers: '2025-03-19T09:57:58Z' });
    expect(indexArgs(bounded as NonNullable<typeof bounded>).slice(-2)).toEqual([
      '--exclude-newer-package',
      'transformers=2025-03-19T09:57:58Z',
    ]);
    expect(indexArgs(bounded as NonNullable<typeof bounded>, true)).not.toContain('--exclude-newer-package');
    // Bounded once; a framework (its CPU wheel has no upload date) or a spec with no date, never.
    expect(boundByEra(bounded as NonNullable<typeof bounded>, 'transformers')).toBeNull();
    expect(boundByEra(dated, 'torch')).toBeNull();
    expect(boundByEra({ ...dated, eraDate: null }, 'transformers')).toBeNull();
  });

  it('is dropped again for one package, leaving the others', () => {
    const two = { ...dated, excludeNewerPackages: { transformers: '2025-03-19T09:57:58Z', accelerate: '2025-03-19T09:57:58Z' } };
    expect(withoutEraBound(two, 'transformers').excludeNewerPackages).toEqual({ accelerate: '2025-03-19T09:57:58Z' });
    expect('excludeNewerPackages' in withoutEraBound(withoutEraBound(two, 'transformers'), 'accelerate')).toBe(false);
  });
});
