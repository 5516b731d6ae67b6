import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KubernetesExecConfig } from '../../../../src/exec/kubernetes/config.js';
import { findBinary } from '../../../../src/exec/sandbox/sandbox.js';
import { silentLogger } from '../../../../src/log.js';
import { kubernetesEnvBuilder } from '../../../../src/pipeline/stages/env/kubernetes-env-build.js';
import { writeCExtensionProject } from '../../../helpers/c-extension.js';
import { startFakeKubeApi, type FakeKubeApi } from '../../../helpers/fake-kube-api.js';
import {
  backendSource,
  indexSpec,
  makeDists,
  requirement,
  startLoopbackIndex,
  type LoopbackIndex,
} from '../../../helpers/loopback-pypi.js';
import { makeTempDir } from '../../../helpers/temp-dir.js';

// The env builder on the Kubernetes executor: real uv and Python, each step run by the fake API's kubelet as the
// build Job's container (the claim is the cache folder itself, as the worker and the build pods share one volume),
// a loopback index serving distributions built here. Nothing reaches the internet.

const PYTHON = '/usr/bin/python3';

const req = requirement;
const spec = indexSpec;

// A setup.py's view of its process: the worker's secrets must not be in it.
const SNOOP = `
import os
INIT = "SEEN = %r\\n" % ({"token": os.environ.get("GITHUB_TOKEN"), "key": os.environ.get("PRIVATE_KEY"), "keys": sorted(os.environ)},)
`;

