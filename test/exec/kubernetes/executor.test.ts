import { afterEach, describe, expect, it } from 'vitest';
import { InvalidRunRequestError } from '../../../src/exec/errors.js';
import { KubernetesExecConfig, type KubernetesConfigInput } from '../../../src/exec/kubernetes/config.js';
import { createKubernetesExecutor } from '../../../src/exec/kubernetes/executor.js';
import { RunResult, type RunRequestInput, type ScriptExecutor } from '../../../src/exec/types.js';
import { startFakeKubeApi, type FakeKubeApi, type FakeKubeOptions } from '../../helpers/fake-kube-api.js';

/**
 * The Kubernetes executor against the fake API server: real JSON over HTTP through @kubernetes/client-node,
 * a controller/scheduler/kubelet that runs the container's command with real python. Each case drives one
 * outcome a cluster can produce and checks the RunResult and that nothing the run created is left behind.
 */

let api: FakeKubeApi | undefined;

afterEach(async () => {
  await api?.close();
  api = undefined;
});

async function setup(
  fake: FakeKubeOptions = {},
  cfg: Partial<KubernetesConfigInput> = {},
  extra: { watchTimeoutSeconds?: number } = {},
): Promise<{ api: FakeKubeApi; exec: ScriptExecutor }> {
  api = await startFakeKubeApi(fake);
  const exec = createKubernetesExecutor({
    config: KubernetesExecConfig.parse({ kind: 'kubernetes', ...cfg }),
    kubeConfig: api.kubeConfig(),
    tickMs: 50,
    retry: { baseDelayMs: 10, maxDelayMs: 50 },
    ...extra,
  });
  // Every result must be a valid RunResult, whatever the outcome.
  const checked: ScriptExecutor = { name: exec.name, run: async (req, signal) => RunResult.parse(await exec.run(req, signal)) };
  return { api, exec: checked };
}

function py(content: string, extra: Partial<RunRequestInput> = {}): RunRequestInput {
  return { files: [{ path: 'main.py', content }], entry: 'main.py', ...extra };
}

async function expectCleanedUp(a: FakeKubeApi): Promise<void> {
  expect(a.list('jobs')).toEqual([]);
  expect(a.list('configmaps')).toEqual([]);
  expect(a.list('pods')).toEqual([]);
  await a.waitFor(() => a.liveProcesses() === 0);
}

function createdJob(a: FakeKubeApi): Record<string, any> {
  const job = a.created.find((c) => c.kind === 'jobs')?.object;
  if (!job) throw new Error('no Job was created');
  return job;
}

const SLEEPER = 'import time\nprint("started", flush=True)\ntime.sleep(60)\n';

async function waitRunning(a: FakeKubeApi): Promise<string> {
  const pod = await a.waitFor(() => a.list('pods').find((p) => p.status?.phase === 'Running'));
  return pod.metadata.name as string;
}

