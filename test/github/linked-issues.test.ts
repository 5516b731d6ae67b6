import { describe, expect, it } from 'vitest';
import { linkedIssues, MAX_LINKED_ISSUES } from '../../src/github/linked-issues.js';
import { cpuMsOf } from '../helpers/cpu-time.js';

const OWN = { owner: 'Codertocat', repo: 'Hello-World' };

describe('linkedIssues', () => {
  it.each([
    ['Fixes #12', [12]],
    ['This PR closes #3 and resolves #4.', [3, 4]],
    ['fixed: #7', [7]],
    ['RESOLVED #8', [8]],
    ['Close #1, fix #2, closes #1 again', [1, 2]],
    ['Fixes codertocat/hello-world#9', [9]],
    ['Fixes https://github.com/Codertocat/Hello-World/issues/10', [10]],
    ['* Fixes #5\n* Fixes #6', [5, 6]],
    ['Fixes #1\r\nCloses #2', [1, 2]],
  ])('%j links %j', (body, expected) => {
    expect(linkedIssues(body, OWN)).toEqual(expected);
  });

  it.each([
    ['no keyword', 'Related to #12, see #13'],
    ['a keyword inside a word', 'prefixes #3 and unfixed #4 and closest #5'],
    ['another repository', 'Fixes other/repo#9 and https://github.com/other/Hello-World/issues/3'],
    ['a PR template example in an HTML comment', '<!-- Write "Fixes #123" to link the issue -->\nAdds a flag.'],
    ['an HTML comment spanning lines', '<!--\nFixes #1\n-->'],
    ['an unclosed HTML comment', 'text\n<!-- Fixes #1'],
    ['a fenced block', '```\nFixes #12\n```'],
    ['an indented block', 'example:\n\n    Fixes #12'],
    ['inline code', 'write `Fixes #12` in the description'],
    ['a quote', '> Fixes #12\nnot this time'],
    ['not a number', 'Fixes #12abc and fixes #-3 and fixes #'],
    ['a keyword with no space', 'Fixes#12'],
    ['null', null],
    ['a number too large to be an issue', 'Fixes #99999999999999999999'],
  ])('links nothing: %s', (_name, body) => {
    expect(linkedIssues(body, OWN)).toEqual([]);
  });

  it(`checks at most ${MAX_LINKED_ISSUES} issues however many the description lists`, () => {
    const body = Array.from({ length: 50 }, (_, i) => `Fixes #${i + 1}`).join('\n');
    expect(linkedIssues(body, OWN)).toEqual([1, 2, 3, 4, 5]);
  });

  it('stays linear on a hostile description (100k keywords without a target)', () => {
    // CPU time, not wall time: a loaded machine does not inflate it. Linear takes a few ms; quadratic, minutes.
    const spent = cpuMsOf(() => expect(linkedIssues('fixes '.repeat(100_000), OWN)).toEqual([]));
    expect(spent).toBeLessThan(1000);
  });
});
