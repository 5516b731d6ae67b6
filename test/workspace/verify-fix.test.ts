import { describe, expect, it } from 'vitest';
import { readReport } from '../../src/symptoms/index.js';
import { verifyFix } from '../../src/workspace/verify-fix.js';
import { fixOracle } from '../../src/workspace/fix-verdict.js';
import { FakeExecutor } from '../fakes/fake-executor.js';

/** A behavioural report and its oracle script (issue 28): the fix check records the oracle's values at both refs. */
const REPORT = readReport(
  '# AvgPool1d drops the last window\n\n```python\nimport torch\npool = torch.nn.AvgPool1d(2, ceil_mode=True)\n```\n\nThe pooled length returns 3, expected 4.\n',
);
const SCRIPT = `import torch
pool = torch.nn.AvgPool1d(2, ceil_mode=True)
n = pool(torch.zeros(1, 1, 7)).shape[-1]
print(f"pooled length = {n}")
assert n == 4, f"pooled length is {n}, the report expects 4"
`;
const FAILS = {
  stdout: 'pooled length = 3\n',
  stderr:
    'Traceback (most recent call last):\n  File "/tmp/repgen-run-x/repro.py", line 5, in <module>\n' +
    '    assert n == 4, f"pooled length is {n}, the report expects 4"\nAssertionError: pooled length is 3, the report expects 4\n',
  exitCode: 1,
};
const BUGGY = {
  assertion: 'assert n == 4, f"pooled length is {n}, the report expects 4"',
  expected: '4',
  quote: 'returns 3, expected 4',
  reportObserved: '3',
  observed: 'pooled length is 3, the report expects 4',
};
const input = {
  script: SCRIPT,
  report: REPORT,
  ref: 'fix',
  sha: 'f'.repeat(40),
  workspace: { hostPath: '/tmp/none' },
  runs: 2,
  settings: { runTimeoutMs: 10_000, runMemoryMb: 512 },
  buggyOracle: BUGGY,
};

describe('verifyFix on a behavioural reproduction', () => {
  it('fixed: the assertion holds at the fix, and both values are recorded', async () => {
    const check = await verifyFix(input, { executor: new FakeExecutor(() => ({ stdout: 'pooled length = 4\n', exitCode: 0 })) });
    expect(check.verdict).toBe('fixed');
    expect(check.oracle).toEqual({
      assertion: BUGGY.assertion,
      expected: '4',
      quote: 'returns 3, expected 4',
      reportObserved: '3',
      atBuggy: 'pooled length is 3, the report expects 4',
      atFix: 'pooled length = 4',
      heldAtFix: true,
    });
    expect(check.runs[0]?.observed).toBe("the report's expectation held: pooled length = 4");
  });

  it('still failing: the assertion fails at the ref as it did at the buggy one', async () => {
    const check = await verifyFix(input, { executor: new FakeExecutor(() => FAILS) });
    expect(check.verdict).toBe('still_reproduces');
    expect(check.oracle).toMatchObject({ atBuggy: BUGGY.observed, atFix: 'pooled length is 3, the report expects 4', heldAtFix: false });
  });

  it('without a buggy record, the values at the fix still come from the runs; nothing asserted, nothing recorded', () => {
    expect(fixOracle(undefined, [])).toBeUndefined();
    const held = {
      form: 'compare' as const,
      assertion: 'assert n == 4',
      line: 5,
      expected: '4',
      quote: 'q',
      observed: 'n = 4',
      held: true,
    };
    expect(fixOracle(undefined, [{ oracle: held }])).toEqual({
      assertion: 'assert n == 4',
      expected: '4',
      quote: 'q',
      atBuggy: null,
      atFix: 'n = 4',
      heldAtFix: true,
    });
  });
});
