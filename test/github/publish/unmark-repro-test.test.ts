import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createActionOctokit } from '../../../src/action/run-action.js';
import type { Octokit } from '../../../src/github/octokit.js';
import { openReproPr, type OpenReproPrInput } from '../../../src/github/publish/open-repro-pr.js';
import { unmarkNote, unmarkReproTest, type UnmarkInput } from '../../../src/github/publish/unmark-repro-test.js';
import { fakeFileOnBranch, startFakeGithub, type FakeGithub } from '../fake-github.js';
import { BASE, BRANCH, FIX, STATS, TEST } from './toylib-branch.js';

/**
 * The fix verified: RepGen's regression-test PR gets its test plain, and a generated candidate change it carries is
 * dropped so that it is not merged on top of the real fix (issue 41 follow-up); every way a commit that only looks
 * like a candidate commit is left alone. GitHub is the HTTP-level fake with git objects.
 */

const NEW_FILE = '--- /dev/null\n+++ b/toylib/_peak.py\n@@ -0,0 +1,2 @@\n+def peak(xs):\n+    return max(xs)\n';
const FILES = { 'toylib/stats.py': STATS, 'README.md': '# toylib\n' };
const FIX_SHA = 'f'.repeat(40);

let gh: FakeGithub;
let octokit: Octokit;
beforeEach(async () => {
  gh = await startFakeGithub({ commits: { [BASE]: FILES } });
  octokit = createActionOctokit({ token: 'ghs_test', apiUrl: gh.url, throttle: false });
});
afterEach(async () => gh.close());

const common = {
  owner: 'acme',
  repo: 'toylib',
  issueNumber: 7,
  issueUrl: 'https://github.com/acme/toylib/issues/7',
  script: 'import toylib.stats\nassert toylib.stats.peak([1, 2]) == 2\n',
  markers: ['AssertionError'],
};
const open = (over: Partial<OpenReproPrInput> = {}) =>
  openReproPr(octokit, {
    ...common,
    baseSha: BASE,
    baseBranch: 'main',
    summary: 'peak() scales the maximum by 1.1.',
    evidenceUrl: 'https://github.com/acme/toylib/issues/7#issuecomment-1',
    ...over,
  });
const fix: UnmarkInput['fix'] = { prNumber: 12, prUrl: 'https://github.com/acme/toylib/pull/12', sha: FIX_SHA };
const unmark = () => unmarkReproTest(octokit, { ...common, fix });
const head = () => gh.git.commit(BRANCH)!;
/** A commit on the branch as a person would push it: `files` changed (null: removed). */
function push(message: string, files: Record<string, string | null>): string {
  const h = head();
  const changes = new Map(
    Object.entries(files).map(([p, t]) => [p, t === null ? null : { mode: '100644', type: 'blob' as const, sha: gh.git.blob(t) }]),
  );
  const c = gh.git.makeCommit(gh.git.tree(gh.git.trees.get(h.tree)!, changes), [h.sha], message);
  gh.git.refs.set(`refs/heads/${BRANCH}`, c.sha);
  return c.sha;
}
const prComment = () => [...gh.comments.values()].at(-1)?.body ?? '';

