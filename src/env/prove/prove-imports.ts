// An env is accepted only once the project and the modules the report's code imports import in it (issue 39, item 3),
// under the report's own setup lines (its environment variables, src/env/prove/report-setup-env.ts). The proof runs the env's
// interpreter in the build sandbox with no network, the checkout read-only on sys.path; nothing of the report's code
// runs, only `import` of the names.
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { newBuildDir, openEnvCache } from '../build/env-cache.js';
import type { BuiltEnv, ImportProof, ImportProofRequest, ProofFailure } from '../types.js';
import type { SandboxPlan } from '../../exec/sandbox/sandbox.js';
import type { BuildStepRunner } from '../sandboxed/sandboxed-command.js';
import { sha256 } from '../lock/uv-lock.js';
import { runInBuild, type UvContext } from '../sandboxed/uv-run.js';

const PROOF = String.raw`
import contextlib, importlib, importlib.metadata as m, io, json, re, sys
roots, mods = json.loads(sys.argv[1]), json.loads(sys.argv[2])
stmts = json.loads(sys.argv[3]) if len(sys.argv) > 3 else []
sys.path[:0] = roots
pd = m.packages_distributions()
out = []
def failed(label, top, e, buf):
    msg = "%s: %s" % (type(e).__name__, e)
    c = e.__cause__ or (None if e.__suppress_context__ else e.__context__)
    if c is not None:
        msg += "\n(from %s: %s)" % (type(c).__name__, c)
    msg = (msg[:1500] + "\n" + buf.getvalue()[-1500:]).strip()
    named = re.findall(r"No module named '([\w.]+)'", msg) + re.findall(r"from '([\w.]+)'", msg)
    named += re.findall(r"module '([\w.]+)' has no attribute", msg) + [top]
    if re.search(r"NumPy|numpy", msg):
        named.append("numpy")
    dists = sorted({x for n in named for x in pd.get(n.split(".")[0], [])})
    versions = {}
    for d in dists:
        try:
            versions[d] = m.version(d)
        except Exception:
            pass
    out.append({"module": label, "error": msg, "versions": versions})
for t in mods:
    buf = io.StringIO()
    try:
        with contextlib.redirect_stderr(buf):
            importlib.import_module(t)
    except BaseException as e:
        failed(t, t, e, buf)
# The report's own import lines, as data: "from a.b import c" is a.b imported, then c read from it or imported as a.b.c.
for st in stmts:
    mod_name, names = st["module"], st["names"]
    label = "from %s import %s" % (mod_name, ", ".join(names)) if names else "import %s" % mod_name
    buf = io.StringIO()
    try:
        with contextlib.redirect_stderr(buf):
            mod = importlib.import_module(mod_name)
            for n in names:
                if hasattr(mod, n):
                    continue
                try:
                    importlib.import_module(mod_name + "." + n)
                except ModuleNotFoundError:
                    raise ImportError("cannot import name '%s' from '%s'" % (n, mod_name)) from None
    except BaseException as e:
        failed(label, mod_name, e, buf)
print("REPGEN_PROOF " + json.dumps(out))
`;

/** The builder's settings a proof runs under (src/env/uv-builder.ts UvBuilderOptions), and its binds. */
export interface ProofSandbox {
  cacheRoot: string;
  uv: string;
  basePython: string;
  plan: SandboxPlan;
  readOnlyPaths: string[];
  timeoutMs?: number;
  memoryBytes?: number;
  runner?: BuildStepRunner;
}

/**
 * The proof of a built env: the modules imported by its interpreter in the build sandbox, offline, with the checkout's
 * import roots read-only on sys.path and the report's setup variables set. `readOnlyPaths`: the builder's binds (uv,
 * the base interpreter's prefix).
 */
