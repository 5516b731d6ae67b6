/**
 * The small part of PEP 440 the env builder needs on the host: compare release versions, test a version against a
 * specifier set, and pick the nearest available version when the one asked for cannot be had. Pure. Versions it
 * cannot read are left alone (never chosen as a substitute); uv itself does the real resolution.
 */

export interface Version {
  /** Release segment (`2.8.0` → [2, 8, 0]). */
  release: number[];
  /** Pre-release rank: a < b < rc; null for a final release. */
  pre: [number, number] | null;
  post: number | null;
  dev: number | null;
  /** Local label (`cu129` of `2.8.0+cu129`), '' for none. */
  local: string;
}

const VERSION = new RegExp(
  [
    '^v?(?:\\d+!)?(\\d+(?:\\.\\d+)*)',
    '(?:[-_.]?(a|b|rc|alpha|beta|c|pre|preview)[-_.]?(\\d*))?',
    '(?:[-_.]?(?:post|rev|r)[-_.]?(\\d*))?',
    '(?:[-_.]?dev[-_.]?(\\d*))?',
    '(?:\\+([a-z0-9.]+))?$',
  ].join(''),
  'i',
);
const PRE_RANK: Record<string, number> = { a: 0, alpha: 0, b: 1, beta: 1, c: 2, rc: 2, pre: 2, preview: 2 };

/** Parses a PEP 440 version; null when it is not one. */
export function parseVersion(text: string): Version | null {
  const m = VERSION.exec(text.trim());
  if (!m) return null;
  const [, release, preTag, preNum, post, dev, local] = m;
  return {
    release: (release as string).split('.').map(Number),
    pre: preTag ? [PRE_RANK[preTag.toLowerCase()] ?? 2, Number(preNum || 0)] : null,
    post: post === undefined ? null : Number(post || 0),
    dev: dev === undefined ? null : Number(dev || 0),
    local: local ?? '',
  };
}

function cmpRelease(a: number[], b: number[]): number {
  const n = Math.max(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const d = (a[i] ?? 0) - (b[i] ?? 0);
    if (d !== 0) return Math.sign(d);
  }
  return 0;
}

/** Orders two versions (local labels ignored, as specifiers without one do). */
export function compareVersions(a: Version, b: Version): number {
  const r = cmpRelease(a.release, b.release);
  if (r !== 0) return r;
  // dev < pre < final < post
  const rank = (v: Version): number[] => [
    v.pre === null && v.dev !== null && v.post === null ? -1 : 0,
    v.pre ? v.pre[0] : 9,
    v.pre ? v.pre[1] : 0,
    v.post ?? -1,
    v.dev === null ? Infinity : v.dev,
  ];
  const ra = rank(a);
  const rb = rank(b);
  for (let i = 0; i < ra.length; i++) if (ra[i] !== rb[i]) return Math.sign((ra[i] as number) - (rb[i] as number));
  return 0;
}

/** Whether `version` satisfies one clause (`>=1.2`, `==2.*`, `~=1.4.2`, `!=1.5`). Unknown operators admit it. */
function satisfiesClause(version: Version, clause: string): boolean {
  const m = /^(===|==|!=|~=|>=|<=|>|<)\s*(.+)$/.exec(clause.trim());
  if (!m) return true;
  const [, op, rawTarget] = m as unknown as [string, string, string];
  if (op === '==' || op === '!=') {
    if (rawTarget.endsWith('.*')) {
      const prefix = rawTarget.slice(0, -2).split('.').map(Number);
      const same = prefix.every((p, i) => (version.release[i] ?? 0) === p);
      return op === '==' ? same : !same;
    }
  }
  const target = parseVersion(rawTarget);
  if (!target) return true;
  const c = compareVersions(version, target);
  const localMatches = target.local === '' || target.local === version.local;
  switch (op) {
    case '==':
    case '===':
      return c === 0 && localMatches;
    case '!=':
      return !(c === 0 && localMatches);
    case '>=':
      return c >= 0;
    case '<=':
      return c <= 0;
    case '>':
      return c > 0;
    case '<':
      return c < 0;
    case '~=': {
      const upper = target.release.slice(0, Math.max(1, target.release.length - 1));
      upper[upper.length - 1] = (upper[upper.length - 1] ?? 0) + 1;
      return c >= 0 && cmpRelease(version.release, upper) < 0;
    }
    default:
      return true;
  }
}

/** Whether `version` satisfies a comma-separated specifier set ('' admits everything). */
export function satisfies(version: string, specifier: string): boolean {
  const v = parseVersion(version);
  if (!v) return false;
  return specifier
    .split(',')
    .filter((c) => c.trim() !== '')
    .every((c) => satisfiesClause(v, c));
}

/** `2.8.0+cu129` → `2.8.0`. */
export function dropLocal(version: string): string {
  const i = version.indexOf('+');
  return i < 0 ? version : version.slice(0, i);
}

/**
 * The available version nearest to `wanted`: the same release if there is one, else the one sharing the longest
 * release prefix, then the smallest distance, a later one preferred on a tie (it is more likely to still have
 * wheels). Pre-releases are only chosen when `wanted` is one. Null when nothing readable is available.
 */
export function nearestVersion(wanted: string, available: string[]): string | null {
  const w = parseVersion(wanted);
  if (!w) return null;
  let best: { text: string; score: number[] } | null = null;
  for (const text of available) {
    const v = parseVersion(text);
    if (!v || ((v.pre || v.dev !== null) && !(w.pre || w.dev !== null))) continue;
    let shared = 0;
    while (shared < w.release.length && v.release[shared] === w.release[shared]) shared++;
    const next = Math.abs((v.release[shared] ?? 0) - (w.release[shared] ?? 0));
    const later = compareVersions(v, w) > 0 ? 1 : 0;
    const score = [shared, -next, later, v.local === '' ? 1 : 0];
    if (
      !best ||
      lexGreater(score, best.score) ||
      (lexEqual(score, best.score) && compareVersions(v, parseVersion(best.text) as Version) > 0)
    )
      best = { text, score };
  }
  return best?.text ?? null;
}

function lexGreater(a: number[], b: number[]): boolean {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return (a[i] as number) > (b[i] as number);
  return false;
}

function lexEqual(a: number[], b: number[]): boolean {
  return a.every((x, i) => x === b[i]);
}
