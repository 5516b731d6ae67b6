// Relaxation to what exists here (issue 39, item 2): a range no release of which can be installed on this Python
// (fairseq of 2019: `numpy<=1.17.5`, no wheel for 3.11) moves to the nearest release that can, keeping the side of the
// range that still holds (numpy 1.23, the oldest with cp311 wheels: still before 1.24 removed `np.float`). And a
// resolution conflict that the era's cap on a package causes (tensorboard needs a protobuf newer than the commit's)
// drops that cap. Pure.
import { compareVersions, parseVersion, satisfies } from '../compare-versions.js';
import type { Requirement } from '../types.js';

function clauses(specifier: string): string[] {
  return specifier
    .split(',')
    .map((c) => c.trim())
    .filter(Boolean);
}

/** Upper bounds (`<`, `<=`, `==x.*`-less caps) and the rest. */
function isUpper(clause: string): boolean {
  return /^<|^~=/.test(clause);
}

function holds(version: string, cs: string[]): boolean {
  return cs.length === 0 || satisfies(version, cs.join(','));
}

/**
 * The release nearest to a range that admits none of `available`: the oldest above it that keeps its lower bounds,
 * else the newest below it that keeps its upper bounds. Null when the range is an exact pin (the caller's
 * nearest-version rule handles those) or nothing fits either way.
 */
export function nearestOutsideRange(specifier: string, available: readonly string[]): string | null {
  const cs = clauses(specifier);
  if (cs.length === 0 || cs.some((c) => /^===?/.test(c))) return null;
  const finals = available
    .filter((v) => {
      const p = parseVersion(v);
      return p !== null && !p.is_prerelease;
    })
    .sort((a, b) => compareVersions(parseVersion(a)!, parseVersion(b)!));
  if (finals.some((v) => holds(v, cs))) return null;
  const lower = cs.filter((c) => !isUpper(c));
  const upper = cs.filter((c) => isUpper(c));
  const above = finals.find((v) => holds(v, lower) && upper.some((u) => !holds(v, [u])));
  if (above) return above;
  return [...finals].reverse().find((v) => holds(v, upper)) ?? null;
}

/** The era's cap on a requirement (`capped <3.20: …` in its why), or null. */
export function eraCapOf(req: Requirement): string | null {
  if (req.source !== 'era') return null;
  return /capped ([<>=!~][^:]*):/.exec(req.why)?.[1]?.trim() ?? null;
}

/**
 * The requirements capped by the era that a resolver's conflict names, each with its cap taken off (the project's own
 * clauses stay). Empty when the conflict names none.
 */
export function eraCapsInConflict(
  stderr: string,
  reqs: readonly Requirement[],
): Array<{ req: Requirement; cap: string; relaxed: Requirement }> {
  if (!/No solution found|unsatisfiable|are incompatible/i.test(stderr)) return [];
  return reqs.flatMap((req) => {
    const cap = eraCapOf(req);
    const named = new RegExp(`(?<![\\w.-])${req.name.replace(/-/g, '[-_.]')}(?![\\w-])`, 'i').test(stderr);
    if (!cap || !named) return [];
    const specifier = clauses(req.specifier)
      .filter((c) => c !== cap)
      .join(',');
    return [{ req, cap, relaxed: { ...req, specifier, why: `${req.why}; the era's cap ${cap} was dropped: it conflicts`.slice(0, 500) } }];
  });
}