describe('kubernetes executor', () => {
  it('runs setup then the script, returns its output, and deletes the Job and ConfigMap', async () => {
    const { api, exec } = await setup();
    const r = await exec.run(
      py('import os\nprint(open("setup.txt").read().strip(), os.environ["REPGEN_SEED"])\n', {
        setup: ['echo from-setup > setup.txt'],
        seed: 7,
        labels: { job: 'octo/repo#12 attempt 3', issue: '12' },
      }),
    );
    expect(r).toMatchObject({ executor: 'kubernetes', exitCode: 0, signal: null, timedOut: false, oomKilled: false, infra: null });
    expect(r.stdout).toBe('from-setup 7\n');
    expect(r.isolation).toMatchObject({ network: 'none', sandbox: 'kubernetes' });
    const job = createdJob(api);
    expect(job.metadata.labels).toMatchObject({
      'repgen.dev/job': 'octo-repo-12-attempt-3',
      'repgen.dev/issue': '12',
      'app.kubernetes.io/managed-by': 'repgen',
    });
    expect(job.spec).toMatchObject({ backoffLimit: 0, ttlSecondsAfterFinished: 300 });
    expect(job.spec.template.spec).toMatchObject({ restartPolicy: 'Never', automountServiceAccountToken: false });
    expect(job.spec.template.spec.containers[0].resources.limits).not.toHaveProperty('nvidia.com/gpu');
    expect(api.requests.filter((q) => q.method === 'DELETE').map((q) => q.path)).toContain(
      `/apis/batch/v1/namespaces/repgen-repro/jobs/${job.metadata.name}`,
    );
    await expectCleanedUp(api);
  });

  it('reports a script failure with its exit code and traceback', async () => {
    const { api, exec } = await setup();
    const r = await exec.run(py('print("step 1", flush=True)\nx = 1 / 0\n'));
    expect(r.exitCode).toBe(1);
    expect(r.infra).toBeNull();
    expect(r.stdout).toBe('step 1\n');
    expect(r.stderr).toContain('ZeroDivisionError: division by zero');
    await expectCleanedUp(api);
  });

  it('reports OOMKilled when the container passes its memory limit, keeping what was printed before', async () => {
    const { api, exec } = await setup();
    const r = await exec.run(
      py(
        'import time\nprint("allocating", flush=True)\nkeep = []\nfor _ in range(200):\n    keep.append(b"x" * (8 << 20))\n    time.sleep(0.01)\nprint("survived")\n',
        {
          limits: { memoryMb: 64 },
        },
      ),
    );
    expect(r.oomKilled).toBe(true);
    expect(r.exitCode).toBeNull();
    expect(r.signal).toBe('SIGKILL');
    expect(r.infra).toBeNull();
    expect(r.stdout).toContain('allocating');
    expect(r.stdout).not.toContain('survived');
    expect(r.notes?.join(' ')).toMatch(/64 MiB memory limit/);
    await expectCleanedUp(api);
  });

  it('reports a timeout when the Job passes its activeDeadlineSeconds (DeadlineExceeded)', async () => {
    // A slow image pull eats the deadline before the runner's own timer could fire.
    const { api, exec } = await setup({ startDelayMs: 4000 }, { deadlineSlackSeconds: 1 });
    const r = await exec.run(py('print("never ran")\n', { limits: { timeoutMs: 1000 } }));
    expect(createdJob(api).spec.activeDeadlineSeconds).toBe(2);
    expect(r).toMatchObject({ timedOut: true, exitCode: null, signal: 'SIGKILL', infra: null });
    expect(r.notes?.join(' ')).toMatch(/activeDeadlineSeconds/);
    await expectCleanedUp(api);
  });

  it('gives up on a GPU run no node can take within the wait limit: unschedulable', async () => {
    const { api, exec } = await setup({ gpus: 0 }, { scheduleTimeoutMs: 1500 });
    const r = await exec.run(py('print("gpu")\n', { gpus: 1 }));
    expect(r.infra?.kind).toBe('unschedulable');
    expect(r.infra?.message).toMatch(/within 2s: 0\/1 nodes are available: 1 Insufficient nvidia.com\/gpu/);
    expect(r.exitCode).toBeNull();
    // By the executor's own clock, the one its verdict used: it gave up only once the wait limit had passed.
    expect(r.durationMs).toBeGreaterThanOrEqual(1500);
    const spec = createdJob(api).spec.template.spec;
    expect(spec.containers[0].resources.limits['nvidia.com/gpu']).toBe('1');
    expect(spec.nodeSelector).toEqual({ 'nvidia.com/gpu.present': 'true' });
    expect(spec.tolerations).toEqual([{ key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoSchedule' }]);
    await expectCleanedUp(api);
  });

  it('runs a GPU run on a GPU node, on the CUDA image the table picks for the report versions', async () => {
    const { api, exec } = await setup({ gpus: 1 });
    const r = await exec.run(py('print("on gpu node")\n', { gpus: 1, versions: { PyTorch: '2.1.0', python: '3.10' } }));
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toBe('on gpu node\n');
    expect(createdJob(api).spec.template.spec.containers[0].image).toBe('pytorch/pytorch:2.1.2-cuda12.1-cudnn8-runtime');
    await expectCleanedUp(api);
  });

  it('reports an image pull failure as infrastructure, not as the script', async () => {
    const { api, exec } = await setup({ pullFails: (img) => img.includes('missing') }, { imagePullGraceMs: 300 });
    const r = await exec.run(py('print(1)\n', { image: 'registry.example/missing:1' }));
    expect(r.infra?.kind).toBe('image_pull');
    expect(r.infra?.message).toMatch(/registry.example\/missing:1.*(ErrImagePull|ImagePullBackOff)/);
    expect(r.exitCode).toBeNull();
    await expectCleanedUp(api);
  });

  it('reports an evicted pod as infrastructure', async () => {
    const { api, exec } = await setup();
    const run = exec.run(py(SLEEPER));
    api.evict(await waitRunning(api), 'The node was low on resource: memory. Threshold quantity: 100Mi.');
    const r = await run;
    expect(r.infra?.kind).toBe('evicted');
    expect(r.infra?.message).toMatch(/low on resource: memory/);
    await expectCleanedUp(api);
  });

  it('on abort mid-run deletes the Job and ConfigMap and kills the pod', async () => {
    const { api, exec } = await setup();
    const controller = new AbortController();
    const run = exec.run(py(SLEEPER), controller.signal);
    const podName = await waitRunning(api);
    controller.abort();
    const r = await run;
    expect(r.infra?.kind).toBe('aborted');
    expect(r.exitCode).toBeNull();
    const deletes = api.requests.filter((q) => q.method === 'DELETE').map((q) => q.path);
    expect(deletes.some((p) => p.includes('/jobs/'))).toBe(true);
    expect(deletes.some((p) => p.includes('/configmaps/'))).toBe(true);
    expect(api.list('pods').map((p) => p.metadata.name)).not.toContain(podName);
    await expectCleanedUp(api);
  });

  it('retries the API on 500, 429 (Retry-After) and 503, and a 409 on replace', async () => {
    const { api, exec } = await setup();
    api.failNext('POST', /\/configmaps$/, 500, { times: 2 });
    api.failNext('POST', /\/jobs$/, 429, { headers: { 'retry-after': '0' } });
    api.failNext('PUT', /\/configmaps\//, 409);
    api.failNext('GET', /\/pods$/, 503);
    const r = await exec.run(py('print("ok")\n'));
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toBe('ok\n');
    const seen = (method: string, re: RegExp) =>
      api!.requests.filter((q) => q.method === method && re.test(q.path) && !q.query.watch).map((q) => q.status);
    expect(seen('POST', /\/configmaps$/)).toEqual([500, 500, 201]);
    expect(seen('POST', /\/jobs$/)).toEqual([429, 201]);
    expect(seen('PUT', /\/configmaps\//)).toEqual([409, 200]);
    expect(seen('GET', /\/pods$/).slice(0, 2)).toEqual([503, 200]);
    // The ConfigMap was made the Job's dependent, so the cluster would collect it with the Job.
    expect(api.created.filter((c) => c.kind === 'jobs')).toHaveLength(1);
    await expectCleanedUp(api);
  });

  it('adopts a Job whose create landed although its answer was lost (409 AlreadyExists on the retry)', async () => {
    const { api, exec } = await setup();
    api.failNext('POST', /\/jobs$/, 504, { land: true });
    const r = await exec.run(py('print("once")\n'));
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toBe('once\n');
    expect(api.requests.filter((q) => q.method === 'POST' && q.path.endsWith('/jobs')).map((q) => q.status)).toEqual([504, 409]);
    expect(api.created.filter((c) => c.kind === 'jobs')).toHaveLength(1);
    await expectCleanedUp(api);
  });

  it('reports an API refusal (403) as api_error and still deletes what it created', async () => {
    const { api, exec } = await setup();
    api.failNext('POST', /\/jobs$/, 403);
    const r = await exec.run(py('print(1)\n'));
    expect(r.infra?.kind).toBe('api_error');
    expect(r.infra?.message).toMatch(/HTTP 403/);
    expect(api.requests.filter((q) => q.method === 'POST' && q.path.endsWith('/jobs'))).toHaveLength(1);
    await expectCleanedUp(api);
  });

  it('lists again and carries on when a watch says 410 Gone mid-run (ERROR event)', async () => {
    const { api, exec } = await setup();
    const run = exec.run(py('import time\nprint("a", flush=True)\ntime.sleep(1.5)\nprint("b")\n'));
    await waitRunning(api);
    // Under load the executor may be between two watches when the pod starts: expire one that is open.
    await api.waitFor(() => api.openWatches('pods') > 0);
    const listsBefore = api.requests.filter((q) => q.method === 'GET' && q.path.endsWith('/pods') && !q.query.watch).length;
    api.expireWatches();
    const r = await run;
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toBe('a\nb\n');
    const listsAfter = api.requests.filter((q) => q.method === 'GET' && q.path.endsWith('/pods') && !q.query.watch).length;
    expect(listsAfter).toBeGreaterThan(listsBefore);
    await expectCleanedUp(api);
  });

  it('lists again when the watch request itself answers HTTP 410', async () => {
    const { api, exec } = await setup();
    api.expireWatches({ http: 2 });
    const r = await exec.run(py('import time\ntime.sleep(0.5)\nprint("done")\n'));
    expect(r.exitCode).toBe(0);
    expect(api.requests.filter((q) => q.query.watch === 'true' && q.status === 410)).toHaveLength(2);
    expect(api.requests.filter((q) => q.method === 'GET' && q.path.endsWith('/jobs') && !q.query.watch).length).toBeGreaterThanOrEqual(1);
    await expectCleanedUp(api);
  });

  it('resumes watches the server ends (timeoutSeconds) from the last resourceVersion', async () => {
    const { api, exec } = await setup({}, {}, { watchTimeoutSeconds: 1 });
    const r = await exec.run(py('import time\ntime.sleep(2.5)\nprint("quiet run done")\n'));
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toBe('quiet run done\n');
    const podWatches = api.requests.filter((q) => q.path.endsWith('/pods') && q.query.watch === 'true');
    expect(podWatches.length).toBeGreaterThanOrEqual(2);
    expect(podWatches.slice(1).every((q) => Number(q.query.resourceVersion) > 0)).toBe(true);
    await expectCleanedUp(api);
  });

  it('rejects a request too large for a ConfigMap before calling the API', async () => {
    const { api, exec } = await setup();
    await expect(exec.run(py(`x = "${'a'.repeat(1_000_000)}"\n`))).rejects.toBeInstanceOf(InvalidRunRequestError);
    expect(api.requests).toEqual([]);
  });
});
