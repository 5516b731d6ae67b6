import type { EnvBuildFailure, EnvSpec, Substitution } from '../types.js';
import { normaliseName } from '../lock/uv-lock.js';

/**
 * The spec without a dependency whose source build fails here (fastBPE's generated C++ includes `longintrepr.h`,
 * gone in Python 3.11), when only the repository declares it: no version of it can be had on this Python, and the
 * report's code does not import it (its own imports are `script` requirements), so the env has everything else and
 * says what it left out. A package the report or the script names, or repgen.yml asks for, fails the build. Pure.
 */
export function withoutUnbuildable(spec: EnvSpec, failure: EnvBuildFailure): { spec: EnvSpec; left: Substitution } | null {
  if (failure.step !== 'install' || !failure.package || !/build/i.test(`${failure.message}\n${failure.logTail}`)) return null;
  const pkg = normaliseName(failure.package);
  const named = spec.requirements.filter((r) => normaliseName(r.name) === pkg);
  if (!named.length || named.some((r) => r.source !== 'repo') || pkg === normaliseName(spec.project?.distribution ?? '')) return null;
  const first =
    failure.logTail
      .split('\n')
      .find((l) => /error|fatal/i.test(l))
      ?.trim() ?? failure.message;
  const r = named[0];
  const why = `${r?.why ?? 'declared by the repository'}; it does not build on this Python (${first.slice(0, 160)}), and the report's code does not import it`;
  return {
    spec: { ...spec, requirements: spec.requirements.filter((x) => normaliseName(x.name) !== pkg) },
    left: { name: r?.name ?? pkg, wanted: r?.specifier || 'any version', got: LEFT_OUT, why },
  };
}

/** What a substitution's `got` says for a dependency the env does without. */
export const LEFT_OUT = 'left out';
