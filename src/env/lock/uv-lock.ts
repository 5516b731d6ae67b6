import { createHash } from 'node:crypto';
import { dropLocal, parseVersion, satisfies } from '../compare-versions.js';
import type { ProjectInstall, Requirement, Substitution } from '../types.js';

/**
 * Pure helpers around the lock: the compile input a spec becomes, the pins a lock holds, the keys the cache files
 * are named by, and which wheel files fit the interpreter. No I/O.
 */

/** `torch[opt]>=2.1` as uv reads it in a requirements file. */
export function requirementLine(req: Pick<Requirement, 'name' | 'specifier' | 'extras'>): string {
  const extras = req.extras.length > 0 ? `[${req.extras.join(',')}]` : '';
  return `${req.name}${extras}${req.specifier}`;
}

/** PEP 503 normalisation (`Scikit_Learn` → `scikit-learn`). */
export function normaliseName(name: string): string {
  return name.toLowerCase().replace(/[-_.]+/g, '-');
}

/** `name==version` lines of a `uv pip compile` output → name → version. */
export function parseLock(lock: string): Record<string, string> {
  const pins: Record<string, string> = {};
  for (const raw of lock.split('\n')) {
    const line = raw.replace(/\s+#.*$/, '').trim();
    const m = /^([A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[^\]]*\])?\s*==\s*([^\s;\\]+)/.exec(line);
    if (m) pins[normaliseName(m[1] as string)] = m[2] as string;
  }
  return pins;
}

/** The lock as written to the repro PR's requirements-repro.txt: pins only, sorted, no comments or options. */
export function normaliseLock(compiled: string): string {
  const lines = compiled
    .split('\n')
    .map((l) => l.replace(/\s+#.*$/, '').trim())
    .filter((l) => /^[A-Za-z0-9]/.test(l) && l.includes('=='));
  return `${[...new Set(lines)].sort().join('\n')}\n`;
}

/**
 * Who pulled each locked distribution in, from `uv pip compile --annotation-style line`: `-r FILE` for a requirement,
 * `-c FILE` for a constraint, else the normalised names of the distributions that depend on it.
 */
export function parseVia(compiled: string): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const line of compiled.split('\n')) {
    const m = /^([A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[^\]]*\])?\s*==\s*\S+\s+#\s*via\s+(.+)$/.exec(line.trim());
    if (!m) continue;
    const froms = (m[2] as string).split(',').map((v) => v.trim());
    out[normaliseName(m[1] as string)] = froms.filter(Boolean).map((v) => (v.startsWith('-') ? v : normaliseName(v)));
  }
  return out;
}

/**
 * The lock without the distributions the base interpreter provides (an overlay env installs only the rest), and
 * without what only those pull in (`via`): beside the base's torch, the index's torch would bring triton and a dozen
 * nvidia-* CUDA packages, gigabytes nothing imports. A distribution a requirement names (`-r`) always stays.
 */
export function withoutProvided(lock: string, provided: readonly string[], via: Record<string, string[]> = {}): string {
  if (provided.length === 0) return lock;
  const drop = new Set(provided.map(normaliseName));
  for (let changed = true; changed;) {
    changed = false;
    for (const [name, froms] of Object.entries(via)) {
      const pullers = froms.filter((f) => !f.startsWith('-c'));
      if (drop.has(name) || pullers.length === 0 || !pullers.every((f) => !f.startsWith('-') && drop.has(f))) continue;
      drop.add(name);
      changed = true;
    }
  }
  const kept = lock.split('\n').filter((l) => {
    const m = /^([A-Za-z0-9][A-Za-z0-9._-]*)/.exec(l.trim());
    return !m || !drop.has(normaliseName(m[1] as string));
  });
  return kept.join('\n');
}

export function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** What decides how the venv's `.pth` reads: the venv is shared by every job whose lock, Python and layout match. */
export function projectLayoutKey(project: ProjectInstall | null, mountPath: string): string {
  if (!project) return 'none';
  return JSON.stringify({ mount: mountPath, root: project.root, importRoots: project.importRoots, mode: project.mode });
}

/** The venv's folder name under `<cacheRoot>/envs/`: the lock, the interpreter's version and the project layout. */
export function envKey(lock: string, pythonVersion: string, layoutKey: string): string {
  return sha256(`${lock}\0${pythonVersion}\0${layoutKey}`);
}

