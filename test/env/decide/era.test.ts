import { describe, expect, it } from 'vitest';
import { eraCap, wheelFits } from '../../../src/env/decide/era.js';
import { NUMPY } from './fake-releases.js';

describe('eraCap', () => {
  it('caps numpy for 2019 code below 1.24 (np.float is gone there), at the oldest series with a wheel for the Python', () => {
    const cap = eraCap('numpy', NUMPY, '2019-08-20T10:00:00+02:00', '3.11');
    expect(cap?.specifier).toBe('<1.24');
    expect(cap?.why).toContain('numpy 1.17.0 was the newest release');
    expect(cap?.why).toContain('no numpy of that time has a wheel for Python 3.11, 1.23 is the oldest series that has one');
  });

  it('caps at the era series itself when that series has a wheel', () => {
    expect(eraCap('numpy', NUMPY, '2019-08-20T00:00:00Z', '3.7')?.specifier).toBe('<1.18');
    expect(eraCap('numpy', NUMPY, '2023-03-01T00:00:00Z', '3.11')?.specifier).toBe('<1.25');
  });

  it('leaves today’s code, unknown dates and yanked or pre-releases alone', () => {
    expect(eraCap('numpy', NUMPY, '2025-01-01T00:00:00Z', '3.11')).toBeNull();
    expect(eraCap('numpy', NUMPY, 'not a date', '3.11')).toBeNull();
    expect(eraCap('numpy', NUMPY, '2010-01-01T00:00:00Z', '3.11')).toBeNull();
    const yanked = NUMPY.map((r) => (r.version === '1.23.2' || r.version === '1.23.5' ? { ...r, yanked: true } : r));
    expect(eraCap('numpy', yanked, '2019-08-20T00:00:00Z', '3.11')?.specifier).toBe('<1.25');
  });
});

describe('wheelFits', () => {
  it('reads CPython, pure-Python and stable-ABI tags on Linux x86_64', () => {
    expect(wheelFits('numpy-1.23.5-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl', '3.11')).toBe(true);
    expect(wheelFits('numpy-1.23.5-cp310-cp310-manylinux_2_17_x86_64.whl', '3.11')).toBe(false);
    expect(wheelFits('numpy-1.23.5-cp311-cp311-macosx_11_0_arm64.whl', '3.11')).toBe(false);
    expect(wheelFits('protobuf-3.14.0-py2.py3-none-any.whl', '3.11')).toBe(true);
    expect(wheelFits('cryptography-41.0.0-cp37-abi3-manylinux_2_28_x86_64.whl', '3.11')).toBe(true);
  });
});
