import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildProjectCheckout, treeFingerprint } from '../../../src/env/build/project-build.js';
import type { BuiltEnv, ProjectInstall } from '../../../src/env/types.js';
import { UvEnvBuilder } from '../../../src/env/uv-builder.js';
import { findBinary, probeSandbox, type SandboxPlan } from '../../../src/exec/sandbox/sandbox.js';
import { createLocalExecutor } from '../../../src/exec/local/executor.js';
import { removeTree } from '../../../src/env/build/seal-env.js';
import { projectOnlySpec } from '../../helpers/c-extension.js';
import { makeTempDir } from '../../helpers/temp-dir.js';

// A project whose setup.py compiles a C extension with setuptools (the base interpreter's, seen through the
// overlay venv), built by RepGen in a copy of the checkout, in the sandbox, with no network. The setup.py also
// snoops: what it sees of RepGen's environment, whether it reaches another host, whether it writes outside.

const SETUP_PY = `
import os, socket
from setuptools import setup, Extension
seen = {"token": os.environ.get("GITHUB_TOKEN"), "force_cuda": os.environ.get("FORCE_CUDA"), "keys": sorted(os.environ)}
try:
    socket.create_connection(("127.0.0.1", OTHER_PORT), timeout=3).close()
    seen["net"] = "reached"
except OSError as e:
    seen["net"] = "blocked: " + e.__class__.__name__
for key, path in (("venv", VENV_FILE), ("host", HOST_FILE)):
    try:
        with open(path, "w") as f:
            f.write("pwned")
        seen[key] = "written"
    except OSError as e:
        seen[key] = "blocked: " + e.__class__.__name__
with open("pkg/seen.py", "w") as f:
    f.write("SEEN = %r\\n" % (seen,))
setup(name="pkg", version="0.1", packages=["pkg"], ext_modules=[Extension("pkg._C", ["csrc/ext.c"])])
`;
const EXT_C = `
#include <Python.h>
static struct PyModuleDef m = {PyModuleDef_HEAD_INIT, "_C", NULL, -1, NULL};
PyMODINIT_FUNC PyInit__C(void) { PyObject *mod = PyModule_Create(&m); PyModule_AddIntConstant(mod, "answer", 42); return mod; }
`;