export async function proveImportsIn(
  opts: ProofSandbox,
  env: BuiltEnv,
  req: ImportProofRequest,
  signal: AbortSignal,
): Promise<ImportProof> {
  const owner = opts.plan.runAs;
  const paths = await openEnvCache(opts.cacheRoot, owner);
  // A proof that passed is kept: importing torch takes seconds, and a reused env must stay fast. Only where the answer
  // cannot change: no checkout on sys.path, or one the caller names by its commit (`req.checkoutKey`). So is one that
  // failed only as an import fails the same way every time (keptFailures): a job whose ladder rejected candidates
  // before the accepted one reuses their answers instead of importing torch again for each.
  // The sandbox's binds are part of the answer too: an import that failed for want of one (a base venv outside /usr) is
  // asked again once the operator binds it.
  const key = req.importRoots.length === 0 || req.checkoutKey ? join(paths.root, 'proofs', proofKey(env, req, opts.readOnlyPaths)) : null;
  const memo = key ? `${key}.ok` : null;
  if (memo && (await readFile(memo, 'utf8').catch(() => null)) !== null) return { failures: [] };
  const failed = key ? readKeptFailures(await readFile(`${key}.fail`, 'utf8').catch(() => null)) : null;
  if (failed) return { failures: failed };
  const buildDir = await newBuildDir(paths, owner);
  try {
    const ctx: UvContext = {
      plan: opts.plan,
      uv: opts.uv,
      basePython: opts.basePython,
      paths,
      readOnlyPaths: [...new Set([...opts.readOnlyPaths, ...env.readOnlyPaths, ...req.importRoots])],
      proxySocket: () => Promise.resolve(null),
      // Importing TensorFlow or torch takes seconds; a proof that hangs is no proof.
      timeoutMs: Math.min(opts.timeoutMs ?? 20 * 60_000, 5 * 60_000),
      ...(opts.memoryBytes ? { memoryBytes: opts.memoryBytes } : {}),
      ...(opts.runner ? { runner: opts.runner } : {}),
      signal,
    };
    const proof = await proveImports(ctx, buildDir, env.python, req);
    if (memo && proof && proof.failures.length === 0) {
      await mkdir(join(paths.root, 'proofs'), { recursive: true, mode: 0o700 });
      await writeFile(memo, `${new Date().toISOString()}\n`);
    } else if (key && proof && keptFailures(proof.failures)) {
      await mkdir(join(paths.root, 'proofs'), { recursive: true, mode: 0o700 });
      await writeFile(`${key}.fail`, `${JSON.stringify(proof.failures)}\n`, { mode: 0o600 });
    }
    return proof;
  } finally {
    await rm(buildDir, { recursive: true, force: true });
  }
}

/** Imports `req.modules` one by one with the env's interpreter in the build sandbox. */
export async function proveImports(ctx: UvContext, buildDir: string, python: string, req: ImportProofRequest): Promise<ImportProof> {
  if (req.modules.length === 0 && !req.statements?.length) return { failures: [] };
  const argv = [
    python,
    '-I',
    '-c',
    PROOF,
    JSON.stringify(req.importRoots),
    JSON.stringify(req.modules),
    JSON.stringify(req.statements ?? []),
  ];
  const out = await runInBuild(ctx, buildDir, argv, req.setupEnv, true);
  const line = out.stdout.split('\n').find((l) => l.startsWith('REPGEN_PROOF '));
  if (!line) return null;
  try {
    const parsed = JSON.parse(line.slice('REPGEN_PROOF '.length)) as ProofFailure[];
    return Array.isArray(parsed) ? { failures: parsed } : null;
  } catch {
    return null;
  }
}

/** What a proof's answer depends on: the env, the modules and import lines, the setup variables, the checkout's roots and commit, the binds. */
function proofKey(env: BuiltEnv, req: ImportProofRequest, binds: readonly string[]): string {
  const { modules, setupEnv, importRoots, checkoutKey, statements } = req;
  // The commit names what the roots hold; where the checkout lies on this host does not change what imports.
  const roots = checkoutKey ? importRoots.length : importRoots;
  return sha256(
    JSON.stringify({
      python: env.python,
      lock: env.lockHash,
      modules,
      ...(statements?.length ? { statements } : {}),
      setupEnv: Object.entries(setupEnv).sort(),
      roots,
      checkoutKey,
      binds: [...new Set([...binds, ...env.readOnlyPaths])].sort(),
    }),
  );
}

/**
 * Failures that repeat on every import of the same env and checkout: the module, or a name in it, is not there
 * (ImportError, ModuleNotFoundError, AttributeError) or does not compile (SyntaxError). A timeout, memory or any other
 * error may not repeat: such a proof is run again next time.
 */
const REPEATS = /^(?:ImportError|ModuleNotFoundError|AttributeError|SyntaxError|IndentationError): /;

export function keptFailures(failures: readonly ProofFailure[]): boolean {
  return failures.length > 0 && failures.every((f) => REPEATS.test(f.error));
}

const KeptFailures = z
  .array(z.object({ module: z.string().max(200), error: z.string().max(4000), versions: z.record(z.string(), z.string()) }))
  .min(1)
  .max(200);

/** A kept failed answer, or null when there is none or it does not read as one (it is then run again). */
function readKeptFailures(text: string | null): ProofFailure[] | null {
  if (text === null) return null;
  try {
    const parsed = KeptFailures.safeParse(JSON.parse(text));
    return parsed.success && keptFailures(parsed.data) ? parsed.data : null;
  } catch {
    return null;
  }
}