describe('the env builder with its steps as Kubernetes Jobs', () => {
  let root: string;
  let index: LoopbackIndex;
  let api: FakeKubeApi;
  const signal = new AbortController().signal;
  const saved = { token: process.env.GITHUB_TOKEN, key: process.env.PRIVATE_KEY };

  beforeAll(async () => {
    root = makeTempDir('repgen-k8s-envbuild-');
    chmodSync(root, 0o711); // as root, RepGen hands the cache to the build pods' uid, which must reach it
    const dists = join(root, 'dists');
    mkdirSync(dists);
    makeDists(dists, [
      { name: 'alpha', version: '2.0', requires: ['beta>=1'] },
      { name: 'beta', version: '1.1' },
      { name: 'nosy', version: '1.0', backend: backendSource('nosy', '1.0', SNOOP) },
    ]);
    index = await startLoopbackIndex(dists);
    api = await startFakeKubeApi({ claims: { 'repgen-env-build': join(root, 'cache') } });
    // The worker's own secrets, as its process holds them.
    process.env.GITHUB_TOKEN = 'ghs_worker_token_must_not_leak';
    process.env.PRIVATE_KEY = 'worker-private-key-must-not-leak';
  }, 60_000);

  afterAll(async () => {
    for (const [k, v] of [
      ['GITHUB_TOKEN', saved.token],
      ['PRIVATE_KEY', saved.key],
    ] as const)
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    await api?.close();
    await index?.close();
    rmSync(root, { recursive: true, force: true });
  });

  async function builder() {
    const uv = findBinary('uv');
    if (!uv) throw new Error('uv not found: run scripts/ensure-system.sh');
    return kubernetesEnvBuilder({
      config: KubernetesExecConfig.parse({
        kind: 'kubernetes',
        images: [{ match: {}, image: 'ghcr.io/example/repgen:0.1.0', projectEnv: true }],
        envBuildClaim: 'repgen-env-build',
      }),
      cacheRoot: join(root, 'cache'),
      uv,
      basePython: PYTHON,
      workRoot: tmpdir(),
      log: silentLogger,
      kubeConfig: api.kubeConfig(),
      tickMs: 50,
    });
  }

  it('resolves and installs in build Jobs, publishes the venv in the cache, and reuses it with no Job at all', async () => {
    const b = await builder();
    const jobsBefore = api.created.filter((c) => c.kind === 'jobs').length;
    const result = await b.build(spec(index, [req('alpha')]), { checkout: null, signal });
    if (!result.ok) throw new Error(JSON.stringify(result.failure));
    expect(result.env.pins).toEqual({ alpha: '2.0', beta: '1.1' });
    expect(result.env.python).toMatch(/\/cache\/envs\/[0-9a-f]{64}\/bin\/python$/);
    const jobs = api.created.filter((c) => c.kind === 'jobs').slice(jobsBefore);
    // uv pip compile, then uv venv + uv pip sync: each a Job on the claim's work/ folder only.
    expect(jobs.length).toBeGreaterThanOrEqual(2);
    for (const { object } of jobs) {
      const spec = object.spec.template.spec;
      expect(spec.automountServiceAccountToken).toBe(false);
      expect(spec.containers[0].volumeMounts).toContainEqual({
        name: 'env-cache',
        mountPath: join(root, 'cache', 'work'),
        subPath: 'work',
      });
      expect(spec.volumes).toContainEqual({ name: 'env-cache', persistentVolumeClaim: { claimName: 'repgen-env-build' } });
    }
    const imported = execFileSync(result.env.python, ['-c', 'import alpha, beta; print("ok")'], { encoding: 'utf8' });
    expect(imported.trim()).toBe('ok');
    const again = await b.build(spec(index, [req('alpha')]), { checkout: null, signal });
    if (!again.ok) throw new Error(JSON.stringify(again.failure));
    expect(again.env.cached).toBe(true);
    expect(api.created.filter((c) => c.kind === 'jobs').length).toBe(jobsBefore + jobs.length);
    await api.waitFor(() => api.list('jobs').length === 0);
    expect(readdirSync(join(root, 'cache', 'work')).filter((n) => n.startsWith('b-'))).toEqual([]);
  });

  it("hostile: a setup.py built in a Job sees only the step's variables, none of the worker's secrets", async () => {
    const b = await builder();
    const result = await b.build(spec(index, [req('nosy')]), { checkout: null, signal });
    if (!result.ok) throw new Error(JSON.stringify(result.failure));
    const seen = execFileSync(result.env.python, ['-c', 'import nosy; print(nosy.SEEN)'], { encoding: 'utf8' });
    expect(seen).toContain("'token': None");
    expect(seen).toContain("'key': None");
    expect(seen).not.toMatch(/ghs_worker_token|worker-private-key/);
    for (const { object } of api.created.filter((c) => c.kind === 'jobs')) {
      const env = JSON.stringify(object.spec.template.spec.containers[0].env);
      expect(env).not.toMatch(/ghs_worker_token|worker-private-key|GITHUB_TOKEN|PRIVATE_KEY/);
    }
  });

  it("compiles the project's C extension in a build Job, on a copy under the cache, with the env's interpreter mounted read-only", async () => {
    const b = await builder();
    const project = { root: '', importRoots: [''], mode: 'build' as const, distribution: 'pkg', extensions: ['csrc/ext.c'] };
    const built = await b.build(spec(index, [], { project }), { checkout: null, signal });
    if (!built.ok) throw new Error(JSON.stringify(built.failure));
    const checkout = writeCExtensionProject(join(root, 'checkout'));
    const jobsBefore = api.created.filter((c) => c.kind === 'jobs').length;
    const out = await b.buildProject(spec(index, [], { project }), built.env, checkout, signal);
    if (!out.ok) throw new Error(JSON.stringify(out.failure));
    expect(out).toMatchObject({ built: true, cached: false });
    expect(out.checkout.startsWith(join(root, 'cache', 'builds'))).toBe(true);
    // The checkout itself is never written; the built copy imports the compiled module.
    expect(readdirSync(join(checkout, 'pkg'))).toEqual(['__init__.py']);
    const answer = execFileSync(built.env.python, ['-c', 'import pkg._C as c; print(c.answer)'], { cwd: out.checkout, encoding: 'utf8' });
    expect(answer.trim()).toBe('42');
    const compile = api.created.filter((c) => c.kind === 'jobs').slice(jobsBefore);
    expect(compile).toHaveLength(1);
    const mounts = compile[0]?.object.spec.template.spec.containers[0].volumeMounts as Record<string, unknown>[];
    const envDir = dirname(dirname(built.env.python));
    expect(mounts).toContainEqual({ name: 'env-cache', mountPath: envDir, subPath: relative(join(root, 'cache'), envDir), readOnly: true });
    expect(compile[0]?.object.metadata.labels['repgen.dev/network']).toBe('none');
  });
});
