// A CPU run whose project caps torch below every CPU build at hand (Lightning's `torch >=2.1.0, <2.10.0`, whose
// requirements file says its upper bounds are for CI and dropped on install): the range's own CUDA build from the
// index is several GB on a machine with no GPU (issue 39, item 5). The nearest CPU wheel above the cap stands in,
// said as such, and the import proof judges it. Pure.
import { compareVersions, fitsSpecifier as fits, parseVersion } from '../compare-versions.js';

/**
 * The wheel version nearest above `specifier`'s upper bound that satisfies the rest of it, or null: when the
 * specifier has no upper bound, pins a version (`==`, `~=`, `===`), or no wheel meets its lower bounds.
 */
export function cpuWheelOverCap(specifier: string, wheels: readonly string[]): string | null {
  const clauses = specifier
    .split(',')
    .map((c) => c.trim())
    .filter(Boolean);
  if (clauses.some((c) => /^(?:===?|~=)/.test(c))) return null;
  const lower = clauses.filter((c) => !/^<=?/.test(c));
  if (lower.length === clauses.length) return null;
  const rest = lower.join(',');
  let best: string | null = null;
  for (const w of wheels) {
    const v = parseVersion(w);
    if (!v || (rest && !fits(w, rest))) continue;
    if (!best || compareVersions(v, parseVersion(best) as NonNullable<typeof v>) < 0) best = w;
  }
  return best;
}
