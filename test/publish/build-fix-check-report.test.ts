import { describe, expect, it } from 'vitest';
import { buildFixCheckReport, fixCheckExternalId, parseFixCheckExternalId } from '../../src/publish/build-fix-check-report.js';
import type { FixCheck } from '../../src/workspace/fix-verdict.js';

const SHA = 'a'.repeat(40);
const run = (over: Partial<FixCheck['runs'][number]> = {}): FixCheck['runs'][number] => ({
  seed: 7,
  outcome: 'passed',
  exitCode: 0,
  signal: null,
  timedOut: false,
  observed: 'no symptom; exit 0',
  outputExcerpt: 'ok\n',
  ...over,
});
const base = {
  issueNumber: 12,
  issueUrl: 'https://github.com/o/r/issues/12',
  evidenceUrl: 'https://github.com/o/r/issues/12#issuecomment-1',
  secrets: ['ghs_secretTokenValue123456789012345'],
};

describe('buildFixCheckReport', () => {
  it('fixed: success, the runs and the output, and the plain regression test to add', () => {
    const r = buildFixCheckReport({
      ...base,
      check: {
        ref: 'pull request #3 (fix)',
        sha: SHA,
        verdict: 'fixed',
        reason: 'the reproduction exits 0 in 2/2 runs',
        runs: [run(), run({ seed: 1007 })],
      },
      regressionTest: {
        path: 'tests/repro/test_issue_12.py',
        content: 'def test_issue_12():\n    pass\n',
        note: 'Add this test to the pull request.',
      },
    });
    expect(r.conclusion).toBe('success');
    expect(r.title).toBe('Fixed: the reproduction of #12 passes at aaaaaaaaaaaa');
    expect(r.summary).toContain('the reproduction exits 0 in 2/2 runs');
    expect(r.summary).toContain('| 1007 | passed | 0 |');
    expect(r.summary).toContain(base.evidenceUrl);
    expect(r.text).toContain('### Output of the run with seed 7');
    expect(r.text).toContain('tests/repro/test_issue_12.py');
    expect(r.text).toContain('def test_issue_12():');
  });

  it("a behavioural reproduction: the assertion, its expected value with the report's words, and what it saw at both refs", () => {
    const r = buildFixCheckReport({
      ...base,
      check: {
        ref: 'pull request #3 (fix)',
        sha: SHA,
        verdict: 'fixed',
        reason: 'the reproduction exits 0 in 2/2 runs',
        runs: [run({ observed: "the report's expectation held: pooled length = 4" })],
        oracle: {
          assertion: 'assert n == 4, f"pooled length is {n}, the report expects 4"',
          expected: '4',
          quote: 'The pooled length returns 3, expected 4.',
          reportObserved: '3',
          atBuggy: 'pooled length is 3, the report expects 4',
          atFix: 'pooled length = 4',
          heldAtFix: true,
        },
      },
    });
    expect(r.summary).toContain(
      'The report\'s expectation, as the reproduction asserts it: `assert n == 4, f"pooled length is {n}, the report expects 4"` — expected `4` (from the report: “The pooled length returns 3, expected 4.”; the report saw `3`).',
    );
    expect(r.summary).toContain('| where it was reproduced | fails: `pooled length is 3, the report expects 4` |');
    expect(r.summary).toContain('| this head (aaaaaaaaaaaa) | held: `pooled length = 4` |');
  });

  it('still failing: failure, with the reported error it showed again', () => {
    const r = buildFixCheckReport({
      ...base,
      check: {
        ref: 'pr',
        sha: SHA,
        verdict: 'still_reproduces',
        reason: 'the reported bug still shows in 2/2 runs',
        runs: [
          run({
            outcome: 'reproduces',
            exitCode: 1,
            observed: 'RuntimeError: mat1 and mat2 shapes cannot be multiplied',
            outputExcerpt: 'Traceback…\nRuntimeError: mat1 and mat2 shapes cannot be multiplied\n',
          }),
        ],
      },
    });
    expect(r.conclusion).toBe('failure');
    expect(r.title).toMatch(/^Still failing: the bug of #12 still shows/);
    expect(r.summary).toContain('| 7 | reproduces | 1 | RuntimeError: mat1 and mat2 shapes cannot be multiplied |');
    expect(r.text).toContain('RuntimeError: mat1 and mat2 shapes cannot be multiplied');
    expect(r.text).not.toContain('Regression test');
  });

  it('inconclusive never blocks a merge (neutral), and a timeout says so', () => {
    const r = buildFixCheckReport({
      ...base,
      check: {
        ref: 'pr',
        sha: SHA,
        verdict: 'inconclusive',
        reason: 'the reproduction now fails for another reason',
        runs: [run({ outcome: 'fails_otherwise', exitCode: null, timedOut: true, observed: 'no symptom' })],
      },
    });
    expect(r.conclusion).toBe('neutral');
    expect(r.title).toMatch(/^Inconclusive/);
    expect(r.summary).toContain('| timed out |');
  });

  it('hostile output: secrets redacted, mentions inert, a fence in the output cannot close the block, sizes within GitHub limits', () => {
    const output = `token ${base.secrets[0]} and ghp_${'x'.repeat(36)}\n\`\`\`\n@maintainer look at #1\n${'y'.repeat(200_000)}`;
    const r = buildFixCheckReport({
      ...base,
      check: {
        ref: 'pr',
        sha: SHA,
        verdict: 'still_reproduces',
        reason: 'ping @someone',
        runs: [run({ outcome: 'reproduces', exitCode: 1, observed: '@maintainer | broke', outputExcerpt: output })],
      },
    });
    for (const part of [r.summary, r.text]) {
      expect(part).not.toContain(base.secrets[0]);
      expect(part).not.toMatch(/ghp_x{36}/);
      expect(part.length).toBeLessThanOrEqual(65_535);
    }
    expect(r.summary).not.toMatch(/(^|[^\w`])@maintainer/);
    expect(r.summary).not.toMatch(/(^|[^\w`])@someone/);
    expect(r.text).toMatch(/^````text$/m);
  });
});

describe('fix check external id', () => {
  it('round-trips and rejects anything else', () => {
    const id = fixCheckExternalId({ owner: 'Org', repo: 'My.Repo', issueNumber: 12, prNumber: 30 });
    expect(id).toBe('verify:org/my.repo#12@pr30');
    expect(parseFixCheckExternalId(id)).toEqual({ owner: 'org', repo: 'my.repo', issueNumber: 12, prNumber: 30 });
    expect(parseFixCheckExternalId('org/repo#12')).toBeNull();
    expect(parseFixCheckExternalId('verify:org/repo#12@pr30; rm -rf')).toBeNull();
    expect(parseFixCheckExternalId(null)).toBeNull();
  });
});
