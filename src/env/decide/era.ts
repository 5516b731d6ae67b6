import { compare, valid } from '@renovatebot/pep440';

/**
 * The era of the code: a package that broke its API since (numpy 1.24 removed `np.float`, which 2019 code
 * uses) is capped at the minor series that was current at the ref's commit date, unless the report names
 * a version. Release dates come from a port (PyPI's JSON API in production, a fake in tests); this file
 * only decides. Pure.
 */

/** Packages whose newer releases remove what older code calls; the others take their newest release. */
export const ERA_SENSITIVE = ['numpy', 'scipy', 'pandas', 'scikit-learn', 'protobuf', 'setuptools'] as const;

/** One release of a distribution, as the index lists it. */
export interface ReleaseInfo {
  version: string;
  /** First upload, ISO 8601. */
  uploaded: string;
  /** Wheel file names (`numpy-1.23.5-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl`). */
  wheels: string[];
  yanked: boolean;
}

/** The port: a distribution's releases (null: unknown to the index, or the index unreachable). */
export interface ReleaseDates {
  releases(name: string): Promise<ReleaseInfo[] | null>;
}

export interface EraCap {
  name: string;
  /** `<1.24` */
  specifier: string;
  why: string;
}

/** Whether a wheel installs on Linux x86_64 CPython `python` (`3.11`). */
export function wheelFits(file: string, python: string): boolean {
  const m = /-((?:[a-z]+\d*\.?)+)-([\w.]+)-([\w.]+)\.whl$/.exec(file);
  if (!m) return false;
  const [pyTags, abiTags, platTags] = [m[1] ?? '', m[2] ?? '', m[3] ?? ''];
  const want = python.replace('.', '');
  const platformOk = platTags.split('.').some((p) => p === 'any' || /^(?:many|musl)?linux.*x86_64$/.test(p));
  if (!platformOk) return false;
  return pyTags.split('.').some((t) => {
    if (t === `cp${want}` || t === 'py3' || t === `py${want}`) return true;
    // `cp37-abi3`: the stable ABI, good for every later CPython.
    const abi3 = /^cp3(\d+)$/.exec(t);
    return abi3 !== null && abiTags.split('.').includes('abi3') && Number(abi3[1]) <= Number(want.slice(1));
  });
}

/**
 * The cap for one package: the newest release uploaded by `commitDate` that has a wheel for `python` sets
 * the series (`1.17.4` → `<1.18`). When no release of that era has such a wheel (numpy of 2019 has none for
 * Python 3.11), the oldest series that does stands in, and `why` says so. Null when the releases are
 * unknown or the newest series is of the era already (nothing to cap).
 */
export function eraCap(name: string, releases: readonly ReleaseInfo[], commitDate: string, python: string): EraCap | null {
  const date = Date.parse(commitDate);
  if (Number.isNaN(date)) return null;
  const finals = releases
    .filter((r) => !r.yanked && valid(r.version) && /^\d+(\.\d+)*$/.test(r.version))
    .sort((a, b) => compare(a.version, b.version));
  if (!finals.length) return null;
  const fits = (r: ReleaseInfo) => r.wheels.some((w) => wheelFits(w, python));
  const ofEra = finals.filter((r) => Date.parse(r.uploaded) <= date);
  const eraNewest = ofEra.at(-1);
  if (!eraNewest) return null;
  let chosen = [...ofEra].reverse().find(fits);
  let why = `the ref's commit is of ${commitDate.slice(0, 10)}, when ${name} ${eraNewest.version} was the newest release`;
  if (!chosen) {
    chosen = finals.find((r) => Date.parse(r.uploaded) > date && fits(r));
    if (!chosen) return null;
    why += `; no ${name} of that time has a wheel for Python ${python}, ${seriesOf(chosen.version)} is the oldest series that has one`;
  }
  const upper = nextMinor(chosen.version);
  // Nothing newer than the chosen series exists: a cap would change nothing.
  if (!finals.some((r) => compare(r.version, upper) >= 0)) return null;
  return { name, specifier: `<${upper}`, why };
}

function seriesOf(version: string): string {
  return version.split('.').slice(0, 2).join('.');
}

function nextMinor(version: string): string {
  const [major = '0', minor = '0'] = version.split('.');
  return `${major}.${Number(minor) + 1}`;
}
