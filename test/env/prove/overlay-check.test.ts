import { describe, expect, it } from 'vitest';
import { shadowedBase } from '../../../src/env/prove/overlay-check.js';

describe('shadowedBase (which base packages an overlay must install itself)', () => {
  const failures = [
    { module: 'scipy', error: "ModuleNotFoundError: No module named 'numpy.exceptions'", dists: ['numpy'] },
    { module: 'pandas', error: "ImportError: cannot import name 'x' from 'PyYAML'", dists: ['PyYAML'] },
    { module: 'tensorflow', error: "ModuleNotFoundError: No module named 'absl'", dists: [] },
  ];

  it('blames only distributions the base provides and the lock holds, by normalised name, each once', () => {
    const locked = { numpy: '1.26.4', pyyaml: '6.0.2', scipy: '1.15.0' };
    expect(shadowedBase([...failures, failures[0]!], ['numpy', 'pyyaml'], locked)).toEqual(['numpy', 'pyyaml']);
  });

  it('never blames a base package the lock does not hold (nothing could replace it) nor one the base does not provide', () => {
    expect(shadowedBase(failures, ['numpy'], { scipy: '1.15.0' })).toEqual([]);
    expect(shadowedBase(failures, ['torch'], { numpy: '1.26.4' })).toEqual([]);
    expect(shadowedBase([], ['numpy'], { numpy: '1.26.4' })).toEqual([]);
  });
});
