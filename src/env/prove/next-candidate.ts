// The import ladder's step (issue 39, item 3): from a candidate env that failed its import proof, the next spec to
// build: the framework a failure blames moved past the version that lacked the API, numpy moved to the side its
// C-API needs, a missing top-level module added. Pure.
import type { ProofVerdict } from './import-failure.js';
import type { EnvSpec, Requirement } from '../types.js';
import { boundByEra } from './era-bound.js';
import { compareVersions, fitsSpecifier as fits, parseVersion } from '../compare-versions.js';

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
  let specifier = [...new Set(clauses)].join(',');
  // With no GPU, torch moves only to a CPU build of the operator's wheel folder: the index's is a CUDA build of several
  // GB (torchvision-7885: `torch>1.13.0a0` resolved PyPI's torch 2.12.1 and 20 nvidia wheels). None fits: no candidate.
  let wheelNote = '';
  let extraIndexUrls = spec.extraIndexUrls;
  if (name === 'torch' && spec.cpuTorchWheels) {
    const wheel = newestFitting(spec.cpuTorchWheels, specifier);
    if (wheel) {
      specifier = `==${wheel.replace(/\+.*$/, '')}`;
      wheelNote = ` (the CPU build ${wheel} from the operator's wheel folder)`;
    } else if (spec.cpuTorchIndex) {
      // uv reads an extra index before the default one: torch comes from PyTorch's CPU index.
      extraIndexUrls = extraIndexUrls.includes(spec.cpuTorchIndex) ? extraIndexUrls : [...extraIndexUrls, spec.cpuTorchIndex];
      wheelNote = ` (from PyTorch's CPU index)`;
    } else return null;
  }
  // The base's torchvision is built for the base's torch: an env with another torch is a venv of its own.
  const baseProvides = name === 'torch' ? [] : (spec.baseProvides ?? []).filter((p) => p !== name);
  const stillFromBase = (spec.baseProvides ?? []).includes(name);
  if (prev && prev.specifier === specifier && !stillFromBase) return null;
  const why = `the import proof: ${verdict.why}`;
  const req: Requirement = prev
    ? { ...prev, specifier, why: `${prev.why}; ${why}`.slice(0, 500) }
    : { name, specifier, extras: [], source: 'policy', why: why.slice(0, 500) };
  const requirements = prev ? spec.requirements.map((r) => (r === prev ? req : r)) : [...spec.requirements, req];
  const moved: EnvSpec = { ...spec, requirements, extraIndexUrls, ...(spec.baseProvides ? { baseProvides } : {}) };
  // A move up (or a module added) takes the newest release of the ref's era, not today's.
  const bounded = verdict.kind === 'framework-too-old' || verdict.kind === 'missing-module' ? boundByEra(moved, name) : null;
  const era = bounded ? ` (released by ${bounded.eraDate?.slice(0, 10)})` : '';
  const change = `${name}${specifier ? ` ${specifier}` : ''}${wheelNote}${era}`;
  return { spec: bounded ?? moved, change, ...(bounded ? { eraBound: name } : {}) };
}

/** The newest of `versions` that satisfies `specifier`, or null. */
function newestFitting(versions: readonly string[], specifier: string): string | null {
  let best: string | null = null;
  for (const v of versions) {
    const parsed = parseVersion(v);
    if (!parsed || !fits(v, specifier)) continue;
    if (!best || compareVersions(parsed, parseVersion(best) as NonNullable<typeof parsed>) > 0) best = v;
  }
  return best;
}
