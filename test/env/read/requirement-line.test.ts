import { describe, expect, it } from 'vitest';
import { markerHolds, normalizeName, parseRequirement } from '../../../src/env/read/requirement-line.js';

describe('PEP 508 requirement lines', () => {
  it('normalises names the PEP 503 way', () => {
    expect(['Pillow', 'scikit_learn', 'ruamel.yaml', 'Huggingface__Hub'].map(normalizeName)).toEqual([
      'pillow',
      'scikit-learn',
      'ruamel-yaml',
      'huggingface-hub',
    ]);
  });

  it('reads names, extras, specifiers and markers, and refuses what is no index requirement', () => {
    expect(parseRequirement('torch[opt, Dev] >= 2.1, <3 ; python_version >= "3.8"')).toEqual({
      name: 'torch',
      extras: ['opt', 'dev'],
      specifier: '>=2.1,<3',
      marker: 'python_version >= "3.8"',
    });
    expect(parseRequirement('numpy (>=1.16)')).toMatchObject({ name: 'numpy', specifier: '>=1.16' });
    expect(parseRequirement('tqdm  # progress bars')).toMatchObject({ name: 'tqdm', specifier: '' });
    expect(parseRequirement('panopticapi @ https://github.com/cocodataset/panopticapi/archive/master.zip')).toBeNull();
    expect(parseRequirement('https://example.org/x.whl')).toBeNull();
    expect(parseRequirement('torch>=')).toBeNull();
  });

  it('evaluates markers for Linux CPython at the target version, extras included', () => {
    const t = { python: '3.11' };
    expect(markerHolds("python_version<'3.7'", t)).toBe(false);
    expect(markerHolds('python_version >= "3.8" and sys_platform == "linux"', t)).toBe(true);
    expect(markerHolds('sys_platform == "win32" or platform_system == "Darwin"', t)).toBe(false);
    expect(markerHolds('(python_version < "3.10") or (platform_machine == "x86_64")', t)).toBe(true);
    expect(markerHolds('extra == "vision"', t)).toBe(false);
    expect(markerHolds('extra == "vision"', { python: '3.11', extras: ['vision'] })).toBe(true);
    expect(markerHolds('"linux" in sys_platform', t)).toBe(true);
    // A marker this reader cannot follow keeps the requirement.
    expect(markerHolds('some_new_variable == "x"', t)).toBe(true);
    expect(markerHolds(`${'('.repeat(900)}python_version < "3"${')'.repeat(900)}`, t)).toBe(false);
    expect(markerHolds(`${'('.repeat(5000)}python_version < "3"${')'.repeat(5000)}`, t)).toBe(true);
  });
});
