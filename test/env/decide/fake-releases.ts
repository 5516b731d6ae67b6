import type { ReleaseDates, ReleaseInfo } from '../../../src/env/decide/era.js';

const wheels = (name: string, version: string, pys: string[]) =>
  pys.map((p) => `${name}-${version}-cp${p}-cp${p}-manylinux_2_17_x86_64.manylinux2014_x86_64.whl`);

/** numpy's releases as PyPI lists them (dates and CPython wheel tags of the real ones, a few of them). */
export const NUMPY: ReleaseInfo[] = [
  { version: '1.16.4', uploaded: '2019-05-29T01:00:00Z', wheels: wheels('numpy', '1.16.4', ['27', '35', '36', '37']), yanked: false },
  { version: '1.17.0', uploaded: '2019-07-26T20:00:00Z', wheels: wheels('numpy', '1.17.0', ['35', '36', '37']), yanked: false },
  { version: '1.18.0', uploaded: '2019-12-22T16:00:00Z', wheels: wheels('numpy', '1.18.0', ['35', '36', '37', '38']), yanked: false },
  { version: '1.21.0', uploaded: '2021-06-22T17:00:00Z', wheels: wheels('numpy', '1.21.0', ['37', '38', '39']), yanked: false },
  { version: '1.23.2', uploaded: '2022-08-14T20:00:00Z', wheels: wheels('numpy', '1.23.2', ['38', '39', '310', '311']), yanked: false },
  { version: '1.23.5', uploaded: '2022-11-20T00:00:00Z', wheels: wheels('numpy', '1.23.5', ['38', '39', '310', '311']), yanked: false },
  { version: '1.24.0', uploaded: '2022-12-18T22:00:00Z', wheels: wheels('numpy', '1.24.0', ['38', '39', '310', '311']), yanked: false },
  { version: '1.26.4', uploaded: '2024-02-05T23:00:00Z', wheels: wheels('numpy', '1.26.4', ['39', '310', '311', '312']), yanked: false },
  { version: '2.0.0', uploaded: '2024-06-16T00:00:00Z', wheels: wheels('numpy', '2.0.0', ['39', '310', '311', '312']), yanked: false },
];

/** A ReleaseDates fake that records what it was asked and knows only the packages it is given. */
export function fakeReleaseDates(known: Record<string, ReleaseInfo[]>): ReleaseDates & { asked: string[] } {
  const asked: string[] = [];
  return {
    asked,
    releases(name) {
      asked.push(name);
      return Promise.resolve(known[name] ?? null);
    },
  };
}
