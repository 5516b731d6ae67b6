import { describe, expect, it } from 'vitest';
import { eraCapsInConflict, nearestOutsideRange } from '../../../src/env/lock/relax-range.js';
import { requirement } from '../../helpers/loopback-pypi.js';

describe('nearestOutsideRange', () => {
  const cp311 = ['1.23.0', '1.23.5', '1.24.4', '1.26.4', '2.0.0', '2.1.0rc1'];
  it('moves a range with no installable release to the oldest release above it that keeps its lower bounds (fairseq: numpy<=1.17.5)', () => {
    expect(nearestOutsideRange('<=1.17.5', cp311)).toBe('1.23.0');
    expect(nearestOutsideRange('>=1.10,<1.18', cp311)).toBe('1.23.0');
  });
  it('else to the newest below it that keeps its upper bounds; never for a range that holds, or an exact pin', () => {
    expect(nearestOutsideRange('>=3,<4', ['1.0', '2.0', '2.5'])).toBe('2.5');
    expect(nearestOutsideRange('<1.25', cp311)).toBeNull();
    expect(nearestOutsideRange('==1.17.5', cp311)).toBeNull();
    expect(nearestOutsideRange('<1.0', [])).toBeNull();
  });
});

describe('eraCapsInConflict', () => {
  const stderr =
    '  × No solution found when resolving dependencies:\n  ╰─▶ Because tensorboard==2.15.0 depends on protobuf>=3.19.6 and you require protobuf<3.8,>=3.0, we can conclude that your requirements are unsatisfiable.';
  it('takes the era’s cap off a requirement the conflict names, and keeps the project’s own clauses', () => {
    const protobuf = {
      ...requirement('protobuf', '>=3.0,<3.8'),
      source: 'era' as const,
      why: 'setup.py: protobuf>=3.0; capped <3.8: the ref is of 2019',
    };
    const [hit] = eraCapsInConflict(stderr, [requirement('tensorboard'), protobuf]);
    expect(hit?.cap).toBe('<3.8');
    expect(hit?.relaxed.specifier).toBe('>=3.0');
  });
  it('names nothing for a repository’s own upper bound, or a conflict that does not name the package', () => {
    expect(eraCapsInConflict(stderr, [requirement('protobuf', '<3.8')])).toEqual([]);
    const numpy = { ...requirement('numpy', '<1.18'), source: 'era' as const, why: 'capped <1.18: x' };
    expect(eraCapsInConflict(stderr, [numpy])).toEqual([]);
  });
});