/** The `.pth` lines that put the project's import roots (as mounted in the sandbox) on sys.path. */
export function projectPthLines(project: ProjectInstall, mountPath: string): string[] {
  const base = [mountPath, project.root].filter((p) => p !== '').join('/');
  const roots = project.importRoots.length > 0 ? project.importRoots : [''];
  return [...new Set(roots.map((r) => (r === '' || r === '.' ? base : `${base}/${r}`).replace(/\/+/g, '/').replace(/\/$/, '') || '/'))];
}

/** A wheel file name, read (`torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl`). */
export interface WheelName {
  name: string;
  version: string;
  python: string[];
  abi: string[];
  platform: string[];
}

export function parseWheelName(file: string): WheelName | null {
  const m = /^([^-]+)-([^-]+)(?:-\d[^-]*)?-([^-]+)-([^-]+)-([^-]+)\.whl$/.exec(file);
  if (!m) return null;
  const [, name, version, py, abi, plat] = m as unknown as string[];
  return {
    name: normaliseName(name as string),
    version: version as string,
    python: (py as string).split('.'),
    abi: (abi as string).split('.'),
    platform: (plat as string).split('.'),
  };
}

/** Whether a wheel installs on CPython `pyVersion` (`3.11`) on Linux x86_64/aarch64 (host `arch`). */
export function wheelFits(w: WheelName, pyVersion: string, arch: string): boolean {
  const [major, minor] = pyVersion.split('.');
  const cp = `cp${major}${minor}`;
  const pyOk = w.python.some(
    (t) =>
      t === cp ||
      t === `py${major}` ||
      t === `py${major}${minor}` ||
      (t.startsWith('cp3') && w.abi.includes('abi3') && Number(t.slice(3)) <= Number(minor)),
  );
  const abiOk = w.abi.some((a) => a === 'none' || a === 'abi3' || a === cp);
  const platOk = w.platform.some((p) => p === 'any' || ((p.startsWith('manylinux') || p.startsWith('linux')) && p.endsWith(arch)));
  return pyOk && abiOk && platOk;
}

/** A sdist file name → its version (`foo-1.2.tar.gz` → `1.2`), null when it is not one. */
export function sdistVersion(file: string, name: string): string | null {
  const m = /^(.+)-([^-]+)\.(?:tar\.gz|zip|tar\.bz2)$/.exec(file);
  if (!m || normaliseName(m[1] as string) !== name) return null;
  return parseVersion(m[2] as string) ? (m[2] as string) : null;
}

/** A local wheel with a local version label (`torch-2.13.0+cpu`) the resolver should take over the index's build. */
export interface LocalPin {
  name: string;
  version: string;
}

/**
 * Local-label wheels of the find-links folders that fit this interpreter and every requirement on that name (the
 * CPU torch): each becomes a constraint `name==version`, so a plain or transitive `torch` resolves to the file on
 * disk instead of a multi-GB CUDA build from the index.
 */
export function localPins(wheels: WheelName[], requirements: Requirement[], pyVersion: string, arch: string): LocalPin[] {
  const best = new Map<string, string>();
  for (const w of wheels) {
    if (!parseVersion(w.version)?.local || !wheelFits(w, pyVersion, arch)) continue;
    const reqs = requirements.filter((r) => r.name === w.name);
    if (!reqs.every((r) => satisfies(dropLocal(w.version), r.specifier.replace(/\+[a-z0-9.]+/gi, '')))) continue;
    const seen = best.get(w.name);
    if (!seen || satisfies(w.version, `>${seen}`)) best.set(w.name, w.version);
  }
  return [...best].map(([name, version]) => ({ name, version }));
}

/**
 * Requirements pinned to a local build this machine has no file for (`torch==2.8.0+cu129`, a CUDA build) lose the
 * label: the public release of that version is asked for, and the difference is recorded.
 */
export function dropUnavailableLocals(
  requirements: Requirement[],
  pins: LocalPin[],
): { requirements: Requirement[]; substitutions: Substitution[] } {
  const substitutions: Substitution[] = [];
  const out = requirements.map((r) => {
    const m = /^(===?)\s*([^,+\s]+)\+([a-z0-9.]+)$/i.exec(r.specifier.trim());
    if (!m) return r;
    const wanted = `${m[2]}+${m[3]}`;
    if (pins.some((p) => p.name === r.name && p.version === wanted)) return r;
    const why = /^(cu|rocm)/i.test(m[3] as string)
      ? `the ${m[3]} build needs a GPU stack this machine does not have; the public release of the same version is used`
      : `no ${wanted} build is available here; the public release of the same version is used`;
    substitutions.push({ name: r.name, wanted, got: m[2] as string, why });
    return { ...r, specifier: `==${m[2]}` };
  });
  return { requirements: out, substitutions };
}
