import { describe, expect, it } from 'vitest';
import { EXITS_ZERO, mismatchFeedback, runCandidate } from '../../src/agent/run-candidate.js';
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

describe('against the project, a run that shows the bug must fail', () => {
  // The report's last output line is the symptom; the run prints it and exits 0 (diffusers #10738's shape).
  const report = readReport(
    '# upper is wrong\n\n```python\nfrom toylib import upper\nprint(upper([3.0]))\n```\n\nIt prints:\n\n```text\nupper: 3.3 (max 3.0)\n```\n\nIt should be 3.6.\n',
  );
  const settings = { runTimeoutMs: 10_000, runMemoryMb: 512 };
  const run = (exitCode: number, workspace: boolean) =>
    runCandidate(
      'from toylib import upper\nu = upper([3.0])\nprint(f"upper: {u} (max {max([3.0])})")\n',
      { report, seed: 0, settings },
      {
        executor: fixedExecutor(fakeRunResult({ stdout: 'upper: 3.3 (max 3.0)\n', exitCode })),
        ...(workspace ? { workspace: { hostPath: '/tmp/toylib' } } : {}),
      },
    );

  it('exit 0 with the symptom: partial, with the reason the model is told; without a checkout it stays reproduced', async () => {
    const zero = await run(0, true);
    expect(zero.match.verdict).toBe('partial');
    expect(zero.match.reasons.at(-1)).toBe(EXITS_ZERO);
    expect(mismatchFeedback(report, zero)).toContain('end the script with an assertion that fails while the bug shows');
    expect((await run(0, false)).match.verdict).toBe('reproduced');
  });

  it('the same symptom with a failing exit is a reproduction', async () => {
    // An assertion after the print: its own AssertionError, exit 1.
    const failing = await runCandidate(
      'from toylib import upper\nu = upper([3.0])\nprint(f"upper: {u} (max {max([3.0])})")\nassert u == 3.6\n',
      { report, seed: 0, settings },
      {
        executor: fixedExecutor(
          fakeRunResult({
            stdout: 'upper: 3.3 (max 3.0)\n',
            stderr: 'Traceback (most recent call last):\n  File "/w/repro.py", line 4, in <module>\n    assert u == 3.6\nAssertionError\n',
            exitCode: 1,
          }),
        ),
        workspace: { hostPath: '/tmp/toylib' },
      },
    );
    expect(failing.match.verdict, failing.match.reasons.join('\n')).toBe('reproduced');
    expect(failing.match.reasons).not.toContain(EXITS_ZERO);
  });
});

describe('against the project, a silent report: the reported line printed, then the script’s own check', () => {
  it('is a reproduction (no crash provenance asked of the script’s own check); a library crash is not', async () => {
    const report = readReport(
      '# schedule too short\n\n```python\nrun()\n```\n\nIt logs:\n```text\nsteps run 8/10 (sigma index out of range)\n```\n',
    );
    const stderr = (file: string, fn: string) =>
      `Traceback (most recent call last):\n  File "${file}", line 4, in ${fn}\n    assert done == total\nAssertionError: steps run 8/10\n`;
    const run = (file: string, fn: string) =>
      runCandidate(
        'from toylib import run\ndone, total = run()\nprint(f"steps run {done}/{total} (sigma index out of range)")\nassert done == total\n',
        { report, seed: 0, settings: { runTimeoutMs: 10_000, runMemoryMb: 512 } },
        {
          executor: fixedExecutor(
            fakeRunResult({ stdout: 'steps run 8/10 (sigma index out of range)\n', stderr: stderr(file, fn), exitCode: 1 }),
          ),
          workspace: { hostPath: '/tmp/toylib', mountPath: '/workspace' },
        },
      );
    const own = await run('/tmp/r/repro.py', '<module>');
    expect(own.match.verdict, own.match.reasons.join('\n')).toBe('reproduced');
    expect((await run('/workspace/toylib/sched.py', 'step')).match.verdict).toBe('not_reproduced');
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