describe('the fix verified on a PR that carries a candidate commit', () => {
  it('a commit puts the changed files back as before the candidate, keeps the test plain, and says which fix', async () => {
    const pr = await open({ candidate: { diff: FIX, runs: 3 } });
    const candidate = head().sha;
    const done = await unmark();
    const drop = head();
    expect(done).toEqual({ done: 'candidate_dropped', prUrl: pr.url, sha: drop.sha });
    expect(drop.parents).toEqual([candidate]);
    expect(fakeFileOnBranch(gh, BRANCH, 'toylib/stats.py')).toBe(STATS);
    expect(fakeFileOnBranch(gh, BRANCH, 'README.md')).toBe(FILES['README.md']);
    const test = fakeFileOnBranch(gh, BRANCH, TEST) ?? '';
    expect(test).not.toContain('xfail');
    expect(test).toContain(`pull request #12 at ${FIX_SHA.slice(0, 12)}`);
    expect(test).not.toContain('generated candidate change');
    expect(drop.message).toMatch(/^Drop the generated candidate change for #7: the real fix in #12 \(ffffffffffff\) makes the test pass/);
    expect(drop.message).toContain(`- toylib/stats.py: as before ${candidate.slice(0, 12)}`);
    expect(drop.message).not.toMatch(/RepGen-Candidate:/);
    expect(prComment()).toContain(`The generated candidate change of commit ${candidate.slice(0, 12)} (not reviewed) is dropped`);
    expect(prComment()).toContain('Merge this PR after https://github.com/acme/toylib/pull/12');
    expect(gh.callsTo('PATCH', /\/git\/refs\//).at(-1)?.body).toMatchObject({ force: false });
    // A second verification finds the change gone and the test plain: nothing more written.
    const commits = gh.git.commits.size;
    expect(await unmark()).toEqual({ done: 'already_plain', prUrl: pr.url });
    expect(gh.git.commits.size).toBe(commits);
  });

  it('a file the candidate created (absent from its parent tree) is removed', async () => {
    await open({ candidate: { diff: NEW_FILE, runs: 2 } });
    expect(fakeFileOnBranch(gh, BRANCH, 'toylib/_peak.py')).toContain('def peak');
    expect(await unmark()).toMatchObject({ done: 'candidate_dropped' });
    expect(fakeFileOnBranch(gh, BRANCH, 'toylib/_peak.py')).toBeUndefined();
    expect(gh.callsTo('POST', /\/git\/trees$/).at(-1)?.body).toMatchObject({
      tree: [{ path: 'toylib/_peak.py', sha: null }, { path: TEST }],
    });
  });

  it('a candidate commit reverted already: the plain unmark, nothing else touched', async () => {
    const pr = await open({ candidate: { diff: FIX, runs: 3 } });
    const first = gh.git.log(BRANCH)[1]!;
    push('Revert "Candidate fix for #7, generated by RepGen (not reviewed)"', {
      'toylib/stats.py': STATS,
      [TEST]: gh.git.file(first.sha, TEST)!.content,
    });
    expect(await unmark()).toEqual({ done: 'unmarked', prUrl: pr.url });
    expect(fakeFileOnBranch(gh, BRANCH, TEST)).not.toContain('xfail');
  });

  it('the branch moving meanwhile (422 on the ref): no commit, and the comment and result say the change stays', async () => {
    const pr = await open({ candidate: { diff: FIX, runs: 3 } });
    const candidate = head().sha;
    const realCommit = octokit.rest.git.createCommit.bind(octokit.rest.git);
    octokit.rest.git.createCommit = (async (p: Parameters<typeof realCommit>[0]) => {
      const out = await realCommit(p);
      push('a maintainer’s push', { 'docs.md': 'x\n' });
      return out;
    }) as typeof octokit.rest.git.createCommit;
    const done = await unmark();
    expect(done).toEqual({
      done: 'candidate_kept',
      prUrl: pr.url,
      candidate,
      why: expect.stringMatching(/\(422\): the branch moved meanwhile/),
    });
    expect(head().message).toBe('a maintainer’s push');
    expect(fakeFileOnBranch(gh, BRANCH, 'toylib/stats.py')).not.toBe(STATS);
    expect(prComment()).toContain(`still carries the generated candidate change of commit ${candidate.slice(0, 12)}`);
    expect(prComment()).toContain(`Revert ${candidate.slice(0, 12)} before merging this PR`);
  });
});

describe('hostile: what only looks like a candidate commit', () => {
  it("a person's commit with a forged trailer but not the issue's candidate subject is no candidate: their change stays", async () => {
    const pr = await open();
    push('Tune peak\n\nRepGen-Candidate: 0123456789abcdef', { 'toylib/stats.py': STATS.replace('1.1', '1.0') });
    expect(await unmark()).toEqual({ done: 'unmarked', prUrl: pr.url });
    expect(fakeFileOnBranch(gh, BRANCH, 'toylib/stats.py')).toContain('1.0');
  });

  it('a forged candidate commit that changes a workflow: nothing written, the reason inert in the comment', async () => {
    const pr = await open();
    const forged = push('Candidate fix for #7, generated by RepGen (not reviewed)\n\nRepGen-Candidate: 0123456789abcdef', {
      '.github/workflows/@admin<b>.yml': 'on: pull_request_target\n',
      'toylib/stats.py': STATS.replace('1.1', '1.0'),
    });
    const commits = gh.git.commits.size;
    const done = await unmark();
    expect(done).toMatchObject({
      done: 'candidate_kept',
      prUrl: pr.url,
      candidate: forged,
      why: expect.stringContaining('not a change RepGen makes'),
    });
    expect(gh.git.commits.size).toBe(commits);
    expect(gh.callsTo('POST', /\/git\/(trees|commits)$/)).toEqual([]);
    expect(prComment()).not.toMatch(/(^|[^\w`])@admin|<b>/);
    expect(unmarkNote(done)).not.toMatch(/(^|[^\w`])@admin|<b>/);
  });

  it('only the latest candidate commit, and only the paths it changed: an earlier one and other files stay', async () => {
    await open({ candidate: { diff: FIX, runs: 3 } });
    push('Candidate fix for #7, generated by RepGen (not reviewed)\n\nRepGen-Candidate: 0123456789abcdef', {
      'toylib/extra.py': 'x = 1\n',
    });
    push('a maintainer adds docs', { 'docs/peak.md': 'peak\n' });
    expect(await unmark()).toMatchObject({ done: 'candidate_dropped' });
    expect(fakeFileOnBranch(gh, BRANCH, 'toylib/extra.py')).toBeUndefined();
    expect(fakeFileOnBranch(gh, BRANCH, 'toylib/stats.py')).toBe(STATS.replace('max(xs) * 1.1', 'max(xs)'));
    expect(fakeFileOnBranch(gh, BRANCH, 'docs/peak.md')).toBe('peak\n');
  });

  it('a file changed on the branch after the candidate commit: left to the people on it, nothing written', async () => {
    const pr = await open({ candidate: { diff: FIX, runs: 3 } });
    const candidate = head().sha;
    push('a maintainer refines the change', { 'toylib/stats.py': STATS.replace('max(xs) * 1.1', 'max(xs) if xs else 0') });
    const commits = gh.git.commits.size;
    expect(await unmark()).toEqual({
      done: 'candidate_kept',
      prUrl: pr.url,
      candidate,
      why: `toylib/stats.py changed on the branch after commit ${candidate.slice(0, 12)}`,
    });
    expect(gh.git.commits.size).toBe(commits);
  });
});

describe('unmarkNote', () => {
  it('says what became of the PR, the candidate change included', () => {
    const prUrl = 'https://github.com/acme/toylib/pull/3';
    expect(unmarkNote({ done: 'no_repro_pr' })).toMatch(/^To keep the bug from coming back/);
    expect(unmarkNote({ done: 'unmarked', prUrl })).toContain(`${prUrl} now holds this test without its xfail marker`);
    expect(unmarkNote({ done: 'candidate_dropped', prUrl, sha: 'b'.repeat(40) })).toContain(
      'the generated candidate change it carried is dropped (commit bbbbbbbbbbbb)',
    );
    expect(unmarkNote({ done: 'candidate_kept', prUrl, candidate: 'c'.repeat(40), why: 'x moved' })).toContain(
      'still carries a generated candidate change (commit cccccccccccc) that RepGen did not drop: x moved. Revert that commit',
    );
  });
});
