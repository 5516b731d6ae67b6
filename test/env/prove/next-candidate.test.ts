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

  it("bounds a package it moves up by the ref's commit date (the era's newest, not today's), never a framework's CPU build", () => {
    const era = {
      ...spec([requirement('transformers', '==4.40.2'), requirement('torch', '==1.13.1')]),
      eraDate: '2025-03-19T10:57:58+01:00',
    };
    const up = nextCandidate(era, {
      kind: 'framework-too-old',
      package: 'transformers',
      constraint: '>4.40.2',
      why: 'no EncoderDecoderCache',
    });
    expect(up?.change).toBe('transformers >4.40.2 (released by 2025-03-19)');
    expect(up?.eraBound).toBe('transformers');
    expect(up?.spec.excludeNewerPackages).toEqual({ transformers: '2025-03-19T10:57:58+01:00' });
    // torch's CPU build comes from the operator's wheel folder (no upload dates): its move up is not bounded.
    const fw = nextCandidate(era, { kind: 'framework-too-old', package: 'torch', constraint: '>1.13.1', why: 'no torch.xpu' });
    expect(fw?.spec.excludeNewerPackages).toBeUndefined();
    expect(fw?.eraBound).toBeUndefined();
    // A move down is not bounded, and without a commit date nothing is.
    const down = nextCandidate(era, { kind: 'api-removed', package: 'transformers', constraint: '<4.40', why: 'x' });
    expect(down?.spec.excludeNewerPackages).toBeUndefined();
    const undated = nextCandidate(spec([requirement('transformers', '==4.40.2')]), {
      kind: 'framework-too-old',
      package: 'transformers',
      constraint: '>4.40.2',
      why: 'x',
    });
    expect(undated?.change).toBe('transformers >4.40.2');
  });
});

describe('nextCandidate, a run with no GPU (torchvision-7885)', () => {
  const cpu = (wheels: string[]) => ({ ...spec([requirement('torch'), requirement('numpy')], ['torch', 'numpy']), cpuTorchWheels: wheels });
  const tooOld = { kind: 'framework-too-old' as const, package: 'torch', constraint: '>1.13.0a0', why: 'torch 1.13 has no torch._dynamo' };

  it('moves torch to the newest CPU build of the wheel folder that fits, never to the index’s (a CUDA build)', () => {
    const next = nextCandidate(cpu(['1.13.1+cpu', '2.13.0+cpu', '2.1.2+cpu']), tooOld);
    expect(next?.spec.requirements[0]).toMatchObject({ name: 'torch', specifier: '==2.13.0' });
    expect(next?.change).toBe("torch ==2.13.0 (the CPU build 2.13.0+cpu from the operator's wheel folder)");
    expect(next?.spec.baseProvides).toEqual([]);
  });

  it('gives no candidate when no CPU build fits the move, unless PyTorch’s CPU index is allowed: then torch comes from it', () => {
    expect(nextCandidate(cpu(['1.12.1+cpu']), tooOld)).toBeNull();
    expect(nextCandidate(cpu([]), tooOld)).toBeNull();
    const index = 'https://download.pytorch.org/whl/cpu';
    const viaIndex = nextCandidate({ ...cpu(['1.12.1+cpu']), cpuTorchIndex: index }, tooOld);
    expect(viaIndex?.spec.requirements[0]?.specifier).toBe('>1.13.0a0');
    expect(viaIndex?.spec.extraIndexUrls).toEqual([index]);
    expect(viaIndex?.change).toBe("torch >1.13.0a0 (from PyTorch's CPU index)");
  });

  it('leaves other packages and GPU runs (no wheel list) as they were', () => {
    const gpu = nextCandidate(spec([requirement('torch')], ['torch']), tooOld);
    expect(gpu?.spec.requirements[0]?.specifier).toBe('>1.13.0a0');
    const np = nextCandidate(cpu(['2.13.0+cpu']), { kind: 'numpy-abi', package: 'numpy', constraint: '<2', why: 'x' });
    expect(np?.spec.requirements[1]?.specifier).toBe('<2');
  });
});
