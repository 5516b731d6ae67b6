import { neutralizeMentions } from '../../publish/neutralize.js';
import { httpStatus, type Octokit } from '../octokit.js';
import { buildReproTest, reproTestPath, type ReproTestInput } from './build-repro-test.js';
import {
  addCandidateCommit,
  CANDIDATE_FIXED_BY,
  candidateCommitSection,
  findCandidateCommit,
  plannedCandidate,
  withCandidateSection,
  type CandidateCommit,
  type CarriedCandidate,
  type PrCandidate,
} from './candidate-commit.js';

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
  /**
   * A fix-sensitive candidate fix the PR may carry (candidate-commit.ts `prCandidate`): a separate commit after the
   * test's, the test made plain in it. Absent: the test alone.
   */
  candidate?: PrCandidate;
  /**
   * The login RepGen's commits carry (`NAME[bot]`), when the caller knows it: a candidate commit must be by it. Absent:
   * any App's bot account, with a signature GitHub verified (candidate-trailer.ts).
   */
  appLogin?: string;
}

/** The PR, and what became of the candidate commit when a candidate was given. */
export interface OpenedReproPr {
  url: string;
  number: number;
  candidate?: CandidateCommit;
}

/** Where the lock goes beside the test: one file per issue, so two RepGen PRs never touch the same file. */
export function reproRequirementsPath(issueNumber: number): string {
  return `tests/repro/requirements-repro-issue-${issueNumber}.txt`;
}

/**
 * Branch `repgen/issue-N` from the tested commit, one file `tests/repro/test_issue_N.py`, one PR linking the
 * issue and the evidence; with a fix-sensitive candidate, its change as a separate commit after the test's.
 * Idempotent: an existing branch is reused and an open PR for it is returned, its body's candidate section (between
 * RepGen's markers) brought up to date. A branch that already carries a candidate commit is left as it is, whatever
 * this run's candidate or `prCandidateCommit`: neither the test written again (it would put the xfail marker back
 * over the change) nor a second commit; the result's `candidate` and the body say so.
 */
export async function openReproPr(octokit: Octokit, input: OpenReproPrInput): Promise<OpenedReproPr> {
  const { owner, repo, issueNumber } = input;
  const branch = `repgen/issue-${issueNumber}`;
  let created = true;
  try {
    await octokit.rest.git.createRef({ owner, repo, ref: `refs/heads/${branch}`, sha: input.baseSha });
  } catch (err) {
    if (httpStatus(err) !== 422) throw err; // 422: the branch exists already (an earlier /repgen pr)
    created = false;
  }
  // A branch made just now holds the tested commit's history only: no candidate commit of its own to look for.
  const stopAt = input.baseSha;
  const appLogin = input.appLogin;
  const carried = created
    ? null
    : await findCandidateCommit(octokit, { owner, repo, branch, issueNumber, stopAt, ...(appLogin ? { appLogin } : {}) });
  const lock = input.lock?.trim() ? input.lock : null;
  if (!carried) await writeTest(octokit, input, branch, lock);
  const candidate = carried
    ? await keptCandidate(octokit, input, carried)
    : input.candidate
      ? await addCandidate(octokit, input, branch)
      : undefined;
  const section = candidate
    ? candidateCommitSection(candidate, {
        runs: input.candidate?.runs ?? null,
        evidenceUrl: input.evidenceUrl,
        testPath: reproTestPath(issueNumber),
      })
    : null;
  const { data: open } = await octokit.rest.pulls.list({ owner, repo, head: `${owner}:${branch}`, state: 'open' });
  const existing = open[0];
  if (existing) {
    // The PR an earlier run opened: only RepGen's candidate section of its body is rewritten, never the rest.
    const body = section === null ? null : withCandidateSection(existing.body ?? '', section);
    if (body !== null && body !== existing.body) await octokit.rest.pulls.update({ owner, repo, pull_number: existing.number, body });
    return { url: existing.html_url, number: existing.number, ...(candidate ? { candidate } : {}) };
  }
  const path = reproTestPath(issueNumber);
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
    ...(section ? ['', withCandidateSection('', section)] : []),
  ].join('\n');
  const { data: pr } = await octokit.rest.pulls.create({
    owner,
    repo,
    head: branch,
    base: input.baseBranch,
    title: `Regression test for #${issueNumber} (RepGen)`,
    body,
  });
  return { url: pr.html_url, number: pr.number, ...(candidate ? { candidate } : {}) };
}

