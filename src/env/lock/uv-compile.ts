import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { EnvironmentConfigKey } from '../../config/repo-config.js';
import { listAvailableVersions } from './index-versions.js';
import { nearestVersion } from '../compare-versions.js';
import { eraCapToNearest } from './era-cap-nearest.js';
import { eraCapsInConflict, nearestOutsideRange } from './relax-range.js';
import type { EnvBuildFailure, EnvSpec, Requirement, Substitution } from '../types.js';
import { logTail, readUvProblem, type UvProblem } from './uv-errors.js';
import { normaliseLock, parseVia, requirementLine, type LocalPin } from './uv-lock.js';
import { indexArgs, runUv, type UvContext } from '../sandboxed/uv-run.js';

/** Substitutions tried before a resolution failure is final. */
const MAX_SUBSTITUTIONS = 4;

/** `via`: who pulled each locked distribution in (uv's annotations), so an overlay can leave out what only the base's packages need. */
export type CompileResult =
  { ok: true; lock: string; via: Record<string, string[]>; substitutions: Substitution[] } | { ok: false; failure: EnvBuildFailure };

/** The repgen.yml key a user changes to fix a failure of this kind. */
export function configKeyFor(problem: UvProblem): EnvironmentConfigKey {
  if (problem.kind === 'python') return 'environment.python';
  // The schema's key: this advice once named an index_url key, which the schema rejects.
  if (problem.kind === 'network') return 'environment.index';
  return 'environment.packages';
}

function describe(problem: UvProblem, what: string): string {
  const pkg = problem.package ? `${problem.package}${problem.version ? `==${problem.version}` : ''}` : null;
  switch (problem.kind) {
    case 'missing-version':
      return `${what}: ${pkg ?? 'a requirement'} is not on the index`;
    case 'no-wheel':
      return `${what}: ${pkg} has no wheel for this Python and building from source is off`;
    case 'python':
      return `${what}: ${pkg} needs another Python version`;
    case 'build':
      return `${what}: building ${pkg ?? 'a source distribution'} failed`;
    case 'download':
      return `${what}: downloading ${pkg ?? 'a package'} failed`;
    case 'network':
      return `${what}: the package index could not be reached`;
    default:
      return `${what} failed`;
  }
}

export function failureFrom(step: EnvBuildFailure['step'], stderr: string, what: string): EnvBuildFailure {
  const problem = readUvProblem(stderr);
  return {
    step,
    package: problem.package,
    message: describe(problem, what).slice(0, 2000),
    logTail: logTail(stderr),
    configKey: configKeyFor(problem),
  };
}

/** The exact version a requirement pins (`==1.2.3`), or null. */
function pinnedVersion(req: Requirement): string | null {
  const m = /^===?\s*([^,\s*]+)$/.exec(req.specifier.trim());
  return m ? (m[1] as string) : null;
}

/**
 * `uv pip compile` in the sandbox, and when it fails on a version that cannot be had here (not on the index, no
 * wheel for this Python, its source build fails, it needs another Python), the same pin moved to the nearest
 * version that can, recorded as a Substitution; up to MAX_SUBSTITUTIONS times. A local pin (the CPU torch) that
 * conflicts with the requirements is dropped and the index's build used instead.
 */
