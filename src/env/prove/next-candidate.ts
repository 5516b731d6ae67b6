// The import ladder's step (issue 39, item 3): from a candidate env that failed its import proof, the next spec to
// build: the framework a failure blames moved past the version that lacked the API, numpy moved to the side its
// C-API needs, a missing top-level module added. Pure.
import type { ProofVerdict } from './import-failure.js';
import type { EnvSpec, Requirement } from '../types.js';
import { boundByEra } from './era-bound.js';

/** Clauses a verdict's constraint replaces: a move up drops the upper bounds and exact pins, a move down the lower ones. */
function keptClauses(specifier: string, constraint: string): string[] {
  const up = /^>/.test(constraint);
  return specifier
    .split(',')
    .map((c) => c.trim())
    .filter(Boolean)
    .filter((c) => !/^(?:===?|~=)/.test(c))
    .filter((c) => (up ? !/^</.test(c) : !/^>/.test(c)));
}

/**
 * The spec of the next candidate, or null when the verdict names nothing to change, or only what the user pinned in
 * repgen.yml (the user's word wins), or a change already made. The changed requirement says why.
 */
export function nextCandidate(spec: EnvSpec, verdict: ProofVerdict): { spec: EnvSpec; change: string; eraBound?: string } | null {
  const name = verdict.package;
  if (!name || verdict.constraint === null) return null;
  const prev = spec.requirements.find((r) => r.name === name);
  if (prev?.source === 'config') return null;
  const clauses = prev ? keptClauses(prev.specifier, verdict.constraint) : [];
  if (verdict.constraint) clauses.push(verdict.constraint);
  const specifier = [...new Set(clauses)].join(',');
  // The base's torchvision is built for the base's torch: an env with another torch is a venv of its own.
  const baseProvides = name === 'torch' ? [] : (spec.baseProvides ?? []).filter((p) => p !== name);
  const stillFromBase = (spec.baseProvides ?? []).includes(name);
  if (prev && prev.specifier === specifier && !stillFromBase) return null;
  const why = `the import proof: ${verdict.why}`;
  const req: Requirement = prev
    ? { ...prev, specifier, why: `${prev.why}; ${why}`.slice(0, 500) }
    : { name, specifier, extras: [], source: 'policy', why: why.slice(0, 500) };
  const requirements = prev ? spec.requirements.map((r) => (r === prev ? req : r)) : [...spec.requirements, req];
  const moved: EnvSpec = { ...spec, requirements, ...(spec.baseProvides ? { baseProvides } : {}) };
  // A move up (or a module added) takes the newest release of the ref's era, not today's.
  const bounded = verdict.kind === 'framework-too-old' || verdict.kind === 'missing-module' ? boundByEra(moved, name) : null;
  const change = `${name}${specifier ? ` ${specifier}` : ''}${bounded ? ` (released by ${bounded.eraDate?.slice(0, 10)})` : ''}`;
  return { spec: bounded ?? moved, change, ...(bounded ? { eraBound: name } : {}) };
}
