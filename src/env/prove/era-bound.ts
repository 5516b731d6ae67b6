// A ladder's move up, bounded by the ref's era (issue 39, items 1 and 3): the report pinned transformers 4.40.2, the
// peft of 2025-03 needs a newer one, and "newer" is the newest release by the commit's date (4.49.0), not today's
// (5.25.0, a major the code never ran on). Pure: the resolver applies the date (uv `--exclude-newer-package`).
import { ERA_FRAMEWORKS } from '../types.js';
import type { EnvSpec } from '../types.js';

/**
 * The spec with `name` resolved as of the ref's commit date, or null when there is no date, the package is a
 * framework (its CPU build comes from the operator's wheel folder, which has no upload dates, and its era is the
 * version decision's), or it is bounded already.
 */
export function boundByEra(spec: EnvSpec, name: string): EnvSpec | null {
  const date = spec.eraDate;
  if (!date || (ERA_FRAMEWORKS as readonly string[]).includes(name) || spec.excludeNewerPackages?.[name]) return null;
  return { ...spec, excludeNewerPackages: { ...spec.excludeNewerPackages, [name]: date } };
}

/** The spec without the era bound on `name` (a move up that nothing of the era satisfies). */
export function withoutEraBound(spec: EnvSpec, name: string): EnvSpec {
  const rest = Object.fromEntries(Object.entries(spec.excludeNewerPackages ?? {}).filter(([n]) => n !== name));
  const { excludeNewerPackages: _dropped, ...others } = spec;
  return Object.keys(rest).length ? { ...others, excludeNewerPackages: rest } : others;
}
