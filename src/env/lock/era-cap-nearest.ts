// An era cap no release of which installs here (issue 39, item 2). The commit's era caps numpy at what was current
// then (detectron2 of 2020: numpy<1.20), for the Python of that day; on today's Python no release in the cap has a
// wheel. Dropping the cap lets the resolver take the newest numpy (2.x), beside a base torch and pandas built for
// numpy 1; the nearest release that installs keeps the era's side (numpy 1.23, still before 1.24 removed `np.float`).
// Pure.
import { nearestOutsideRange } from './relax-range.js';
import type { Requirement } from '../types.js';
import type { AvailableVersions } from './index-versions.js';

/**
 * The requirement with its era cap moved to the nearest release that installs here, or null when some release in the
 * cap does install (the conflict is another requirement's: the cap is dropped as before) or none outside it does. A
 * compiled package counts only its wheels for this Python; a pure one its source distributions too. The result is no
 * longer an era cap (its source is `policy`), so a later conflict does not move it again.
 */
export function eraCapToNearest(
  req: Requirement,
  cap: string,
  available: Pick<AvailableVersions, 'wheels' | 'sdists' | 'compiled'>,
): { req: Requirement; got: string } | null {
  const installable = available.compiled ? available.wheels : [...available.wheels, ...available.sdists];
  const got = nearestOutsideRange(req.specifier, installable);
  if (!got) return null;
  const own = req.specifier
    .split(',')
    .map((c) => c.trim())
    .filter((c) => c && c !== cap);
  return {
    req: {
      ...req,
      specifier: [...own, `==${got}`].join(','),
      source: 'policy',
      why: `${req.why}; no release in the era's cap ${cap} installs here, so ${got}, the nearest that does`.slice(0, 500),
    },
    got,
  };
}
