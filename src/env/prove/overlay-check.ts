// An overlay env takes packages from the base interpreter (Debian's numpy 1.24 beside its torch). Right after a cold
// overlay build two checks say which of them the env must hold itself instead, at the lock's version, shadowing the
// base's (and the env is built again): first what the lock's packages declare (TensorFlow 2.21's `numpy>=1.26.0`:
// the base's numpy is outside it, whatever an import shows), then an import, for a package that needs more than its
// metadata says: scipy 1.15 declares numpy >= 1.23.5 and imports numpy.exceptions (numpy 1.25); the lock's own
// top-level modules are imported once in the sandbox, and a base package that their errors name is held by the env.
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { satisfies } from '../compare-versions.js';
import { markerHolds, parseRequirement } from '../read/requirement-line.js';
import { runInBuild, type UvContext } from '../sandboxed/uv-run.js';
import { normaliseName } from '../lock/uv-lock.js';
import type { EnvSpec } from '../types.js';

/** One module of the lock that failed to import, and the distributions its error names (whose module is missing a part). */
export interface OverlayImportFailure {
  module: string;
  error: string;
  dists: string[];
  /** The installed version of each of `dists` (the base's, when the base provides it). */
  versions?: Record<string, string>;
}

/**
 * Python run by the env's interpreter (isolated, no checkout on sys.path): imports each top-level module of the
 * given distributions and prints the failures as JSON. The distributions an error names come from
 * `packages_distributions()`: `No module named 'numpy.exceptions'`, `cannot import name … from 'numpy'`,
 * `module 'numpy' has no attribute …` all name numpy.
 */
const CHECK = String.raw`
import importlib, importlib.metadata as m, json, re, sys
pd = m.packages_distributions()
out = []
for d in json.loads(sys.argv[1]):
    try:
        dist = m.distribution(d)
    except Exception:
        continue
    tops = (dist.read_text("top_level.txt") or "").split()
    if not tops:
        files = dist.files or []
        tops = sorted({f.parts[0] for f in files if len(f.parts) > 1 and f.parts[0].isidentifier()})
    for t in [t for t in tops if not t.startswith("_")][:3]:
        try:
            importlib.import_module(t)
        except BaseException as e:
            msg = "%s: %s" % (type(e).__name__, e)
            named = re.findall(r"No module named '([\w.]+)'", msg) + re.findall(r"from '([\w.]+)'", msg)
            named += re.findall(r"module '([\w.]+)' has no attribute", msg)
            dists = sorted({x for n in named for x in pd.get(n.split(".")[0], [])})
            versions = {x: m.version(x) for x in dists}
            out.append({"module": t, "error": msg[:300], "dists": dists, "versions": versions})
print(json.dumps(out))
`;

/** Imports the lock's direct requirements in the new venv; null when the check itself could not run (it then decides nothing). */
export async function overlayImportFailures(
  ctx: UvContext,
  buildDir: string,
  venvPython: string,
  dists: readonly string[],
): Promise<OverlayImportFailure[] | null> {
  if (dists.length === 0) return [];
  const out = await runInBuild(ctx, buildDir, [venvPython, '-I', '-c', CHECK, JSON.stringify(dists)], {}, true);
  if (out.code !== 0) return null;
  try {
    const parsed = JSON.parse(out.stdout.trim().split('\n').pop() ?? '') as OverlayImportFailure[];
    return Array.isArray(parsed) ? parsed : null;
  } catch {
    return null;
  }
}

/** The base-provided distributions the failures blame (never one the lock does not hold: it could not be installed instead). Pure. */
export function shadowedBase(
  failures: readonly OverlayImportFailure[],
  provided: readonly string[],
  locked: Record<string, string>,
): string[] {
  const base = new Set(provided.map(normaliseName));
  const blamed = failures.flatMap((f) => f.dists.map(normaliseName)).filter((d) => base.has(d) && locked[d] !== undefined);
  return [...new Set(blamed)].sort();
}

