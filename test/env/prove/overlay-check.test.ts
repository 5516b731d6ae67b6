import { describe, expect, it } from 'vitest';
import { baseOutsideLock, overlayNumpyCap, ownVenvNeeded, shadowedBase } from '../../../src/env/prove/overlay-check.js';

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

describe('baseOutsideLock (what the lock declares of the base-provided packages)', () => {
  const tf = [
    'Metadata-Version: 2.1',
    'Name: tensorflow',
    'Version: 2.21.0',
    'Requires-Dist: numpy>=1.26.0',
    'Requires-Dist: ml_dtypes<1.0.0,>=0.5.1',
    'Requires-Dist: packaging',
    'Requires-Dist: six>=1.17 ; python_version < "3.8"',
    'Requires-Dist: pillow>=10 ; extra == "and-cuda"',
    '',
    'Requires-Dist: typing-extensions>=9 (a line of the description, not of the header)',
  ].join('\n');
  const base = { numpy: '1.24.2', packaging: '23.0', six: '1.16.0', pillow: '9.4.0', 'typing-extensions': '4.4.0' };
  const provided = ['numpy', 'packaging', 'six', 'Pillow', 'typing_extensions'];

  it("names a base package outside a lock package's declared range (TensorFlow 2.21 beside Debian's numpy 1.24), with who asked", () => {
    expect(baseOutsideLock([tf], provided, base, '3.11')).toEqual([
      { name: 'numpy', base: '1.24.2', required: '>=1.26.0', by: 'tensorflow 2.21.0' },
    ]);
  });

  it('leaves out markers that do not hold here, extras, the description, a bare name, and what the base does not provide', () => {
    expect(baseOutsideLock([tf], ['packaging', 'six', 'pillow', 'typing-extensions'], base, '3.11')).toEqual([]);
    expect(baseOutsideLock([tf], provided, { ...base, numpy: '1.26.4' }, '3.11')).toEqual([]);
    expect(baseOutsideLock([tf], provided, { packaging: '23.0' }, '3.11')).toEqual([]);
  });

  it("reads a pre-release or local base version as its release (Debian's torch 1.13.0a0+gitunknown meets >=1.10)", () => {
    const tm = 'Name: torchmetrics\nVersion: 1.0.0\nRequires-Dist: torch>=1.10\nRequires-Dist: numpy>1.20.0\n';
    expect(baseOutsideLock([tm], ['torch', 'numpy'], { torch: '1.13.0a0+gitunknown', numpy: '1.24.2' }, '3.11')).toEqual([]);
  });
});

describe('ownVenvNeeded (an env that takes nothing from the base)', () => {
  const base = { numpy: '1.24.2', torch: '1.13.0a0+gitunknown' };
  it("is needed for the env's own torch, or its own numpy of another major than the base's", () => {
    expect(ownVenvNeeded(['torch'], { torch: '2.13.0' }, base)).toBe(true);
    expect(ownVenvNeeded(['numpy'], { numpy: '2.4.1' }, base)).toBe(true);
  });
  it("is not for a numpy of the base's major (NumPy 1.x keeps its C-API), nor for other packages", () => {
    expect(ownVenvNeeded(['numpy'], { numpy: '1.26.4' }, base)).toBe(false);
    expect(ownVenvNeeded(['pyyaml'], { pyyaml: '6.0.2', numpy: '2.4.1' }, base)).toBe(false);
    expect(ownVenvNeeded([], { numpy: '2.4.1' }, base)).toBe(false);
  });
});

describe("overlayNumpyCap (an overlay's preference for the base's numpy major)", () => {
  const base = { numpy: '1.24.2' };
  const tf = { name: 'tensorflow', specifier: '', extras: [], source: 'script' as const, why: 'x' };
  it('caps numpy below the next major of the base when the env takes numpy from the base and nothing names numpy', () => {
    expect(overlayNumpyCap({ baseProvides: ['numpy', 'pandas'], requirements: [tf] }, base)).toBe('numpy<2');
  });
  it('leaves a spec alone that names numpy, that takes nothing from the base, or a base with no numpy', () => {
    const np = { ...tf, name: 'numpy', specifier: '==2.1.0', source: 'report' as const };
    expect(overlayNumpyCap({ baseProvides: ['numpy'], requirements: [tf, np] }, base)).toBeNull();
    expect(overlayNumpyCap({ requirements: [tf] }, base)).toBeNull();
    expect(overlayNumpyCap({ baseProvides: ['numpy'], requirements: [tf] }, {})).toBeNull();
  });
});
