import { httpStatus, type Octokit } from '../octokit.js';
import { buildReproTest, reproTestPath, type ReproTestInput } from './build-repro-test.js';
import { inert } from './candidate-commit.js';
import { dropCandidateCommit } from './drop-candidate.js';

export interface UnmarkInput {
  owner: string;
  repo: string;
  issueNumber: number;
  issueUrl: string;
  script: string;
  markers: readonly string[];
  oracle?: ReproTestInput['oracle'];
  /** The fixing pull request and the commit the fix check passed at. */
  fix: { prNumber: number; prUrl: string; sha: string };
  /** The login RepGen's commits carry, when the caller knows it (open-repro-pr.ts `appLogin`). */
  appLogin?: string;
}

export type UnmarkResult =
  | { done: 'unmarked'; prUrl: string }
  | { done: 'no_repro_pr' }
  | { done: 'already_plain'; prUrl: string }
  /** The branch carried a generated candidate change: a commit (`sha`) put its files back, the test kept plain. */
  | { done: 'candidate_dropped'; prUrl: string; sha: string }
  /**
   * The branch carries a generated candidate change (commit `candidate`) that RepGen did not drop, and why; `foreign`:
   * a commit with the candidate subject that RepGen did not make, left as it is.
   */
  | { done: 'candidate_kept'; prUrl: string; candidate: string; why: string; foreign?: true };

/** What the fix check's report says of RepGen's regression-test PR after `unmarkReproTest`. Pure. */
export function unmarkNote(done: UnmarkResult): string {
  switch (done.done) {
    case 'no_repro_pr':
      return 'To keep the bug from coming back, add this test to the pull request (it passes now and fails if the bug returns).';
    case 'candidate_dropped':
      return (
        `RepGen's regression-test PR ${done.prUrl} now holds this test without its xfail marker, and the generated candidate ` +
        `change it carried is dropped (commit ${done.sha.slice(0, 12)}): this pull request fixes the bug. Merge it after this pull request.`
      );
    case 'candidate_kept':
      if (done.foreign)
        return (
          `RepGen left its regression-test PR ${done.prUrl} as it is: ${inert(done.why)}. Check what that commit changes ` +
          'there, then merge the test after this pull request.'
        );
      return (
        `RepGen's regression-test PR ${done.prUrl} still carries a generated candidate change (commit ` +
        `${done.candidate.slice(0, 12)}) that RepGen did not drop: ${inert(done.why)}. Revert that commit there, then ` +
        'merge the test after this pull request.'
      );
    default:
      return `RepGen's regression-test PR ${done.prUrl} now holds this test without its xfail marker; merge it after this pull request.`;
  }
}

/**
 * Once a fix is verified, RepGen's own regression-test PR (branch `repgen/issue-N`, opened by `/repgen pr`
 * or `pr: auto`) gets a commit that turns its `xfail(strict=True)` test into a plain test, and a comment
 * saying which PR fixed the bug and to merge the test after it. Only RepGen's own open PR is touched: a
 * contributor's branch never gets a bot commit (the check run shows them the plain test to add instead). When the
 * branch carries a generated candidate commit (candidate-commit.ts), its change is dropped in that commit instead
 * (drop-candidate.ts), so only the real fix makes the test pass.
 */
export async function unmarkReproTest(octokit: Octokit, input: UnmarkInput): Promise<UnmarkResult> {
  const { owner, repo, issueNumber } = input;
  const branch = `repgen/issue-${issueNumber}`;
  const { data: open } = await octokit.rest.pulls.list({ owner, repo, head: `${owner}:${branch}`, state: 'open' });
  const pr = open[0];
  if (!pr) return { done: 'no_repro_pr' };
  const path = reproTestPath(issueNumber);
  const fixedBy = `pull request #${input.fix.prNumber} at ${input.fix.sha.slice(0, 12)}`;
  const content = buildReproTest({
    issueNumber,
    issueUrl: input.issueUrl,
    script: input.script,
    markers: input.markers,
    fixedBy,
    ...(input.oracle ? { oracle: input.oracle } : {}),
  });
  const fix = `${input.fix.prUrl} (${input.fix.sha.slice(0, 12)})`;
  const appLogin = input.appLogin;
  const plain = { path, content };
  const drop = await dropCandidateCommit(octokit, {
    owner,
    repo,
    branch,
    issueNumber,
    plainTest: plain,
    fix: input.fix,
    ...(appLogin ? { appLogin } : {}),
  });
  if (drop) {
    const short = drop.candidate.slice(0, 12);
    await octokit.rest.issues.createComment({
      owner,
      repo,
      issue_number: pr.number,
      body:
        !drop.dropped && drop.foreign
          ? `RepGen ran the reproduction against ${fix} and it passed, but left this branch as it is: ${inert(drop.why)}. ` +
            `Check what commit ${short} changes before merging this PR, and merge it after ${input.fix.prUrl}.`
          : drop.dropped
            ? `RepGen ran the reproduction against ${fix} and it passed, so the real fix makes \`${path}\` pass. The generated ` +
              `candidate change of commit ${short} (not reviewed) is dropped in ${drop.sha.slice(0, 12)}, so it is not merged on ` +
              `top of the real fix; the test stays plain. Merge this PR after ${input.fix.prUrl}: before it, the test fails.`
            : `RepGen ran the reproduction against ${fix} and it passed, but this branch still carries the generated candidate ` +
              `change of commit ${short} (not reviewed), which RepGen did not drop: ${inert(drop.why)}. ` +
              `Revert ${short} before merging this PR, and merge it after ${input.fix.prUrl}.`,
    });
    return drop.dropped
      ? { done: 'candidate_dropped', prUrl: pr.html_url, sha: drop.sha }
      : {
          done: 'candidate_kept',
          prUrl: pr.html_url,
          candidate: drop.candidate,
          why: drop.why,
          ...(drop.foreign ? { foreign: true as const } : {}),
        };
  }
  let sha: string | undefined;
  let current = '';
  try {
    const { data } = await octokit.rest.repos.getContent({ owner, repo, path, ref: branch });
    if (!Array.isArray(data) && 'sha' in data) {
      sha = data.sha;
      current = 'content' in data && typeof data.content === 'string' ? Buffer.from(data.content, 'base64').toString() : '';
    }
  } catch (err) {
    if (httpStatus(err) !== 404) throw err;
  }
  if (sha && !/@pytest\.mark\.xfail\(strict=True/.test(current)) return { done: 'already_plain', prUrl: pr.html_url };
  await octokit.rest.repos.createOrUpdateFileContents({
    owner,
    repo,
    path,
    branch,
    message: `Regression test for #${issueNumber}: plain test, the fix in #${input.fix.prNumber} is verified`,
    content: Buffer.from(content).toString('base64'),
    ...(sha ? { sha } : {}),
  });
  await octokit.rest.issues.createComment({
    owner,
    repo,
    issue_number: pr.number,
    body:
      `RepGen ran the reproduction against ${input.fix.prUrl} (${input.fix.sha.slice(0, 12)}) and it ` +
      `passed, so \`${path}\` is now a plain test (the \`xfail\` marker is gone). Merge this PR after ` +
      `${input.fix.prUrl}: before it, the test fails because the bug is still there.`,
  });
  return { done: 'unmarked', prUrl: pr.html_url };
}
