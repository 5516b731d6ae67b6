import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { KubernetesExecConfig, type KubernetesConfigInput } from '../../../src/exec/kubernetes/config.js';
import { createKubernetesBuildRunner } from '../../../src/exec/kubernetes/env-build-runner.js';
import type { EnvBuildStep } from '../../../src/exec/kubernetes/render-env-build.js';
import { startFakeKubeApi, type FakeKubeApi, type FakeKubeOptions } from '../../helpers/fake-kube-api.js';
import { makeTempDir } from '../../helpers/temp-dir.js';

/**
 * Env build steps as Jobs, against the fake API server: the kubelet runs the step's command for real, with the
 * claim standing for the env cache's shared volume (the same host folder the "worker" reads), so what the step
 * writes is what the worker reads back.
 */

const ROW = { match: {}, image: 'ghcr.io/example/repgen:0.1.0', projectEnv: true };
/** A fake cluster whose claim is a fresh cache folder; both go when the test ends. */
async function setup(fake: FakeKubeOptions = {}, cfg: Partial<KubernetesConfigInput> = {}) {
  const cacheRoot = makeTempDir('repgen-k8s-envcache-');
  mkdirSync(join(cacheRoot, 'work'));
  const api = await startFakeKubeApi({ ...fake, claims: { 'repgen-env-build': cacheRoot } });
  onTestFinished(async () => {
    await api.close();
    rmSync(cacheRoot, { recursive: true, force: true });
  });
  const config = KubernetesExecConfig.parse({ kind: 'kubernetes', images: [ROW], envBuildClaim: 'repgen-env-build', ...cfg });
  const run = createKubernetesBuildRunner({
    config,
    cacheRoot,
    runAsUser: 10001,
    kubeConfig: api.kubeConfig(),
    tickMs: 50,
    retry: { baseDelayMs: 10, maxDelayMs: 50 },
  });
  return { api, run, cacheRoot };
}

function step(cacheRoot: string, script: string, extra: Partial<EnvBuildStep> = {}): EnvBuildStep {
  return {
    argv: ['/bin/sh', '-c', script],
    env: { PATH: '/usr/bin:/bin', HOME: join(cacheRoot, 'work') },
    writable: join(cacheRoot, 'work'),
    offline: false,
    timeoutMs: 60_000,
    memoryBytes: 1024 ** 3,
    ...extra,
  };
}

async function expectCleanedUp(a: FakeKubeApi, cacheRoot: string): Promise<void> {
  await a.waitFor(() => a.list('jobs').length === 0 && a.list('pods').length === 0);
  await a.waitFor(() => a.liveProcesses() === 0);
  // The step's output folder is gone; what the step wrote elsewhere in work/ stays (uv's cache lives there).
  expect(readdirSync(join(cacheRoot, 'work')).filter((n) => n.startsWith('b-step-'))).toEqual([]);
}

describe('createKubernetesBuildRunner', () => {
  it('runs a step as a Job: its exit code, stdout and stderr come back apart, and what it writes to work/ stays', async () => {
    const { api: a, run, cacheRoot } = await setup();
    const out = await run(
      step(cacheRoot, 'echo to-stdout; echo to-stderr >&2; echo built > made.txt; exit 3'),
      new AbortController().signal,
    );
    expect(out).toMatchObject({ code: 3, timedOut: false, aborted: false });
    expect(out.stdout).toBe('to-stdout\n');
    expect(out.stderr).toBe('to-stderr\n');
    expect(readdirSync(join(cacheRoot, 'work'))).toContain('made.txt');
    const job = a.created.find((c) => c.kind === 'jobs')?.object as Record<string, any>;
    expect(job.metadata.labels['repgen.dev/network']).toBe('env-build');
    expect(job.spec.template.spec.securityContext.runAsUser).toBe(10001);
    await expectCleanedUp(a, cacheRoot);
  });

  it('an offline step (installing from uv’s cache) gets the no-egress label', async () => {
    const { api: a, run, cacheRoot } = await setup();
    const out = await run(step(cacheRoot, 'true', { offline: true }), new AbortController().signal);
    expect(out.code).toBe(0);
    const job = a.created.find((c) => c.kind === 'jobs')?.object as Record<string, any>;
    expect(job.metadata.labels['repgen.dev/network']).toBe('none');
    await expectCleanedUp(a, cacheRoot);
  });

  it('says when the step ran out of memory', async () => {
    const { api: a, run, cacheRoot } = await setup();
    const hog = `exec /usr/bin/python3 -c 'b = bytearray(400 << 20); import time; time.sleep(30)'`;
    const out = await run(step(cacheRoot, hog, { memoryBytes: 128 * 1024 ** 2 }), new AbortController().signal);
    expect(out.code).not.toBe(0);
    expect(out.stderr).toMatch(/ran out of memory/);
    await expectCleanedUp(a, cacheRoot);
  });

  it('a cancelled build deletes its Job and its pod', async () => {
    const { api: a, run, cacheRoot } = await setup();
    const ctl = new AbortController();
    const pending = run(step(cacheRoot, 'sleep 60'), ctl.signal);
    await a.waitFor(() => a.list('pods').some((p) => p.status?.phase === 'Running'));
    ctl.abort();
    const out = await pending;
    expect(out.aborted).toBe(true);
    await expectCleanedUp(a, cacheRoot);
  });

  it('hostile: a step that swaps its output files for links never gets the worker to read a file of its own', async () => {
    const { api: a, run, cacheRoot } = await setup();
    const secretDir = makeTempDir('repgen-worker-secret-');
    onTestFinished(() => rmSync(secretDir, { recursive: true, force: true }));
    const secret = join(secretDir, 'private-key.pem');
    writeFileSync(secret, 'WORKER-PRIVATE-KEY');
    // The wrapper's redirections are open already; the step replaces the files (and then the folder) by links.
    const swapFiles = `o=$(ls -d ${cacheRoot}/work/b-step-*); rm -f $o/out $o/err; ln -s ${secret} $o/out; ln -s ${secret} $o/err`;
    const files = await run(step(cacheRoot, swapFiles), new AbortController().signal);
    expect(files.code).toBe(0);
    expect(`${files.stdout}${files.stderr}`).not.toContain('WORKER-PRIVATE-KEY');
    const swapDir = `o=$(ls -d ${cacheRoot}/work/b-step-*); mv $o $o.gone; ln -s ${secretDir} $o; cp ${secret} ${secretDir}/out`;
    const dir = await run(step(cacheRoot, swapDir), new AbortController().signal);
    expect(`${dir.stdout}${dir.stderr}`).not.toContain('WORKER-PRIVATE-KEY');
    await a.waitFor(() => a.list('jobs').length === 0);
  });

  it('refuses a step that would write outside the cache’s work folder, and says what to set when no claim is configured', async () => {
    const { run, cacheRoot } = await setup();
    const outside = await run(step(cacheRoot, 'true', { writable: cacheRoot }), new AbortController().signal);
    expect(outside).toMatchObject({ code: null });
    expect(outside.stderr).toMatch(/not under the env cache's work folder/);
    const { run: noClaim, cacheRoot: root2 } = await setup({}, { envBuildClaim: undefined });
    const refused = await noClaim(step(root2, 'true'), new AbortController().signal);
    expect(refused.stderr).toMatch(/REPGEN_K8S_ENV_BUILD_CLAIM/);
  });
});
