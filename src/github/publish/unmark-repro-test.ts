import { httpStatus, type Octokit } from '../octokit.js';
import { buildReproTest, reproTestPath, type ReproTestInput } from './build-repro-test.js';

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
}

export type UnmarkResult = { done: 'unmarked'; prUrl: string } | { done: 'no_repro_pr' } | { done: 'already_plain'; prUrl: string };

/**
 * Once a fix is verified, RepGen's own regression-test PR (branch `repgen/issue-N`, opened by `/repgen pr`
 * or `pr: auto`) gets a commit that turns its `xfail(strict=True)` test into a plain test, and a comment
 * saying which PR fixed the bug and to merge the test after it. Only RepGen's own open PR is touched: a
 * contributor's branch never gets a bot commit (the check run shows them the plain test to add instead).
 */
export async function unmarkReproTest(octokit: Octokit, input: UnmarkInput): Promise<UnmarkResult> {
  const { owner, repo, issueNumber } = input;
  const branch = `repgen/issue-${issueNumber}`;
  const { data: open } = await octokit.rest.pulls.list({ owner, repo, head: `${owner}:${branch}`, state: 'open' });
  const pr = open[0];
  if (!pr) return { done: 'no_repro_pr' };
  const path = reproTestPath(issueNumber);
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
  const fixedBy = `pull request #${input.fix.prNumber} at ${input.fix.sha.slice(0, 12)}`;
  const content = buildReproTest({
    issueNumber,
    issueUrl: input.issueUrl,
    script: input.script,
    markers: input.markers,
    fixedBy,
    ...(input.oracle ? { oracle: input.oracle } : {}),
  });
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
