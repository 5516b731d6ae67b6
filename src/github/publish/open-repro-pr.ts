import { neutralizeMentions } from '../../publish/neutralize.js';
import { httpStatus, type Octokit } from '../octokit.js';
import { buildReproTest, reproTestPath } from './build-repro-test.js';

export interface OpenReproPrInput {
  owner: string;
  repo: string;
  issueNumber: number;
  issueUrl: string;
  /** The commit the bug was reproduced on: the branch starts there. */
  baseSha: string;
  /** Branch the PR targets (the ref that was tested when it is a branch; else the default branch). */
  baseBranch: string;
  script: string;
  markers: readonly string[];
  summary: string;
  evidenceUrl: string;
}

/**
 * Branch `repgen/issue-N` from the tested commit, one file `tests/repro/test_issue_N.py`, one PR linking the
 * issue and the evidence. Idempotent: an existing branch is reused and an open PR for it is returned.
 */
export async function openReproPr(octokit: Octokit, input: OpenReproPrInput): Promise<{ url: string; number: number }> {
  const { owner, repo, issueNumber } = input;
  const branch = `repgen/issue-${issueNumber}`;
  try {
    await octokit.rest.git.createRef({ owner, repo, ref: `refs/heads/${branch}`, sha: input.baseSha });
  } catch (err) {
    if (httpStatus(err) !== 422) throw err; // 422: the branch exists already (an earlier /repgen pr)
  }
  const path = reproTestPath(issueNumber);
  let sha: string | undefined;
  try {
    const { data } = await octokit.rest.repos.getContent({ owner, repo, path, ref: branch });
    if (!Array.isArray(data) && 'sha' in data) sha = data.sha;
  } catch (err) {
    if (httpStatus(err) !== 404) throw err;
  }
  const content = buildReproTest({ issueNumber, issueUrl: input.issueUrl, script: input.script, markers: input.markers });
  await octokit.rest.repos.createOrUpdateFileContents({
    owner,
    repo,
    path,
    branch,
    message: `Add regression test for issue #${issueNumber} (xfail until fixed)`,
    content: Buffer.from(content).toString('base64'),
    ...(sha ? { sha } : {}),
  });
  const { data: open } = await octokit.rest.pulls.list({ owner, repo, head: `${owner}:${branch}`, state: 'open' });
  const existing = open[0];
  if (existing) return { url: existing.html_url, number: existing.number };
  const body = [
    `Adds \`${path}\`, the reproduction of ${input.issueUrl} as a pytest test marked \`xfail(strict=True)\`.`,
    '',
    neutralizeMentions(input.summary),
    '',
    `Evidence: ${input.evidenceUrl}`,
    '',
    'The test fails (XFAIL) while the bug exists. When the bug is fixed it passes, strict xfail reports ' +
      'that as a failure, and the `xfail` marker should be removed so the test guards ' +
      'against a regression.',
  ].join('\n');
  const { data: pr } = await octokit.rest.pulls.create({
    owner,
    repo,
    head: branch,
    base: input.baseBranch,
    title: `Regression test for #${issueNumber} (RepGen)`,
    body,
  });
  return { url: pr.html_url, number: pr.number };
}
