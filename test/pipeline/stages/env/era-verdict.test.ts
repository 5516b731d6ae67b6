import { describe, expect, it } from 'vitest';
import type { ProofVerdict } from '../../../../src/env/prove/import-failure.js';
import { eraVerdict } from '../../../../src/pipeline/stages/env/era-verdict.js';

const rel = (version: string, uploaded: string) => ({ version, uploaded, wheels: [], yanked: false });
const tooOld = (pkg: string): ProofVerdict => ({
  kind: 'framework-too-old',
  package: pkg,
  constraint: '>2.0',
  why: `${pkg} 2.0 has no x.y`,
});
const failure = { module: 'proj', error: "ImportError: cannot import name 'y' from 'x'", versions: { Hub: '2.0' } };

describe('eraVerdict', () => {
  it('looks up the blamed distribution’s releases and applies the commit’s era (the env’s version from the failure)', async () => {
    const asked: string[] = [];
    const era = {
      commitDate: '2024-01-02T00:00:00Z',
      releases: (name: string) => {
        asked.push(name);
        return Promise.resolve([rel('1.0', '2023-05-01T00:00:00Z'), rel('2.0', '2025-05-01T00:00:00Z')]);
      },
    };
    expect(await eraVerdict(tooOld('hub'), failure, {}, era)).toMatchObject({ kind: 'api-removed', constraint: '<1.1' });
    expect(asked).toEqual(['hub']);
  });

  it('changes nothing without an era, when the lookup fails, or for another kind of verdict', async () => {
    const v = tooOld('hub');
    expect(await eraVerdict(v, failure, { hub: '2.0' }, undefined)).toBe(v);
    const broken = { commitDate: '2024-01-02T00:00:00Z', releases: () => Promise.reject(new Error('offline')) };
    expect(await eraVerdict(v, failure, { hub: '2.0' }, broken)).toBe(v);
    const other: ProofVerdict = { kind: 'numpy-abi', package: 'numpy', constraint: '<2', why: 'abi' };
    expect(await eraVerdict(other, failure, {}, broken)).toBe(other);
  });

  it('hostile: a package name made up by the checkout’s import error is never looked up', async () => {
    const asked: string[] = [];
    const era = { commitDate: '2024-01-02T00:00:00Z', releases: (n: string) => (asked.push(n), Promise.resolve(null)) };
    for (const name of ['../../admin', 'a/b', 'x?y=1', `a${'b'.repeat(200)}`, 'ünï', '-lead', 'trail.']) {
      const v = tooOld(name);
      expect(await eraVerdict(v, failure, { [name]: '2.0' }, era)).toBe(v);
    }
    expect(asked).toEqual([]);
  });
});