/** The regression test as `input` gives it: plain (`fixedBy`) for the candidate commit, else marked xfail. */
function reproTest(input: OpenReproPrInput, fixedBy?: string): string {
  return buildReproTest({
    issueNumber: input.issueNumber,
    issueUrl: input.issueUrl,
    script: input.script,
    markers: input.markers,
    ...(fixedBy ? { fixedBy } : {}),
    ...(input.oracle ? { oracle: input.oracle } : {}),
  });
}

/** The plain test the candidate commit carries (its docstring names the generated change). */
function plainTest(input: OpenReproPrInput): { path: string; content: string } {
  return { path: reproTestPath(input.issueNumber), content: reproTest(input, CANDIDATE_FIXED_BY) };
}

/**
 * The candidate commit an earlier run left on the branch, which this run leaves as it is: the same one this run would
 * add (its change on the same parent gives the same trailer), or `kept` saying why this run's wish (another change, or
 * none) was not carried out. A commit that only looks like one (not RepGen's) is left as it is too, and said so.
 */
async function keptCandidate(octokit: Octokit, input: OpenReproPrInput, carried: CarriedCandidate): Promise<CandidateCommit> {
  if (!carried.ours) return { added: false, why: carried.why, foreign: carried.sha };
  const c = input.candidate;
  if (c && (await sameChange(octokit, input, c, carried))) return { added: true, sha: carried.sha, already: true };
  const kept = c
    ? 'this run had another candidate change, and RepGen adds no second candidate commit'
    : 'this run asked for no candidate commit (prCandidateCommit is off, or no fix-sensitive candidate this time)';
  return { added: true, sha: carried.sha, already: true, kept };
}

/**
 * Whether this run's candidate, made on the carried commit's parent, gives the carried commit's trailer; a read GitHub
 * refuses counts as another change (the wording of the kept commit is all that rides on it).
 */
async function sameChange(
  octokit: Octokit,
  input: OpenReproPrInput,
  c: PrCandidate,
  carried: { parent: string; trailer: string },
): Promise<boolean> {
  const { owner, repo } = input;
  try {
    const { data: parent } = await octokit.rest.git.getCommit({ owner, repo, commit_sha: carried.parent });
    const planned = await plannedCandidate(octokit, { owner, repo }, parent.tree.sha, { candidate: c, plainTest: plainTest(input) });
    return planned.ok && planned.trailer === carried.trailer;
  } catch (err) {
    if (httpStatus(err) === null) throw err;
    return false;
  }
}

async function addCandidate(octokit: Octokit, input: OpenReproPrInput, branch: string): Promise<CandidateCommit> {
  const { owner, repo, issueNumber, evidenceUrl } = input;
  const candidate = input.candidate!;
  return addCandidateCommit(octokit, { owner, repo, branch, issueNumber, candidate, plainTest: plainTest(input), evidenceUrl });
}

/** The test commit (the test marked xfail), and the lock beside it when the run had one. */
async function writeTest(octokit: Octokit, input: OpenReproPrInput, branch: string, lock: string | null): Promise<void> {
  const { owner, repo, issueNumber } = input;
  await putFile(octokit, {
    owner,
    repo,
    branch,
    path: reproTestPath(issueNumber),
    content: reproTest(input),
    message: `Add regression test for issue #${issueNumber} (xfail until fixed)`,
  });
  if (lock)
    await putFile(octokit, {
      owner,
      repo,
      branch,
      path: reproRequirementsPath(issueNumber),
      content: requirementsText(input, lock),
      message: `Add the environment of the reproduction (${reproRequirementsPath(issueNumber)})`,
    });
}

function requirementsText(input: OpenReproPrInput, lock: string): string {
  return [
    `# The environment RepGen reproduced ${input.issueUrl} in (its uv lock).`,
    '# Packages the run took from its base interpreter are named in the issue comment; the project itself is not listed.',
    lock.trim(),
    '',
  ].join('\n');
}

/** Creates or updates one file on `branch` (GitHub wants the file's current blob sha to replace it). */
async function putFile(
  octokit: Octokit,
  f: { owner: string; repo: string; branch: string; path: string; content: string; message: string },
): Promise<void> {
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
    message: f.message,
    content: Buffer.from(f.content).toString('base64'),
    ...(sha ? { sha } : {}),
  });
}