export async function compileLock(
  ctx: UvContext,
  buildDir: string,
  spec: EnvSpec,
  requirements: Requirement[],
  pins: LocalPin[],
  pythonVersion: string,
  /** Constraint lines that add no package (`numpy<2`: an overlay's preference); never relaxed here. @defaultValue [] */
  preferences: readonly string[] = [],
): Promise<CompileResult> {
  let reqs = requirements;
  let constraints = pins;
  // Wheels only at first: resolving then runs no third-party code, and a pin with no wheel for this Python is
  // found here (and moved to the nearest version with one) instead of in a long source build at install time.
  let onlyBinary = true;
  const substitutions: Substitution[] = [];
  for (let attempt = 0; ; attempt++) {
    const input = join(buildDir, 'requirements.in');
    const constraintFile = join(buildDir, 'constraints.txt');
    await writeFile(input, reqs.map((r) => `${requirementLine(r)}\n`).join(''));
    await writeFile(constraintFile, [...constraints.map((p) => `${p.name}==${p.version}`), ...preferences].map((l) => `${l}\n`).join(''));
    const out = await runUv(ctx, buildDir, [
      'pip',
      'compile',
      input,
      '--constraint',
      constraintFile,
      '--python',
      ctx.basePython,
      '--no-header',
      '--annotation-style',
      'line',
      '--quiet',
      ...(onlyBinary ? ['--only-binary', ':all:'] : []),
      ...indexArgs(spec),
    ]);
    if (out.aborted)
      return {
        ok: false,
        failure: { step: 'timeout', package: null, message: 'the build was cancelled', logTail: logTail(out.stderr), configKey: null },
      };
    if (out.timedOut)
      return {
        ok: false,
        failure: { ...failureFrom('timeout', out.stderr, 'resolving the requirements'), message: 'resolving the requirements timed out' },
      };
    if (out.code === 0) return { ok: true, lock: normaliseLock(out.stdout), via: parseVia(out.stdout), substitutions };
    const problem = readUvProblem(out.stderr);
    const step = problem.kind === 'build' ? 'install' : 'resolve';
    const fail = { ok: false as const, failure: failureFrom(step, out.stderr, 'resolving the requirements') };
    // A local pin the resolver names in its reasons (another requirement wants a torch it is not) goes first: the
    // requirements win over the machine's preference.
    const named = constraints.filter((p) => new RegExp(`\\b${p.name.replace(/-/g, '[-_.]')}\\b`, 'i').test(out.stderr));
    if (named.length > 0 && attempt < MAX_SUBSTITUTIONS) {
      constraints = constraints.filter((p) => !named.includes(p));
      continue;
    }
    // A cap the commit's era put on a package that the conflict names goes first (detectron2's tensorboard needs a
    // newer protobuf than the commit's): the project's own clauses stay, and the comment says what moved.
    const capped = attempt < MAX_SUBSTITUTIONS ? eraCapsInConflict(out.stderr, reqs) : [];
    if (capped.length > 0) {
      const where = { indexUrls: [spec.indexUrl ?? 'https://pypi.org/simple', ...spec.extraIndexUrls], findLinks: spec.findLinks };
      for (const c of capped) {
        // No release in the cap installs on this Python (numpy<1.20 on 3.11): the nearest that does, not the newest.
        const moved = eraCapToNearest(c.req, c.cap, await listAvailableVersions(c.req.name, where, pythonVersion, ctx.signal));
        if (moved) c.relaxed = moved.req;
        substitutions.push({
          name: c.req.name,
          wanted: `${c.cap} (the era of the commit)`,
          got: moved ? moved.got : 'the resolver’s choice',
          why: moved
            ? `no release in the era's cap ${c.req.name}${c.cap} installs on Python ${pythonVersion}; ${moved.got}, the nearest release that does, was used`
            : `the era's cap ${c.req.name}${c.cap} conflicts with the other requirements (${conflictCause(out.stderr)})`,
        });
      }
      reqs = reqs.map((r) => capped.find((c) => c.req === r)?.relaxed ?? r);
      continue;
    }
    // Two pins the report gives that cannot hold together (numpy 2.1.0 beside a TensorFlow that needs numpy < 2): the
    // report's pin the resolver names goes, the resolver picks, and the comment says so. Repository, script and
    // repgen.yml requirements are never relaxed.
    const conflicting = attempt < MAX_SUBSTITUTIONS ? conflictingReportPin(out.stderr, reqs) : null;
    if (conflicting) {
      substitutions.push({
        name: conflicting.req.name,
        wanted: conflicting.wanted,
        got: 'the resolver’s choice',
        why: `${conflicting.req.name}==${conflicting.wanted} (from the report) conflicts with the other requirements (${conflicting.cause})`,
      });
      reqs = reqs.map((r) => (r === conflicting.req ? { ...r, specifier: '' } : r));
      continue;
    }
    if (attempt >= MAX_SUBSTITUTIONS || !problem.package) return fail;
    const req = reqs.find((r) => r.name === problem.package);
    const wanted = req ? pinnedVersion(req) : null;
    if (problem.kind === 'network' || problem.kind === 'download' || problem.kind === 'other') return fail;
    const where = { indexUrls: [spec.indexUrl ?? 'https://pypi.org/simple', ...spec.extraIndexUrls], findLinks: spec.findLinks };
    const available = await listAvailableVersions(problem.package, where, pythonVersion, ctx.signal);
    // A pure-Python project published as sdists only is built from source, as asked; a compiled one moves to a
    // version with a wheel for this Python.
    const noWheel = problem.kind === 'no-wheel' && onlyBinary;
    const candidates = problem.kind === 'missing-version' ? [...available.wheels, ...available.sdists] : available.wheels;
    // A range no release of which installs here (`numpy<=1.17.5` on Python 3.11): the nearest release that does.
    const outside = req && !wanted && (!noWheel || available.compiled) ? nearestOutsideRange(req.specifier, candidates) : null;
    if (req && outside) {
      substitutions.push({
        name: req.name,
        wanted: req.specifier,
        got: outside,
        why: rangeWhy(problem, req.specifier, outside, pythonVersion),
      });
      reqs = reqs.map((r) => (r === req ? { ...r, specifier: `==${outside}` } : r));
      continue;
    }
    const movable = req && wanted && (!noWheel || available.compiled);
    const got = movable
      ? nearestVersion(
          wanted,
          candidates.filter((v) => v !== wanted),
        )
      : null;
    if (!got && noWheel) {
      onlyBinary = false;
      continue;
    }
    if (!req || !wanted || !got) return fail;
    substitutions.push({ name: req.name, wanted, got, why: substitutionWhy(problem, wanted, pythonVersion) });
    reqs = reqs.map((r) => (r === req ? { ...r, specifier: `==${got}` } : r));
  }
}

