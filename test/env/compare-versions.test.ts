import { describe, expect, it } from 'vitest';
import { compareVersions, dropLocal, nearestVersion, parseVersion, satisfies } from '../../src/env/compare-versions.js';

describe('pep440', () => {
  it.each([
    ['1.0', '1.0.0', 0],
    ['1.0a1', '1.0', -1],
    ['1.0.dev1', '1.0a1', -1],
    ['1.0.post1', '1.0', 1],
    ['2.8.0+cu129', '2.8.0', 0],
    ['1.10', '1.9', 1],
  ])('orders %s against %s', (a, b, want) => {
    expect(compareVersions(parseVersion(a)!, parseVersion(b)!)).toBe(want);
  });

  it.each([
    ['1.4.2', '>=1.4,<2', true],
    ['2.0', '>=1.4,<2', false],
    ['1.4.9', '~=1.4.2', true],
    ['1.5.0', '~=1.4.2', false],
    ['2.1.3', '==2.1.*', true],
    ['2.13.0', '', true],
    ['2.13.0', '!=2.13.0', false],
    ['2.8.0', '==2.8.0+cu129', false],
  ])('%s satisfies %s: %s', (v, spec, want) => {
    expect(satisfies(v, spec)).toBe(want);
  });

  it('reads ranges as PEP 440 does: an exclusive bound leaves out its own pre- and post-releases; an unreadable clause is left out', () => {
    expect(satisfies('1.0rc1', '>=0.9,<1.0')).toBe(false);
    expect(satisfies('1.0.post1', '>1.0')).toBe(false);
    expect(satisfies('1!1.0', '>=2.0')).toBe(true);
    expect(satisfies('0.9', '>=1.0,junk')).toBe(false);
    expect(satisfies('1.2', '>=1.0,junk')).toBe(true);
  });

  it('drops a local label', () => {
    expect(dropLocal('2.8.0+cu129')).toBe('2.8.0');
    expect(dropLocal('1.0')).toBe('1.0');
  });

  it.each([
    ['1.5', ['1.0', '2.0'], '1.0'],
    ['1.21.0', ['1.21.6', '1.22.0', '1.26.4', '2.0.2'], '1.21.6'],
    ['1.23.9', ['1.23.5', '1.24.0'], '1.23.5'],
    ['0.9', ['1.0rc1', '0.8'], '0.8'],
    ['2.8.0', ['2.7.1', '2.9.0'], '2.9.0'],
  ])('nearest to %s among %j is %s', (wanted, available, want) => {
    expect(nearestVersion(wanted, available)).toBe(want);
  });
});
