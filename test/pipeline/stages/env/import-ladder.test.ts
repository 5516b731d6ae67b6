import { chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EnvSpec } from '../../../../src/env/types.js';
import { UvEnvBuilder } from '../../../../src/env/uv-builder.js';
import { findBinary, probeSandbox } from '../../../../src/exec/sandbox/sandbox.js';
import { prepareEnv, type EnvPorts, type EnvProofInput } from '../../../../src/pipeline/stages/env/index.js';
import { indexSpec, makeDists, requirement, startLoopbackIndex, type LoopbackIndex } from '../../../helpers/loopback-pypi.js';

// The env stage's import ladder (issue 39, item 3) on real uv, bwrap and Python, with a loopback index serving
// distributions built here: a candidate that fails its import proof is classified and the next one built.

const issue = { title: 't', body: 'b' } as Parameters<typeof prepareEnv>[0]['issue'];
const project = { root: '', importRoots: [''], mode: 'pth' as const, distribution: 'proj', extensions: [] };

describe('prepareEnv: proof by import, a bounded ladder (loopback index)', () => {
  let root: string;
  let checkout: string;
  let index: LoopbackIndex;
  let builder: UvEnvBuilder;
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
      // Keras 3's way: the backend it imports is the one the environment names, else one that is not installed.
      {
        name: 'backended',
        version: '1.0',
        init: 'import os\nif os.environ.get("BACKENDED_BACKEND") != "fw":\n    import tensorflow\nimport fw\n',
        requires: ['fw'],
      },
    ]);
    index = await startLoopbackIndex(dists);
    checkout = join(root, 'checkout');
    mkdirSync(join(checkout, 'proj'), { recursive: true });
    writeFileSync(join(checkout, 'proj', '__init__.py'), 'import fw\nfw.xpu\n');
    for (const d of [checkout, join(checkout, 'proj')]) chmodSync(d, 0o755);
    const uv = findBinary('uv');
    if (!uv) throw new Error('uv not found: run scripts/ensure-system.sh');
    const plan = await probeSandbox('bwrap', { workRoot: tmpdir() });
    builder = new UvEnvBuilder({ cacheRoot: join(root, 'cache'), uv, basePython: '/usr/bin/python3', plan });
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
  });
});