/** A base-provided distribution whose version is outside what a package of the lock declares it needs. */
export interface BaseOutsideLock {
  /** PEP 503 name (`numpy`). */
  name: string;
  /** The base interpreter's version (`1.24.2`). */
  base: string;
  /** What the lock's package requires (`>=1.26.0`). */
  required: string;
  /** The package that requires it, with its version (`tensorflow 2.21.0`). */
  by: string;
}

/**
 * The base-provided distributions a lock's own packages declare another version of (their `Requires-Dist`, markers read
 * for this Python, no extras): TensorFlow 2.21 declares `numpy>=1.26.0`, and beside Debian's numpy 1.24 it fails inside
 * `__import__` with a SystemError that names no package, which the import check cannot blame. `metadata` are the
 * METADATA texts of the env's own distributions. Pure.
 */
export function baseOutsideLock(
  metadata: readonly string[],
  provided: readonly string[],
  base: Readonly<Record<string, string>>,
  python: string,
): BaseOutsideLock[] {
  const from = new Set(provided.map(normaliseName));
  const out = new Map<string, BaseOutsideLock>();
  for (const text of metadata) {
    const head = text.split(/\r?\n\r?\n/, 1)[0] ?? '';
    const field = (key: string): string[] =>
      [...head.matchAll(new RegExp(`^${key}:[ \\t]*(.+)$`, 'gim'))].map((m) => (m[1] ?? '').trim()).filter(Boolean);
    const by = `${field('Name')[0] ?? '?'} ${field('Version')[0] ?? ''}`.trim();
    for (const line of field('Requires-Dist')) {
      const r = parseRequirement(line);
      if (!r || !r.specifier || !from.has(r.name) || !markerHolds(r.marker, { python, extras: [] })) continue;
      const have = base[r.name];
      if (have === undefined || satisfies(have, r.specifier) || out.has(r.name)) continue;
      out.set(r.name, { name: r.name, base: have, required: r.specifier, by });
    }
  }
  return [...out.values()].sort((a, b) => a.name.localeCompare(b.name));
}

/** The METADATA texts of the distributions a venv holds itself (its own site-packages; text only, nothing run). */
export async function ownMetadata(sitePackages: string): Promise<string[]> {
  const entries = await readdir(sitePackages).catch(() => [] as string[]);
  const texts = await Promise.all(
    entries
      .filter((e) => e.endsWith('.dist-info'))
      .map((e) =>
        readFile(join(sitePackages, e, 'METADATA'), 'utf8').then(
          (t) => t.slice(0, 256 * 1024),
          () => '',
        ),
      ),
  );
  return texts.filter(Boolean);
}

/**
 * Packages of the base compiled against its numpy or its torch abort or fail beside another: a lock that needs its own
 * torch, or a numpy of another major than the base's (NumPy 2's C-API beside extensions built for 1.x), takes nothing
 * from the base, and is a venv of its own. Pure.
 */
export function ownVenvNeeded(
  keep: readonly string[],
  locked: Readonly<Record<string, string>>,
  base: Readonly<Record<string, string>>,
): boolean {
  const kept = new Set(keep.map(normaliseName));
  if (kept.has('torch')) return true;
  const major = (v: string | undefined): string | undefined => v?.split('.')[0];
  return kept.has('numpy') && locked['numpy'] !== undefined && major(locked['numpy']) !== major(base['numpy']);
}

/**
 * The resolution preference of an overlay on a base with numpy, as a constraint line: below the base's next major
 * (`numpy<2`: its packages are built for NumPy 1), unless a requirement names numpy (its word stands). Null when the env
 * takes no numpy from the base. Pure.
 */
export function overlayNumpyCap(
  spec: Pick<EnvSpec, 'baseProvides' | 'requirements'>,
  base: Readonly<Record<string, string>>,
): string | null {
  const major = Number(/^(\d+)\./.exec(base['numpy'] ?? '')?.[1]);
  if (!spec.baseProvides?.map(normaliseName).includes('numpy') || Number.isNaN(major)) return null;
  if (spec.requirements.some((r) => normaliseName(r.name) === 'numpy')) return null;
  return `numpy<${major + 1}`;
}