describe('buildProjectCheckout (a copy of the checkout with its C extension compiled)', () => {
  let root: string;
  let plan: SandboxPlan;
  let env: BuiltEnv;
  let other: Server;
  let otherHits = 0;
  let otherPort = 0;
  const signal = new AbortController().signal;
  const project: ProjectInstall = { root: '', importRoots: [''], mode: 'build', distribution: 'pkg', extensions: ['csrc/ext.c'] };
  const spec = projectOnlySpec(project, { baseProvides: ['setuptools'] });
  const opts = () => ({ cacheRoot: join(root, 'cache'), plan });

  function checkout(name: string, c = EXT_C): string {
    const dir = join(root, name);
    mkdirSync(join(dir, 'pkg'), { recursive: true });
    mkdirSync(join(dir, 'csrc'));
    const setup = SETUP_PY.replace('OTHER_PORT', String(otherPort))
      .replace('VENV_FILE', JSON.stringify(join(env.python, '..', 'pwned')))
      .replace('HOST_FILE', JSON.stringify(join(root, `outside-${name}.txt`)));
    writeFileSync(join(dir, 'setup.py'), setup);
    writeFileSync(join(dir, 'csrc', 'ext.c'), c);
    writeFileSync(join(dir, 'pkg', '__init__.py'), '');
    return dir;
  }

  beforeAll(async () => {
    root = makeTempDir('repgen-projbuild-');
    chmodSync(root, 0o711);
    other = createServer((_req, res) => {
      otherHits++;
      res.end('secret accepted');
    });
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    otherPort = (other.address() as AddressInfo).port;
    plan = await probeSandbox('bwrap', { workRoot: tmpdir() });
    const uv = findBinary('uv');
    if (!uv) throw new Error('uv not found: run scripts/ensure-system.sh');
    const builder = new UvEnvBuilder({ cacheRoot: join(root, 'cache'), uv, basePython: '/usr/bin/python3', plan });
    const built = await builder.build(spec, { checkout: null, signal });
    if (!built.ok) throw new Error(JSON.stringify(built.failure));
    env = built.env;
  }, 60_000);

  afterAll(async () => {
    await new Promise<void>((resolve) => (other ? other.close(() => resolve()) : resolve()));
    await removeTree(root); // sealed envs' folders are read-only
  });

  it('compiles the extension in a copy under the env cache; the checkout itself is never written', async () => {
    const dir = checkout('ok');
    const before = await treeFingerprint(dir);
    process.env.GITHUB_TOKEN = 'ghs_fake_secret_for_the_test';
    process.env.FORCE_CUDA = '1';
    let r: Awaited<ReturnType<typeof buildProjectCheckout>>;
    try {
      r = await buildProjectCheckout(opts(), spec, env, dir, signal);
    } finally {
      delete process.env.GITHUB_TOKEN;
      delete process.env.FORCE_CUDA;
    }
    if (!r.ok) throw new Error(JSON.stringify(r.failure));
    expect(r).toMatchObject({ built: true, cached: false });
    expect(r.checkout.startsWith(join(root, 'cache', 'builds'))).toBe(true);
    expect(readdirSync(join(r.checkout, 'pkg')).some((f) => f.startsWith('_C.') && f.endsWith('.so'))).toBe(true);
    const answer = execFileSync(env.python, ['-c', 'import pkg._C as c; print(c.answer)'], { cwd: r.checkout, encoding: 'utf8' });
    expect(answer.trim()).toBe('42');
    expect(await treeFingerprint(dir)).toBe(before);
    expect(readdirSync(join(dir, 'pkg'))).toEqual(['__init__.py']);
    // What the third-party setup.py could do: no secret, no CUDA forced, no other host, no file outside the copy.
    const seen = readFileSync(join(r.checkout, 'pkg', 'seen.py'), 'utf8');
    expect(seen).toContain("'token': None");
    expect(seen).not.toContain('ghs_fake');
    expect(seen).toContain("'force_cuda': None");
    expect(seen).toMatch(/'net': 'blocked/);
    // The env is bound read-only; any other host path the build names is not there at all (what it writes stays in
    // the sandbox's own tmpfs and is gone with it).
    expect(seen).toMatch(/'venv': 'blocked: OSError/);
    expect(existsSync(join(env.python, '..', 'pwned'))).toBe(false);
    expect(existsSync(join(root, 'outside-ok.txt'))).toBe(false);
    expect(otherHits).toBe(0);
  });

  it('reuses the built copy for the same checkout and env', async () => {
    const dir = checkout('again');
    const first = await buildProjectCheckout(opts(), spec, env, dir, signal);
    const second = await buildProjectCheckout(opts(), spec, env, dir, signal);
    expect(first).toMatchObject({ ok: true, cached: false });
    expect(second).toMatchObject({ ok: true, cached: true, checkout: first.ok ? first.checkout : '' });
  });

  it('a run in the sandbox imports the built extension from the built copy, as root and as any other uid', async () => {
    const r = await buildProjectCheckout(opts(), spec, env, checkout('imported'), signal);
    if (!r.ok) throw new Error(JSON.stringify(r.failure));
    // As root the run's uid is the sandbox's (65534): <cache>/builds must let it reach the copy.
    const ex = createLocalExecutor({ workRoot: root, warmPool: 'off' });
    const run = await ex.run({
      files: [{ path: 'main.py', content: 'import pkg._C as c\nprint(c.answer)\n' }],
      entry: 'main.py',
      interpreter: env.python,
      workspace: { hostPath: r.checkout },
    });
    expect(run.infra ?? null).toBeNull();
    expect(run.stderr).toBe('');
    expect(run.stdout).toBe('42\n');
  });

  it('a C file that does not compile is an extensions failure with the compiler’s log, and nothing is published', async () => {
    const dir = checkout('bad', 'this is not C;\n');
    const r = await buildProjectCheckout(opts(), spec, env, dir, signal);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.failure).toMatchObject({ step: 'extensions', package: 'pkg', configKey: 'environment.build' });
    expect(r.failure.logTail).toMatch(/error/i);
    expect(
      readdirSync(join(root, 'cache', 'builds')).every((k) => existsSync(join(root, 'cache', 'builds', k, '.repgen-build.json'))),
    ).toBe(true);
  });

  it('stops a compile past its ceiling and says so', async () => {
    const dir = checkout('slow');
    writeFileSync(join(dir, 'setup.py'), 'import time\ntime.sleep(3600)\n');
    const r = await buildProjectCheckout({ ...opts(), timeoutMs: 300 }, spec, env, dir, signal);
    expect(r).toMatchObject({ ok: false, failure: { step: 'timeout', configKey: 'environment.build' } });
  });

  it('hands back the checkout itself when the project compiles nothing', async () => {
    const dir = checkout('plain');
    const r = await buildProjectCheckout(opts(), { ...spec, project: { ...project, mode: 'pth', extensions: [] } }, env, dir, signal);
    expect(r).toEqual({ ok: true, checkout: dir, built: false, cached: false, buildMs: 0 });
  });
});
