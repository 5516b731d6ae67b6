import { describe, expect, it } from 'vitest';
import { eraCapToNearest } from '../../../src/env/lock/era-cap-nearest.js';
import type { Requirement } from '../../../src/env/types.js';

const numpy: Requirement = { name: 'numpy', specifier: '<1.20', extras: [], source: 'era', why: 'capped <1.20: the ref is of 2020-10-24' };

describe('eraCapToNearest', () => {
  it("moves a compiled package's cap with no wheel for this Python to the nearest release with one, no longer an era cap", () => {
    const moved = eraCapToNearest(numpy, '<1.20', { wheels: ['1.23.2', '1.23.5', '1.26.4', '2.4.6'], sdists: ['1.19.5'], compiled: true });
    expect(moved?.got).toBe('1.23.2');
    expect(moved?.req).toMatchObject({ specifier: '==1.23.2', source: 'policy' });
    expect(moved?.req.why).toMatch(/no release in the era's cap <1\.20 installs here, so 1\.23\.2, the nearest that does$/);
  });

  it('keeps the project’s own clauses, and moves nothing where a release in the cap installs (the conflict is elsewhere)', () => {
    const own = { ...numpy, specifier: '>=1.10,<1.20' };
    expect(eraCapToNearest(own, '<1.20', { wheels: ['1.23.2'], sdists: [], compiled: true })?.req.specifier).toBe('>=1.10,==1.23.2');
    expect(eraCapToNearest(numpy, '<1.20', { wheels: ['1.19.5', '1.23.2'], sdists: [], compiled: true })).toBeNull();
    // A pure package builds from its source distribution: a release in the cap installs.
    expect(eraCapToNearest(numpy, '<1.20', { wheels: ['1.23.2'], sdists: ['1.19.5'], compiled: false })).toBeNull();
  });
});
