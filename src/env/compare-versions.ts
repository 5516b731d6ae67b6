import { compare, explain, validRange, satisfies as satisfiesRange, type Pep440Version } from '@renovatebot/pep440';

/**
 * Versions as the env builder compares them on the host, read by `@renovatebot/pep440` (the one PEP 440 reader of
 * src/env/), in the shape its call sites want: local labels left out of the order, as a specifier without one leaves
 * them out; pre-releases admitted by a range (the choice of a final release is the caller's); and the nearest
 * available version when the one asked for cannot be had, a policy of ours that PEP 440 does not define. Pure.
 * Versions it cannot read are left alone (never chosen as a substitute); uv itself does the real resolution.
 */

export type Version = Pep440Version;

/** Parses a PEP 440 version; null when it is not one. */
export function parseVersion(text: string): Version | null {
  return explain(text.trim());
}

/** Orders two versions (local labels ignored, as specifiers without one do). */
export function compareVersions(a: Version, b: Version): number {
  return Math.sign(compare(a.public, b.public));
}

/**
 * Whether `version` satisfies a comma-separated specifier set ('' admits everything; a clause the library cannot
 * read admits it too: uv, which reads every requirement, is the judge of those).
 */
export function satisfies(version: string, specifier: string): boolean {
  if (!parseVersion(version)) return false;
  const clauses = specifier
    .split(',')
    .map((c) => c.trim())
    .filter((c) => c !== '' && validRange(c));
  return clauses.length === 0 || satisfiesRange(version.trim(), clauses.join(','), { prereleases: true });
}

/** `2.8.0+cu129` → `2.8.0`. */
/** `satisfies`, where a specifier the library throws on admits nothing (the ladder and the wheel choice skip it). */
export function fitsSpecifier(version: string, specifier: string): boolean {
  try {
    return satisfies(version, specifier);
  } catch {
    return false;
  }
}

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
  let best: { text: string; version: Version; score: number[] } | null = null;
  for (const text of available) {
    const v = parseVersion(text);
    if (!v || (v.is_prerelease && !w.is_prerelease)) continue;
    let shared = 0;
    while (shared < w.release.length && v.release[shared] === w.release[shared]) shared++;
    const next = Math.abs((v.release[shared] ?? 0) - (w.release[shared] ?? 0));
    const later = compareVersions(v, w) > 0 ? 1 : 0;
    const score = [shared, -next, later, v.local ? 0 : 1];
    if (!best || lexGreater(score, best.score) || (lexEqual(score, best.score) && compareVersions(v, best.version) > 0))
      best = { text, version: v, score };
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
