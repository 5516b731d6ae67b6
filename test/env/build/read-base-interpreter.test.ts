import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readBaseInterpreter } from '../../../src/env/build/read-base-interpreter.js';
import { UvEnvBuilder } from '../../../src/env/uv-builder.js';
import { findBinary, probeSandbox } from '../../../src/exec/sandbox/sandbox.js';
import { indexSpec, makeDists, requirement, startLoopbackIndex, type LoopbackIndex } from '../../helpers/loopback-pypi.js';

// The base interpreter is a setting the builder honours (issue 39, item 8): REPGEN_PYTHON as a venv outside /usr
// builds in the sandbox, an overlay on it sees the venv's packages, and its envs are not those of another base.
// Real uv, bwrap and Python; the only index is a loopback one.

const SYSTEM = '/usr/bin/python3';

describe('the base interpreter of the env builder', () => {
  let root: string;
  let venv: string;
  let index: LoopbackIndex;
  let uv: string;
  const signal = new AbortController().signal;

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'repgen-base-'));
    chmodSync(root, 0o711); // the sandbox's uid must reach the cache and the venv below it
    const found = findBinary('uv');
    if (!found) throw new Error('uv not found: run scripts/ensure-system.sh');
    uv = found;
    // A venv outside /usr as the base, holding a package the system Python does not have (omega 1.0).
    venv = join(root, 'base-venv');
    execFileSync(uv, ['venv', '--quiet', '--offline', '--no-config', '--python', SYSTEM, venv]);
    const site = join(venv, 'lib', 'python3.11', 'site-packages');
    mkdirSync(join(site, 'omega'));
    writeFileSync(join(site, 'omega', '__init__.py'), "WHERE = 'base venv'\n");
    mkdirSync(join(site, 'omega-1.0.dist-info'));
    writeFileSync(join(site, 'omega-1.0.dist-info', 'METADATA'), 'Metadata-Version: 2.1\nName: omega\nVersion: 1.0\n');
    writeFileSync(join(site, 'omega-1.0.dist-info', 'top_level.txt'), 'omega\n');
    const dists = join(root, 'dists');
    mkdirSync(dists);
    // omega is on the index too (the lock names it); the overlay must take the base venv's.
    makeDists(dists, [
      { name: 'alpha', version: '1.0' },
      { name: 'omega', version: '1.0', init: "WHERE = 'index'\n" },
    ]);
    index = await startLoopbackIndex(dists);
  }, 60_000);

  afterAll(async () => {
    await index?.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('has an identity that tells a venv from the Python it was made from, and names the venv’s site-packages', async () => {
    const [system, base] = await Promise.all([readBaseInterpreter(SYSTEM), readBaseInterpreter(join(venv, 'bin', 'python'))]);
    expect(base.version).toBe(system.version);
    expect(base.identity).not.toBe(system.identity);
    expect(base.venvPrefix).toBe(venv);
    expect(base.venvSite).toEqual([join(venv, 'lib', 'python3.11', 'site-packages')]);
    expect(system.venvSite).toEqual([]);
  });

  it('builds from a venv base outside /usr, its overlay sees the venv’s packages, and its env is not the system base’s', async () => {
    const plan = await probeSandbox('bwrap', { workRoot: tmpdir() });
    const cacheRoot = join(root, 'cache');
    const spec = indexSpec(index, [requirement('alpha'), requirement('omega')], { baseProvides: ['omega'] });
    const fromVenv = new UvEnvBuilder({ cacheRoot, uv, basePython: join(venv, 'bin', 'python'), plan });
    const built = await fromVenv.build(spec, { checkout: null, signal });
    if (!built.ok) throw new Error(JSON.stringify(built.failure));
    expect(built.env.readOnlyPaths).toContain(venv);
    const where = execFileSync(built.env.python, ['-I', '-c', 'import alpha, omega; print(omega.WHERE)']).toString().trim();
    expect(where).toBe('base venv');
    // The same spec on the system base: another env (the cache key names the base), never the venv base's reused.
    const fromSystem = new UvEnvBuilder({ cacheRoot, uv, basePython: SYSTEM, plan });
    const other = await fromSystem.build(indexSpec(index, [requirement('alpha')], { baseProvides: ['omega'] }), { checkout: null, signal });
    if (!other.ok) throw new Error(JSON.stringify(other.failure));
    const again = await fromVenv.build(indexSpec(index, [requirement('alpha')], { baseProvides: ['omega'] }), { checkout: null, signal });
    if (!again.ok) throw new Error(JSON.stringify(again.failure));
    expect(dirname(dirname(other.env.python))).not.toBe(dirname(dirname(again.env.python)));
  });
});
