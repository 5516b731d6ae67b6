import { describe, expect, it } from 'vitest';
import { runCandidate } from '../../src/agent/run-candidate.js';
import type { RunRequestInput, RunResult, ScriptExecutor } from '../../src/exec/types.js';
import { readReport } from '../../src/symptoms/index.js';
import { fakeRunResult } from '../fakes/fake-executor.js';

/** An executor that answers every run with one fixed result (here: a process killed by a signal). */
function fixedExecutor(result: RunResult): ScriptExecutor & { requests: RunRequestInput[] } {
  const requests: RunRequestInput[] = [];
  return {
    name: 'fixed',
    requests,
    run: async (req) => {
      requests.push(req);
      return result;
    },
  };
}

describe('runCandidate', () => {
  it('reads a native crash (killed by SIGSEGV, no traceback) as a crash symptom', async () => {
    const killed = { ...fakeRunResult({ stdout: 'step 1\n', exitCode: null }), signal: 'SIGSEGV' };
    const executor = fixedExecutor(killed);
    const report = readReport('# Segmentation fault in my conv layer\n\n```python\nimport torch\n```\n');
    const out = await runCandidate('import torch\n', { report, seed: 1, settings: { runTimeoutMs: 10_000, runMemoryMb: 512 } }, { executor });
    expect(executor.requests).toHaveLength(1);
    expect(out.reading.symptoms.map((s) => s.kind)).toContain('other_crash');
    expect(out.reading.symptoms[0]?.evidence).toContain('SIGSEGV');
  });
});
