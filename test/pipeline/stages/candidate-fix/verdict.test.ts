import { describe, expect, it } from 'vitest';
import type { CandidateAttempt } from '../../../../src/pipeline/stages/candidate-fix/types.js';
import { candidateSummary, candidateVerdict } from '../../../../src/pipeline/stages/candidate-fix/verdict.js';

const runs = (...o: ('passed' | 'reproduces' | 'fails_otherwise' | 'infra')[]) => o.map((outcome) => ({ outcome }));

describe('candidateVerdict: what one candidate says about the reproduction', () => {
  it('passes in every run with the patch (it failed without): fix-sensitive', () => {
    expect(candidateVerdict({ importFailure: null, runs: runs('passed', 'passed'), check: null })).toMatchObject({
      result: 'fix_sensitive',
      noEvidence: null,
    });
  });

  it('still shows the bug while the independent check turns from failing to passing: the oracle is suspect', () => {
    const v = candidateVerdict({
      importFailure: null,
      runs: runs('reproduces', 'reproduces'),
      check: { unpatched: 'failed', patched: 'passed' },
    });
    expect(v.result).toBe('oracle_suspect');
    expect(v.reason).toMatch(/independent check of the report's expectation passes \(it fails without it\)/);
  });

  it.each([
    ['no check', null, /no independent check/],
    ['a check that passes without the patch (it cannot see the bug)', { unpatched: 'passed', patched: null }, /passes without the patch/],
    ['a check that still fails with the patch', { unpatched: 'failed', patched: 'failed' }, /still fails with the patch/],
    ['a check that could not run', { unpatched: 'infra', patched: null }, /could not run without the patch/],
  ] as const)('still shows the bug with %s: still fails, nothing held against the oracle', (_n, check, why) => {
    const v = candidateVerdict({ importFailure: null, runs: runs('reproduces'), check });
    expect(v.result).toBe('still_fails');
    expect(v.reason).toMatch(why);
  });

  it('an import the patch broke, a run that fails another way, runs that disagree, the runner failing: no evidence', () => {
    expect(candidateVerdict({ importFailure: 'SyntaxError: invalid syntax', runs: [], check: null })).toMatchObject({
      result: 'no_evidence',
      noEvidence: 'breaks_import',
    });
    expect(candidateVerdict({ importFailure: null, runs: runs('fails_otherwise'), check: null })).toMatchObject({
      result: 'no_evidence',
      noEvidence: 'fails_otherwise',
    });
    expect(candidateVerdict({ importFailure: null, runs: runs('passed', 'reproduces'), check: null })).toMatchObject({
      result: 'no_evidence',
      noEvidence: 'fails_otherwise',
    });
    expect(candidateVerdict({ importFailure: null, runs: runs('infra'), check: null })).toMatchObject({
      result: 'no_evidence',
      noEvidence: 'infra',
    });
  });
});

function attempt(n: number, result: CandidateAttempt['result'], diff = `diff ${n}`): CandidateAttempt {
  return {
    n,
    result,
    noEvidence: result === 'no_evidence' ? 'does_not_apply' : null,
    reason: `reason ${n}`,
    diff,
    files: ['a.py'],
    runs: result === 'no_evidence' ? [] : [{ seed: 0, outcome: 'passed', exitCode: 0, outputExcerpt: '' }],
    check: null,
    importFailure: null,
  };
}

describe('candidateSummary: the answer over the attempts', () => {
  it('is yes with the fix-sensitive diff when any attempt was fix-sensitive', () => {
    expect(candidateSummary([attempt(1, 'still_fails'), attempt(2, 'fix_sensitive')])).toMatchObject({
      answer: 'yes',
      result: 'fix_sensitive',
      diff: 'diff 2',
    });
  });
  it('is no when a candidate ran and the reproduction still failed; oracle-suspect ranks above still-fails', () => {
    expect(candidateSummary([attempt(1, 'still_fails'), attempt(2, 'no_evidence')])).toMatchObject({
      answer: 'no',
      result: 'still_fails',
      diff: 'diff 1',
    });
    expect(candidateSummary([attempt(1, 'oracle_suspect')])).toMatchObject({ answer: 'no', result: 'oracle_suspect' });
  });
  it('is no evidence, each reason said, when no candidate ran against the reproduction; never counted as a no', () => {
    const s = candidateSummary([attempt(1, 'no_evidence'), attempt(2, 'no_evidence')]);
    expect(s).toMatchObject({ answer: 'no_evidence', result: 'no_evidence', diff: null });
    expect(s.summary).toBe('2 candidate changes, no evidence either way: reason 1; reason 2');
  });
  it('is not tried without attempts', () => {
    expect(candidateSummary([])).toMatchObject({ answer: 'not_tried', result: null });
  });
});