/** The report's exact pin a resolver's conflict names (`you require numpy==2.1.0`), with the first cause line. */
function conflictingReportPin(stderr: string, reqs: Requirement[]): { req: Requirement; wanted: string; cause: string } | null {
  if (!/No solution found|unsatisfiable|are incompatible/i.test(stderr)) return null;
  for (const m of stderr.matchAll(/you require ([A-Za-z0-9._-]+)==([^\s,]+)/g)) {
    const name = (m[1] ?? '').toLowerCase().replace(/[-_.]+/g, '-');
    const req = reqs.find((r) => r.name === name && r.source === 'report' && pinnedVersion(r) !== null);
    if (!req) continue;
    return { req, wanted: pinnedVersion(req) as string, cause: conflictCause(stderr) };
  }
  return null;
}

/** The first cause line of a resolver's conflict. */
function conflictCause(stderr: string): string {
  return (/Because ([^\n]*?)(?: and you require|,|$)/m.exec(stderr)?.[1] ?? 'see the log').slice(0, 200);
}

function rangeWhy(problem: UvProblem, range: string, got: string, pythonVersion: string): string {
  const what = problem.kind === 'missing-version' ? 'is on the package index' : `installs on Python ${pythonVersion}`;
  return `no release in ${range} ${what}; ${got}, the nearest release that does, was used`;
}

function substitutionWhy(problem: UvProblem, wanted: string, pythonVersion: string): string {
  switch (problem.kind) {
    case 'missing-version':
      return `${wanted} is not on the package index; the nearest release that is was used`;
    case 'python':
      return `${wanted} does not support Python ${pythonVersion}; the nearest release that does was used`;
    case 'build':
      return `${wanted} has no wheel for Python ${pythonVersion} and its source build failed; the nearest release with a wheel was used`;
    default:
      return `${wanted} has no wheel for Python ${pythonVersion}; the nearest release with one was used`;
  }
}
