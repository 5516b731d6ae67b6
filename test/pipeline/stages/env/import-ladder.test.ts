import { chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EnvSpec } from '../../../../src/env/types.js';
import { UvEnvBuilder } from '../../../../src/env/uv-builder.js';
import { runSandboxed } from '../../../../src/env/sandboxed/sandboxed-command.js';
import { findBinary, probeSandbox } from '../../../../src/exec/sandbox/sandbox.js';
import { prepareEnv, type EnvPorts, type EnvProofInput } from '../../../../src/pipeline/stages/env/index.js';
import { indexSpec, makeDists, requirement, startLoopbackIndex, type LoopbackIndex } from '../../../helpers/loopback-pypi.js';

// The env stage's import ladder (issue 39, item 3) on real uv, bwrap and Python, with a loopback index serving
// distributions built here: a candidate that fails its import proof is classified and the next one built.

const issue = { title: 't', body: 'b' } as Parameters<typeof prepareEnv>[0]['issue'];
const project = { root: '', importRoots: [''], mode: 'pth' as const, distribution: 'proj', extensions: [] };
const fakeRelease = (version: string, uploaded: string) => ({ version, uploaded, wheels: [], yanked: false });

describe('prepareEnv: proof by import, a bounded ladder (loopback index)', () => {
  let root: string;
  let checkout: string;
  let oldCheckout: string;
  let index: LoopbackIndex;
  let builder: UvEnvBuilder;
  let builderOpts: ConstructorParameters<typeof UvEnvBuilder>[0];
  const signal = new AbortController().signal;

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'repgen-ladder-'));
    chmodSync(root, 0o711);
    const dists = join(root, 'dists');
    mkdirSync(dists);
    makeDists(dists, [
      // A framework whose 2.0 has the attribute the project uses (torch.xpu) and whose 1.0 does not.
      { name: 'fw', version: '1.0' },
      { name: 'fw', version: '2.0', init: "__version__ = '2.0'\nxpu = object()\n" },
      // numpy 2 removed `np.float`, which old code uses; 1.20 has it.
      { name: 'numpy', version: '1.20.0', init: "__version__ = '1.20.0'\nfloat = float\n" },
      { name: 'numpy', version: '2.0.0', init: "__version__ = '2.0.0'\n" },
      { name: 'oldcode', version: '1.0', requires: ['numpy'], init: 'import numpy\nnumpy.float\n' },
      // A library whose later release removed a name the project's code of its time imports (huggingface-hub 0.26
      // removed `cached_download`, which diffusers of 2024 imports).
      { name: 'hub', version: '1.0', init: "__version__ = '1.0'\ncached_download = object()\n" },
      { name: 'hub', version: '2.0', init: "__version__ = '2.0'\n" },
      // Keras 3's way: the backend it imports is the one the environment names, else one that is not installed.
      {
        name: 'backended',
        version: '1.0',
        init: 'import os\nif os.environ.get("BACKENDED_BACKEND") != "fw":\n    import tensorflow\nimport fw\n',
        requires: ['fw'],
      },
      // setuptools' way: 82 dropped pkg_resources, which code of its era imports (torchmetrics 0.x).
      { name: 'setuptools', version: '84.2.1' },
      { name: 'setuptools', version: '81.0.0', files: { 'pkg_resources/__init__.py': 'def require(*a):\n    return []\n' } },
      { name: 'usespkg', version: '1.0', requires: ['setuptools'], init: 'import pkg_resources\n' },
      // Keras 3's way: its 3.0 dropped the `layers.core` module Keras 2 code imports, though `import kerasx` works on both.
      {
        name: 'kerasx',
        version: '2.0',
        files: { 'kerasx/layers/__init__.py': 'from .core import Dense\n', 'kerasx/layers/core.py': 'Dense = object\n' },
      },
      { name: 'kerasx', version: '3.0', files: { 'kerasx/layers/__init__.py': 'Dense = object\n' } },
      // Keras's own way: 2.13 moved its code under keras/src, so `keras.layers.core` is on 2.12 and on no later release.
      {
        name: 'keras',
        version: '2.12.0',
        files: { 'keras/layers/__init__.py': 'from .core import Dense\n', 'keras/layers/core/__init__.py': 'Dense = object\n' },
      },
      { name: 'keras', version: '2.15.0', files: { 'keras/layers/__init__.py': 'Dense = object\n', 'keras/src/__init__.py': '' } },
      { name: 'keras', version: '3.15.1', files: { 'keras/layers/__init__.py': 'Dense = object\n', 'keras/src/__init__.py': '' } },
    ]);
    index = await startLoopbackIndex(dists);
    checkout = join(root, 'checkout');
    mkdirSync(join(checkout, 'proj'), { recursive: true });
    writeFileSync(join(checkout, 'proj', '__init__.py'), 'import fw\nfw.xpu\n');
    for (const d of [checkout, join(checkout, 'proj')]) chmodSync(d, 0o755);
    oldCheckout = join(root, 'old-checkout');
    mkdirSync(join(oldCheckout, 'oldproj'), { recursive: true });
    writeFileSync(join(oldCheckout, 'oldproj', '__init__.py'), 'from hub import cached_download\n');
    for (const d of [oldCheckout, join(oldCheckout, 'oldproj')]) chmodSync(d, 0o755);
    const uv = findBinary('uv');
    if (!uv) throw new Error('uv not found: run scripts/ensure-system.sh');
    const plan = await probeSandbox('bwrap', { workRoot: tmpdir() });
    builderOpts = { cacheRoot: join(root, 'cache'), uv, basePython: '/usr/bin/python3', plan };
    builder = new UvEnvBuilder(builderOpts);
  }, 60_000);

  afterAll(async () => {
    await index?.close();
    rmSync(root, { recursive: true, force: true });
  });

  const ports = (spec: EnvSpec, proof: Partial<EnvProofInput>, maxCandidates?: number): EnvPorts => ({
    builder,
    specFor: () => Promise.resolve(spec),
    proofFor: () => Promise.resolve({ projectPackages: [], reportModules: [], setupEnv: {}, distributionOf: () => null, ...proof }),
    ...(maxCandidates ? { maxCandidates } : {}),
  });

  it('builds the next candidate with a newer framework when the project lacks an attribute of the first (torch.xpu)', async () => {
    const spec = indexSpec(index, [requirement('fw', '==1.0')], { project });
    const stage = await prepareEnv(
      { issue, repoDir: checkout, checkout },
      ports(spec, { projectPackages: ['proj'] }),
      () => undefined,
      signal,
    );
    if (stage.kind !== 'built') throw new Error(JSON.stringify(stage));
    expect(stage.env.pins).toEqual({ fw: '2.0' });
    expect(stage.candidates).toEqual([
      expect.objectContaining({ outcome: 'rejected', change: '', why: expect.stringContaining('fw 1.0 has no fw.xpu') }),
      expect.objectContaining({ outcome: 'accepted', change: 'fw >1.0', why: 'imports proj' }),
    ]);
    // At most N builds: with one, the first env is used as it is, and the evidence says it was rejected.
    const one = await prepareEnv(
      { issue, repoDir: checkout, checkout },
      ports(spec, { projectPackages: ['proj'] }, 1),
      () => undefined,
      signal,
    );
    if (one.kind !== 'built') throw new Error(JSON.stringify(one));
    expect(one.env.pins).toEqual({ fw: '1.0' });
    expect(one.candidates?.map((c) => c.outcome)).toEqual(['rejected']);
  });

  it('moves a library down to the commit’s series when a release newer than the commit lacks a name the project imports', async () => {
    const oldProject = { ...project, distribution: 'oldproj' };
    const spec = indexSpec(index, [requirement('hub')], { project: oldProject });
    const dates = { hub: [fakeRelease('1.0', '2023-06-01T00:00:00Z'), fakeRelease('2.0', '2025-06-01T00:00:00Z')] };
    const era = { commitDate: '2024-01-02T11:16:21+05:30', releases: (name: string) => Promise.resolve(dates[name as 'hub'] ?? null) };
    const stage = await prepareEnv(
      { issue, repoDir: oldCheckout, checkout: oldCheckout },
      ports(spec, { projectPackages: ['oldproj'], era }),
      () => undefined,
      signal,
    );
    if (stage.kind !== 'built') throw new Error(JSON.stringify(stage));
    expect(stage.env.pins).toEqual({ hub: '1.0' });
    expect(stage.candidates).toEqual([
      expect.objectContaining({ outcome: 'rejected', change: '', why: expect.stringContaining('a later release removed it') }),
      expect.objectContaining({ outcome: 'accepted', change: 'hub <1.1', why: 'imports oldproj' }),
    ]);
    // Without the commit's date, an unbounded hub that lacks the name reads as of a newer major than the code: below it.
    const blind = await prepareEnv(
      { issue, repoDir: oldCheckout, checkout: oldCheckout },
      ports(spec, { projectPackages: ['oldproj'] }),
      () => undefined,
      signal,
    );
    expect(blind.kind === 'built' && blind.candidates?.map((c) => [c.outcome, c.change])).toEqual([
      ['rejected', ''],
      ['accepted', 'hub <2'],
    ]);
  });

  it("bounds a move up by the ref's commit date through uv, and drops the bound when no release of the era resolves", async () => {
    // The loopback index gives no upload dates: with `--exclude-newer-package fw=…` uv sees no fw of the era at all,
    // as for code of the ref that calls an API no release of its day has. The candidate is then built without the bound.
    const spec = { ...indexSpec(index, [requirement('fw', '==1.0')], { project }), eraDate: '2025-03-19T10:57:58+01:00' };
    const stage = await prepareEnv(
      { issue, repoDir: checkout, checkout },
      ports(spec, { projectPackages: ['proj'] }),
      () => undefined,
      signal,
    );
    if (stage.kind !== 'built') throw new Error(JSON.stringify(stage));
    expect(stage.env.pins).toEqual({ fw: '2.0' });
    expect(stage.spec.excludeNewerPackages).toBeUndefined();
    expect(stage.candidates?.map((c) => [c.outcome, c.change])).toEqual([
      ['rejected', ''],
      ['accepted', 'fw >1.0 (no release of the era builds)'],
    ]);
  });

  it('builds the next candidate below the numpy that removed an API the report’s import uses (np.float, gone since 1.24)', async () => {
    const spec = indexSpec(index, [requirement('oldcode')]);
    const stage = await prepareEnv(
      { issue, repoDir: null, checkout: null },
      ports(spec, { reportModules: ['oldcode'] }),
      () => undefined,
      signal,
    );
    if (stage.kind !== 'built') throw new Error(JSON.stringify(stage));
    expect(stage.env.pins).toEqual({ oldcode: '1.0', numpy: '1.20.0' });
    expect(stage.candidates).toEqual([
      expect.objectContaining({
        outcome: 'rejected',
        key: { numpy: '2.0.0' },
        why: expect.stringContaining('numpy.float is gone from numpy 2.0.0'),
      }),
      expect.objectContaining({ outcome: 'accepted', change: 'numpy <1.24', key: { numpy: '1.20.0' } }),
    ]);
  });

  it('moves a tool below the release that removed a module the code imports (pkg_resources, gone in setuptools 82)', async () => {
    const spec = indexSpec(index, [requirement('usespkg')]);
    const distributionOf = (m: string): string | null => (m === 'pkg_resources' ? 'setuptools' : null);
    const stage = await prepareEnv(
      { issue, repoDir: null, checkout: null },
      ports(spec, { reportModules: ['usespkg'], distributionOf }),
      () => undefined,
      signal,
    );
    if (stage.kind !== 'built') throw new Error(JSON.stringify(stage));
    expect(stage.env.pins).toEqual({ usespkg: '1.0', setuptools: '81.0.0' });
    expect(stage.candidates).toEqual([
      expect.objectContaining({
        outcome: 'rejected',
        why: expect.stringContaining('pkg_resources is gone from setuptools 84.2.1 (removed in 82)'),
      }),
      expect.objectContaining({ outcome: 'accepted', change: 'setuptools <82', why: 'imports usespkg' }),
    ]);
  });

  it("imports the report's own import lines, and moves a package nothing bounded below the major that dropped one (Keras 2 code)", async () => {
    const spec = indexSpec(index, [{ ...requirement('kerasx'), source: 'script' }]);
    const statements = [
      { module: 'kerasx.layers.core', names: ['Dense'] },
      { module: 'kerasx.layers', names: ['Dense'] },
    ];
    const stage = await prepareEnv(
      { issue, repoDir: null, checkout: null },
      ports(spec, { reportModules: ['kerasx'], statements }),
      () => undefined,
      signal,
    );
    if (stage.kind !== 'built') throw new Error(JSON.stringify(stage));
    expect(stage.env.pins).toEqual({ kerasx: '2.0' });
    expect(stage.candidates).toEqual([
      expect.objectContaining({
        outcome: 'rejected',
        why: expect.stringMatching(/from kerasx\.layers\.core import Dense: kerasx 3\.0 has no kerasx\.layers\.core, and nothing asked/),
      }),
      expect.objectContaining({ outcome: 'accepted', change: 'kerasx <3', why: "imports kerasx and the report's 2 import lines of them" }),
    ]);
    // `import kerasx` alone proves 3.0: only the line tells.
    const bare = await prepareEnv(
      { issue, repoDir: null, checkout: null },
      ports(spec, { reportModules: ['kerasx'] }),
      () => undefined,
      signal,
    );
    expect(bare.kind === 'built' && bare.env.pins).toEqual({ kerasx: '3.0' });
  });

  it("moves Keras 2 code's `keras.layers.core` straight below 2.13, the release that moved it: not up again from 2.15", async () => {
    const spec = indexSpec(index, [{ ...requirement('keras'), source: 'script' }]);
    const stage = await prepareEnv(
      { issue, repoDir: null, checkout: null },
      ports(spec, { reportModules: ['keras'], statements: [{ module: 'keras.layers.core', names: ['Dense'] }] }),
      () => undefined,
      signal,
    );
    if (stage.kind !== 'built') throw new Error(JSON.stringify(stage));
    expect(stage.env.pins).toEqual({ keras: '2.12.0' });
    expect(stage.candidates).toEqual([
      expect.objectContaining({
        outcome: 'rejected',
        why: expect.stringContaining('keras.layers.core is gone from keras 3.15.1 (removed in 2.13)'),
      }),
      expect.objectContaining({ outcome: 'accepted', change: 'keras <2.13' }),
    ]);
  });

  it('proves the report’s imports under its own setup lines (the backend variable its script sets before importing)', async () => {
    const spec = indexSpec(index, [requirement('backended')]);
    const withSetup = ports(spec, { reportModules: ['backended'], setupEnv: { BACKENDED_BACKEND: 'fw' } });
    const proofs = (): string[] => readdirSync(join(root, 'cache', 'proofs')).filter((f) => f.endsWith('.ok'));
    const stage = await prepareEnv({ issue, repoDir: null, checkout: null }, withSetup, () => undefined, signal);
    if (stage.kind !== 'built') throw new Error(JSON.stringify(stage));
    expect(stage.candidates).toEqual([expect.objectContaining({ outcome: 'accepted', why: 'imports backended' })]);
    // A passed proof with no checkout is kept (a reused env imports torch once, not per job); a failed one never is.
    const kept = proofs().length;
    expect(kept).toBeGreaterThan(0);
    const again = await prepareEnv({ issue, repoDir: null, checkout: null }, withSetup, () => undefined, signal);
    expect(again.kind === 'built' && again.candidates?.[0]?.outcome).toBe('accepted');
    expect(proofs()).toHaveLength(kept);
    // Without them the default backend is imported, which is missing: the next candidate adds it, cannot be built
    // (the index has none), and the first env is used, with both candidates in the evidence.
    const fails = (): string[] => readdirSync(join(root, 'cache', 'proofs')).filter((f) => f.endsWith('.fail'));
    const failsBefore = fails().length;
    const without = await prepareEnv(
      { issue, repoDir: null, checkout: null },
      ports(spec, { reportModules: ['backended'], distributionOf: (m) => (m === 'tensorflow' ? 'tensorflow' : null) }),
      () => undefined,
      signal,
    );
    if (without.kind !== 'built') throw new Error(JSON.stringify(without));
    expect(without.env.lockHash).toBe(stage.env.lockHash);
    expect(without.candidates).toEqual([
      expect.objectContaining({ outcome: 'rejected', why: expect.stringContaining('backended imports tensorflow, which the env lacks') }),
      expect.objectContaining({ outcome: 'build-failed', change: 'tensorflow', lockHash: null }),
    ]);
    expect(without.spec.notes.at(-1)).toMatch(/no candidate env imported everything/);
    expect(proofs()).toHaveLength(kept);
    // A proof that failed as an import fails (No module named 'tensorflow') is kept too: the same job again reuses the
    // answer and imports nothing.
    expect(fails()).toHaveLength(failsBefore + 1);
    const steps: string[] = [];
    const counting = new UvEnvBuilder({
      ...builderOpts,
      runner: (cmd) => {
        steps.push(cmd.argv.join(' '));
        return runSandboxed(cmd);
      },
    });
    const again2 = await prepareEnv(
      { issue, repoDir: null, checkout: null },
      {
        ...ports(spec, { reportModules: ['backended'], distributionOf: (m) => (m === 'tensorflow' ? 'tensorflow' : null) }),
        builder: counting,
      },
      () => undefined,
      signal,
    );
    expect(again2.kind === 'built' && again2.candidates).toEqual(without.candidates);
    expect(steps.filter((s) => s.includes('REPGEN_PROOF'))).toEqual([]);
  });
});
