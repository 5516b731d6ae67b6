// An overlay env takes packages from the base interpreter (Debian's numpy 1.24 beside its torch). A package the lock
// adds may need more of them than its metadata says: scipy 1.15 declares numpy >= 1.23.5 and imports
// numpy.exceptions (numpy 1.25). Declared ranges cannot tell, an import can: right after a cold overlay build, the
// lock's own top-level modules are imported once in the sandbox; a base package that their errors name is then
// installed in the env at the lock's version, shadowing the base's, and the env is built again.
import { runInBuild, type UvContext } from '../sandboxed/uv-run.js';
import { normaliseName } from '../lock/uv-lock.js';

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
