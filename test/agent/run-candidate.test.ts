import { describe, expect, it } from 'vitest';
import { mismatchFeedback, runCandidate } from '../../src/agent/run-candidate.js';
import type { RunRequestInput, RunResult, ScriptExecutor } from '../../src/exec/types.js';
import { readReport, readRun } from '../../src/symptoms/index.js';
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
    const out = await runCandidate(
      'import torch\n',
      { report, seed: 1, settings: { runTimeoutMs: 10_000, runMemoryMb: 512 } },
      { executor },
    );
    expect(executor.requests).toHaveLength(1);
    expect(out.reading.symptoms.map((s) => s.kind)).toContain('other_crash');
    expect(out.reading.symptoms[0]?.evidence).toContain('SIGSEGV');
  });
});

describe('mismatchFeedback', () => {
  const report = readReport('# Train set: Loss: 0.9857, Accuracy: 0/100 (0%)\n\n```python\nimport torch\n```\n');
  const candidate = (compared: { notCompared?: string[] }[]) => ({
    script: 'import torch\n',
    seed: 0,
    run: fakeRunResult({ stdout: 'Train set: Loss: 1.1121, Accuracy: 0/100 (0%)\n' }),
    reading: readRun('Train set: Loss: 1.1121, Accuracy: 0/100 (0%)\n', { exitCode: 0 }),
    match: {
      verdict: 'partial' as const,
      score: 0.5,
      reasons: ['the loss does not fall'],
      compared: compared.map((c) => ({
        what: "the report's last output line",
        report: 'r',
        run: 'r',
        basis: 'random_state' as const,
        agree: true,
        note: 'n',
        ...c,
      })),
    },
  });

  it("tells the model not to aim for values of the reporter's random state, and says nothing of the kind when there are none", () => {
    expect(mismatchFeedback(report, candidate([{ notCompared: ['0.9857'] }]))).toContain(
      "Do not aim for the report's exact 0.9857: they come from the reporter's random state or data; match the pattern instead.",
    );
    expect(mismatchFeedback(report, candidate([{}]))).not.toContain('Do not aim for');
  });
});
