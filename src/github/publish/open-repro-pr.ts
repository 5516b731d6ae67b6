import { neutralizeMentions } from '../../publish/neutralize.js';
import { httpStatus, type Octokit } from '../octokit.js';
import { buildReproTest, reproTestPath, type ReproTestInput } from './build-repro-test.js';

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
  /** A behavioural bug's oracle: the assertion the test fails with while the bug is there (build-repro-test.ts). */
  oracle?: ReproTestInput['oracle'];
  /** The env's lock (`name==version` lines) when the run had one: added beside the test to recreate it. */
  lock?: string;
}

/** Where the lock goes beside the test: one file per issue, so two RepGen PRs never touch the same file. */
export function reproRequirementsPath(issueNumber: number): string {
  return `tests/repro/requirements-repro-issue-${issueNumber}.txt`;
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
  const content = buildReproTest({
    issueNumber,
    issueUrl: input.issueUrl,
    script: input.script,
    markers: input.markers,
    ...(input.oracle ? { oracle: input.oracle } : {}),
  });
  await octokit.rest.repos.createOrUpdateFileContents({
    owner,
    repo,
    path,
    branch,
    message: `Add regression test for issue #${issueNumber} (xfail until fixed)`,
    content: Buffer.from(content).toString('base64'),
    ...(sha ? { sha } : {}),
  });
  const lock = input.lock?.trim() ? input.lock : null;
  if (lock)
    await putFile(octokit, { owner, repo, branch, path: reproRequirementsPath(issueNumber), content: requirementsText(input, lock) });
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
    ...(lock
      ? [
          `The environment the test ran in: \`pip install -r ${reproRequirementsPath(issueNumber)}\`, with the project itself on ` +
            '`PYTHONPATH` (the lock RepGen built it from).',
          '',
        ]
      : []),
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

function requirementsText(input: OpenReproPrInput, lock: string): string {
  return [
    `# The environment RepGen reproduced ${input.issueUrl} in (its uv lock).`,
    '# Packages the run took from its base interpreter are named in the issue comment; the project itself is not listed.',
    lock.trim(),
    '',
  ].join('\n');
}

/** Creates or updates one file on `branch`. */
async function putFile(octokit: Octokit, f: { owner: string; repo: string; branch: string; path: string; content: string }): Promise<void> {
  let sha: string | undefined;
  try {
    const { data } = await octokit.rest.repos.getContent({ owner: f.owner, repo: f.repo, path: f.path, ref: f.branch });
    if (!Array.isArray(data) && 'sha' in data) sha = data.sha;
  } catch (err) {
    if (httpStatus(err) !== 404) throw err;
  }
  await octokit.rest.repos.createOrUpdateFileContents({
    owner: f.owner,
    repo: f.repo,
    path: f.path,
    branch: f.branch,
    message: `Add the environment of the reproduction (${f.path})`,
    content: Buffer.from(f.content).toString('base64'),
    ...(sha ? { sha } : {}),
  });
}
