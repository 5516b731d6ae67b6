import { describe, expect, it } from 'vitest';
import { RepoConfig } from '../../src/config/repo-config.js';
import type { RunRequestInput, RunResult, ScriptExecutor } from '../../src/exec/types.js';
import { withRepoPolicy } from '../../workers/wire-pipeline.js';

/** A recording executor: the policy wrapper must change what reaches it, and nothing else. */
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

describe('withRepoPolicy', () => {
  it('imposes the repository config on every run: image, GPU, setup first, job label', async () => {
    const exec = recorder();
    const config = RepoConfig.parse({ executor: { kind: 'kubernetes', image: 'img:1' }, gpu: true, setup: ['pip install -e .'], network: { allow: ['pypi.org'] } });
    await withRepoPolicy(exec, { config, gpu: false, jobId: 'repro-1' }).run(request);
    expect(exec.seen[0]).toMatchObject({ image: 'img:1', gpus: 1, setup: ['pip install -e .', 'echo agent'], network: true, labels: { 'repgen-job': 'repro-1' } });
  });

  it('never opens the local sandbox to the network for an allowlist (all-or-nothing there)', async () => {
    const exec = recorder();
    const config = RepoConfig.parse({ network: { allow: ['pypi.org'] } });
    await withRepoPolicy(exec, { config, gpu: false, jobId: 'j' }).run(request);
    expect(exec.seen[0]).toMatchObject({ network: false, gpus: 0 });
  });

  it('asks for a GPU when the run (/repgen --gpu) does, and keeps an image the request chose', async () => {
    const exec = recorder();
    const config = RepoConfig.parse({ executor: { kind: 'kubernetes', image: 'img:1' } });
    await withRepoPolicy(exec, { config, gpu: true, jobId: 'j' }).run({ ...request, image: 'special:2' });
    expect(exec.seen[0]).toMatchObject({ gpus: 1, image: 'special:2' });
  });
});
