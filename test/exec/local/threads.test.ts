import { chmodSync, rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { createLocalExecutor } from '../../../src/exec/local/executor.js';
import { makeTempDir } from '../../helpers/temp-dir.js';

const workRoot = makeTempDir('repgen-threads-test-');
chmodSync(workRoot, 0o755);
afterAll(() => rmSync(workRoot, { recursive: true, force: true }));

const probe = [
  'import os, torch',
  'print("omp", os.environ.get("OMP_NUM_THREADS"), "torch", torch.get_num_threads(), "det", os.environ.get("TF_DETERMINISTIC_OPS"))',
].join('\n');

describe("a run's threads", () => {
  it.each(['off', 'always'] as const)('torch starts the configured share of threads, cold and forked (warm pool %s)', async (warmPool) => {
    const ex = createLocalExecutor({ workRoot, warmPool, scriptThreads: 1 });
    try {
      const r = await ex.run({ files: [{ path: 'main.py', content: probe }], entry: 'main.py', seed: 5, limits: { timeoutMs: 120_000 } });
      expect(r.stderr).toBe('');
      // The probe seeds no TensorFlow, so TensorFlow's determinism stays off (test/exec/sandbox/script-env.test.ts).
      expect(r.stdout.trim()).toBe('omp 1 torch 1 det None');
    } finally {
      await ex.close?.();
    }
  });
});
