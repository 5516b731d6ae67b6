import { describe, expect, it } from 'vitest';
import type { RunRequestInput, RunResult, ScriptExecutor } from '../../src/exec/types.js';
import { withPolicy, type ExecPolicy } from '../../src/exec/with-policy.js';

/** A recording executor: the policy decorator must change what reaches it, and nothing else. */
function recorder(): ScriptExecutor & { seen: RunRequestInput[] } {
  const seen: RunRequestInput[] = [];
  return {
    name: 'recorder',
    seen,
    run: async (req) => {
      seen.push(req);
      return { executor: 'recorder' } as unknown as RunResult;
    },
  };
}

const request: RunRequestInput = { files: [{ path: 'r.py', content: 'print(1)' }], entry: 'r.py', setup: ['echo agent'] };
const open: ExecPolicy = { minGpus: 0, setup: [], network: false, labels: {}, maxTimeoutMs: 120_000, maxMemoryMb: 4096 };

describe('withPolicy', () => {
  it('imposes the policy on every run: image, GPU, setup first, network, job label', async () => {
    const exec = recorder();
    await withPolicy(exec, {
      ...open,
      image: 'img:1',
      minGpus: 1,
      setup: ['pip install -e .'],
      network: true,
      labels: { 'repgen-job': 'repro-1' },
    }).run(request);
    expect(exec.seen[0]).toMatchObject({
      image: 'img:1',
      gpus: 1,
      setup: ['pip install -e .', 'echo agent'],
      network: true,
      labels: { 'repgen-job': 'repro-1' },
    });
  });

  it('a script that asks for the network does not get it unless the policy gives it', async () => {
    const exec = recorder();
    await withPolicy(exec, open).run({ ...request, network: true });
    expect(exec.seen[0]).toMatchObject({ network: false, gpus: 0 });
  });

  it('keeps an image and more GPUs the request chose', async () => {
    const exec = recorder();
    await withPolicy(exec, { ...open, image: 'img:1', minGpus: 1 }).run({ ...request, image: 'special:2', gpus: 2 });
    expect(exec.seen[0]).toMatchObject({ gpus: 2, image: 'special:2' });
  });

  it("holds a run's time and memory under the operator's ceilings, and never raises them", async () => {
    const exec = recorder();
    const policy = { ...open, maxTimeoutMs: 5000, maxMemoryMb: 512 };
    await withPolicy(exec, policy).run({ ...request, limits: { timeoutMs: 3_600_000, memoryMb: 64_000, cpuSeconds: 9 } });
    await withPolicy(exec, policy).run({ ...request, limits: { timeoutMs: 1000, memoryMb: 100 } });
    await withPolicy(exec, policy).run(request);
    expect(exec.seen.map((r) => r.limits)).toEqual([
      { timeoutMs: 5000, memoryMb: 512, cpuSeconds: 9 },
      { timeoutMs: 1000, memoryMb: 100 },
      { timeoutMs: 5000, memoryMb: 512 },
    ]);
  });
});
