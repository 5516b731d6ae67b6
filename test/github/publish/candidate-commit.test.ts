import { describe, expect, it } from 'vitest';
import {
  candidateCommitSection,
  planCandidateCommit,
  prCandidate,
  withCandidate,
  withCandidateSection,
} from '../../../src/github/publish/candidate-commit.js';

/** The candidate commit's pure parts (issue 41 item 3): when the PR may carry one, which diffs it refuses, what the body says. */

const FIX = '--- a/toylib/stats.py\n+++ b/toylib/stats.py\n@@ -3 +3 @@\n-    return max(xs) * 1.1\n+    return max(xs)\n';
const yes = { answer: 'yes' as const, result: 'fix_sensitive' as const, summary: 's', diff: FIX, runs: 2 };

describe('prCandidate', () => {
  it('only a fix-sensitive answer with a diff, and only when the repository leaves it on', () => {
    expect(prCandidate({ candidateFix: yes }, true)).toEqual({ diff: FIX, runs: 2 });
    expect(prCandidate({ candidateFix: yes }, false)).toBeUndefined();
    expect(prCandidate({ candidateFix: { ...yes, runs: undefined } }, true)).toEqual({ diff: FIX, runs: null });
    expect(prCandidate({ candidateFix: { ...yes, diff: null } }, true)).toBeUndefined();
    expect(prCandidate({ candidateFix: { ...yes, answer: 'no', result: 'oracle_suspect' } }, true)).toBeUndefined();
    expect(prCandidate({}, true)).toBeUndefined();
  });
});

describe('planCandidateCommit', () => {
  it('takes a library edit; refuses the regression test by name wherever it is, and what the candidate step refuses', () => {
    expect(planCandidateCommit(FIX, ['test_issue_7.py'])).toMatchObject({ ok: true, files: [{ path: 'toylib/stats.py' }] });
    const own = FIX.replaceAll('toylib/stats.py', 'toylib/test_issue_7.py');
    expect(planCandidateCommit(own, ['test_issue_7.py'])).toMatchObject({
      ok: false,
      why: expect.stringMatching(/test file|reproduction/),
    });
    const rename = 'diff --git a/x.py b/y.py\nrename from x.py\nrename to y.py\n';
    expect(planCandidateCommit(rename, [])).toMatchObject({ ok: false, why: expect.stringContaining('renames a file') });
  });
});

describe('candidateCommitSection', () => {
  const d = { runs: 3, evidenceUrl: 'https://github.com/acme/toylib/issues/7#issuecomment-1', testPath: 'tests/repro/test_issue_7.py' };
  it('added: generated, not reviewed, how it was checked, how to drop it', () => {
    const sha = 'c'.repeat(40);
    const text = candidateCommitSection({ added: true, sha, already: false }, d);
    expect(text).toContain('nobody has reviewed it');
    expect(text).toContain('passes with it in each of its 3 runs and fails without it (fix-sensitive; evidence: https://');
    expect(text).toContain(`\`git revert ${sha}\``);
    expect(candidateCommitSection({ added: true, sha, already: true }, { ...d, runs: null })).toContain('passes with it in every run');
    expect(withCandidate({ candidate: { added: true, sha, already: false } })).toContain('as a separate commit');
    expect(withCandidate({ candidate: { added: false, why: 'x' } })).toBe('');
  });

  it('not added: one line with the reason, made inert (no mention, no HTML, no code span, no line break)', () => {
    const text = candidateCommitSection({ added: false, why: 'it changes @alice/<script>`x`\n# y.py, which is bad' }, d);
    expect(text.split('\n')).toHaveLength(1);
    expect(text).toMatch(/^\*\*No candidate commit\.\*\*/);
    expect(text).not.toMatch(/(^|[^\w`])@alice/);
    expect(text).not.toMatch(/[<>`]/);
  });
});

describe('withCandidateSection', () => {
  const S = '<!-- repgen:candidate -->';
  const E = '<!-- /repgen:candidate -->';
  it('appends the section, markers and all, when the body has none; an empty body gets the section alone', () => {
    expect(withCandidateSection('Intro.\n\n', 'new')).toBe(`Intro.\n\n${S}\nnew\n${E}`);
    expect(withCandidateSection('', 'new')).toBe(`${S}\nnew\n${E}`);
  });

  it("replaces only RepGen's part: what is before and after it stays", () => {
    expect(withCandidateSection(`a\n${S}\nold\n${E}\nb`, 'new')).toBe(`a\n${S}\nnew\n${E}\nb`);
  });

  it('hostile: a stray start marker a person left, before or after the section, never swallows their text', () => {
    expect(withCandidateSection(`x ${S} y\n${S}\nold\n${E}\nz`, 'new')).toBe(`x ${S} y\n${S}\nnew\n${E}\nz`);
    expect(withCandidateSection(`${S}\nold\n${E}\nquote: ${S} kept`, 'new')).toBe(`${S}\nnew\n${E}\nquote: ${S} kept`);
    // A start marker with no end: nothing replaced, the section appended.
    expect(withCandidateSection(`${S} only`, 'new')).toBe(`${S} only\n\n${S}\nnew\n${E}`);
  });
});

describe('candidateCommitSection, kept', () => {
  it("an earlier run's commit kept: says so, with the reason made inert, and how to drop it", () => {
    const sha = 'd'.repeat(40);
    const text = candidateCommitSection(
      { added: true, sha, already: true, kept: 'because @bob said <b>so</b>' },
      { runs: 2, evidenceUrl: 'https://e', testPath: 't.py' },
    );
    expect(text).toContain(`Commit ${sha}, added by an earlier RepGen run`);
    expect(text).toContain('A later run left the branch as it is: because');
    expect(text).not.toMatch(/(^|[^\w`])@bob|<b>/);
    expect(text).toContain(`\`git revert ${sha}\``);
  });
});
