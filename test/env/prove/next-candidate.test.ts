import { describe, expect, it } from 'vitest';
import { nextCandidate } from '../../../src/env/prove/next-candidate.js';
import { indexSpec, requirement } from '../../helpers/loopback-pypi.js';

const spec = (reqs = [requirement('torch', '>=1.4'), requirement('numpy')], baseProvides?: string[]) =>
  indexSpec({ url: 'http://127.0.0.1:1/simple' }, reqs, baseProvides ? { baseProvides } : {});

describe('nextCandidate', () => {
  it('moves a framework too old past the version that lacked the API, keeps the lower bounds, and leaves the base', () => {
    const next = nextCandidate(spec(undefined, ['torch', 'torchvision', 'numpy']), {
      kind: 'framework-too-old',
      package: 'torch',
      constraint: '>1.13.1',
      why: 'torch 1.13.1 has no torch.xpu',
    });
    expect(next?.change).toBe('torch >=1.4,>1.13.1');
    expect(next?.spec.requirements[0]).toMatchObject({
      name: 'torch',
      specifier: '>=1.4,>1.13.1',
      why: expect.stringContaining('the import proof'),
    });
    expect(next?.spec.baseProvides).toEqual([]);
  });

  it('moves numpy down past its upper bounds and exact pins, and adds a missing module as a requirement', () => {
    const pinned = spec([requirement('numpy', '==2.1.0'), requirement('tensorflow')]);
    const down = nextCandidate(pinned, { kind: 'numpy-abi', package: 'numpy', constraint: '<2', why: 'x' });
    expect(down?.spec.requirements[0]?.specifier).toBe('<2');
    const added = nextCandidate(pinned, { kind: 'missing-module', package: 'jax', constraint: '', why: 'keras imports jax' });
    expect(added?.spec.requirements.at(-1)).toMatchObject({ name: 'jax', specifier: '', source: 'policy' });
  });

  it('gives no candidate for what the user pinned in repgen.yml, a change already made, or nothing to change', () => {
    const cfg = spec([{ ...requirement('torch', '==1.13.1'), source: 'config' }]);
    expect(nextCandidate(cfg, { kind: 'framework-too-old', package: 'torch', constraint: '>1.13.1', why: 'x' })).toBeNull();
    const done = spec([requirement('numpy', '<2')]);
    expect(nextCandidate(done, { kind: 'numpy-abi', package: 'numpy', constraint: '<2', why: 'x' })).toBeNull();
    expect(nextCandidate(done, { kind: 'other', package: null, constraint: null, why: 'x' })).toBeNull();
  });
});
