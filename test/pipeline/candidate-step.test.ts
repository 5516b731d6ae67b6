import { describe, expect, it } from 'vitest';
import type { ReproEvidence } from '../../src/pipeline/build-evidence.js';
import { withCandidateFix } from '../../src/pipeline/candidate-step.js';
import { reattemptSentence, withReattempt } from '../../src/pipeline/oracle-reattempt.js';
import type { CandidateAttempt, CandidateFixRecord, OracleReattempt } from '../../src/pipeline/stages/candidate-fix/types.js';
import { candidateFixRow } from '../../src/publish/candidate-fix-section.js';

/** The candidate fix's record after a suspect oracle sent the loop back (issue 41 item 2): evidence, outcome, the row. */

const DIFF = '--- a/toylib/stats.py\n+++ b/toylib/stats.py\n@@ -3 +3 @@\n-    return max(xs) * 1.1\n+    return max(xs) * 1.2\n';

function attempt(n: number, result: CandidateAttempt['result']): CandidateAttempt {
  return {
    n,
    result,
    noEvidence: null,
    reason: `${result} reason`,
    diff: DIFF,
    files: ['toylib/stats.py'],
    runs: [],
    check: null,
    importFailure: null,
  };
}

const record: CandidateFixRecord = {
  answer: 'no',
  result: 'oracle_suspect',
  summary: "1 candidate change: the reproduction still fails with a change that makes the report's expectation true",
  attempts: [attempt(1, 'oracle_suspect')],
  diff: DIFF,
  usage: { inputTokens: 1000, outputTokens: 200, costUsd: 0.01 },
  durationMs: 5000,
};

function round(over: Partial<OracleReattempt>): OracleReattempt {
  return {
    candidate: 1,
    status: 'fix_sensitive',
    reason: 'with the patch 2 of 2 runs pass; without it the bug shows',
    suspectAttempt: 2,
    suspectScript: 'assert u == 3.6\n',
    feedback: 'Attempt 2 reproduced the bug, but …',
    attempts: [3],
    script: 'assert math.isclose(u, 3.6)\n',
    confirmation: { reproducedRuns: 3, totalRuns: 3 },
    rerun: attempt(2, 'fix_sensitive'),
    adopted: true,
    usage: { inputTokens: 500, outputTokens: 100, costUsd: 0.005 },
    ...over,
  };
}

const evidence = { outcome: { status: 'reproduced' } } as unknown as ReproEvidence;

describe('the record after the round', () => {
  it('adopted: the rerun is the answer (yes), its usage and time are the step’s', () => {
    const r = withReattempt(record, round({}), 2000);
    expect(r).toMatchObject({ answer: 'yes', result: 'fix_sensitive', diff: DIFF, durationMs: 7000 });
    expect(r.attempts.map((a) => [a.n, a.result])).toEqual([
      [1, 'oracle_suspect'],
      [2, 'fix_sensitive'],
    ]);
    expect(r.usage).toEqual({ inputTokens: 1500, outputTokens: 300, costUsd: 0.015 });
    expect(r.summary).toMatch(/^1 candidate change: the reproduction passes with candidate 1 and fails without it, once written again/);
  });

  it('not adopted: the suspect answer stays; the round is recorded and its usage counted', () => {
    const r = withReattempt(record, round({ status: 'still_fails', adopted: false, rerun: attempt(2, 'oracle_suspect') }), 0);
    expect(r).toMatchObject({ answer: 'no', result: 'oracle_suspect', summary: record.summary, attempts: record.attempts });
    expect(r.reattempt?.status).toBe('still_fails');
    expect(r.usage.inputTokens).toBe(1500);
  });
});

describe("the comment's sentence names what a reader can check", () => {
  const cases: [Partial<OracleReattempt>, string][] = [
    [
      {},
      "The first reproduction (attempt 2) still failed with candidate 1 although an independent check of the report's expectation " +
        'passed with it; written again with that finding, the reproduction (attempt 3, confirmed in 3/3 runs) fails without the change ' +
        'and passes with it, and replaced the first.',
    ],
    [
      { status: 'still_fails', adopted: false, reason: 'with the patch 2 of 2 runs show the bug.' },
      '; written again with that finding (attempt 3, confirmed in 3/3 runs), it still fails with the change, so the first stays: ' +
        'with the patch 2 of 2 runs show the bug.',
    ],
    [
      { status: 'no_evidence', adopted: false, reason: 'the patched project does not import' },
      '(attempt 3, confirmed in 3/3 runs), it gave no evidence with the change, so the first stays: the patched project does not import.',
    ],
    [
      { status: 'not_confirmed', adopted: false, confirmation: { reproducedRuns: 1, totalRuns: 3 } },
      '(attempt 3), it did not hold in the confirmation runs (1/3 runs), so the first stays.',
    ],
    [
      { status: 'not_reproduced', adopted: false, attempts: [3, 4], reason: 'no attempt reproduced the bug (2 tier-1 attempts)' },
      '(attempts 3, 4), no script showed the bug (no attempt reproduced the bug (2 tier-1 attempts)), so the first stays.',
    ],
    [
      { status: 'not_made', adopted: false, attempts: [], reason: "the run's cap of 5 tier-1 attempts is reached (5 made)" },
      "; it was not written again: the run's cap of 5 tier-1 attempts is reached (5 made).",
    ],
  ];
  it.each(cases)('%o', (over, sentence) => {
    expect(reattemptSentence(round(over))).toContain(sentence);
  });

  it('the outcome carries it, and the row shows it after the answer; without a round the row is as before', () => {
    const ev = withCandidateFix(evidence, withReattempt(record, round({}), 0));
    expect(ev.candidateFix?.reattempt?.status).toBe('fix_sensitive');
    expect(ev.outcome.candidateFix?.reattempt).toBe(reattemptSentence(round({})));
    expect(candidateFixRow(ev.outcome)).toBe(
      '| **A candidate change makes this reproduction pass** | yes: it passes with the generated change below and fails without it ' +
        `(fix-sensitive). ${reattemptSentence(round({}))} |`,
    );
    const plain = withCandidateFix(evidence, record);
    expect(plain.outcome.candidateFix).not.toHaveProperty('reattempt');
    expect(plain.outcome.candidateFix).not.toHaveProperty('runs');
    expect(candidateFixRow(plain.outcome)).not.toMatch(/written again/);
  });

  it('a fix-sensitive answer carries the runs of its attempt (the regression-test PR says how many passed)', () => {
    const passed = { seed: 0, outcome: 'passed' as const, exitCode: 0, outputExcerpt: '' };
    const ev = withCandidateFix(
      evidence,
      withReattempt(record, round({ rerun: { ...attempt(2, 'fix_sensitive'), runs: [passed, passed, passed] } }), 0),
    );
    expect(ev.outcome.candidateFix).toMatchObject({ answer: 'yes', runs: 3 });
  });

  it('a hostile reason (a runner’s output in it) stays one table cell: no pipe, no line break, no mention', () => {
    const reason = 'the patched project does not import: x | y\n@alice </details> #12';
    const ev = withCandidateFix(evidence, withReattempt(record, round({ status: 'no_evidence', adopted: false, reason }), 0));
    const row = candidateFixRow(ev.outcome);
    expect(row.split('\n')).toHaveLength(1);
    expect(row).toContain('x \\| y');
    expect(row).not.toMatch(/(^|[^\w`])@alice/);
    expect(row).not.toMatch(/(^|[^&`])#12/);
    expect(row.endsWith(' |')).toBe(true);
  });
});
