// The regression-test PR's candidate commit (issue 41 item 3): a fix-sensitive candidate change goes on the PR's branch
// as a separate commit after the test's, with the test turned plain in the same commit, so a maintainer can take the
// test alone by reverting one commit. The diff is a model's answer, so it is held to the candidate step's own rules
// (parse-diff.ts's limits, path-policy.ts's paths, apply-hunks.ts's strict apply) against the files at the branch,
// read and written through the git data API; anything that does not pass leaves the PR with the test alone.
import { createHash } from 'node:crypto';
import { applyFilePatch } from '../../pipeline/stages/candidate-fix/apply-hunks.js';
import { parseUnifiedDiff, type FilePatch } from '../../pipeline/stages/candidate-fix/parse-diff.js';
import { refusedPath } from '../../pipeline/stages/candidate-fix/path-policy.js';
import type { ReproOutcome } from '../../pipeline/types.js';
import { neutralizeMentions } from '../../publish/neutralize.js';
import { httpStatus, type Octokit } from '../octokit.js';

/** A fix-sensitive candidate the PR may carry. */
export interface PrCandidate {
  diff: string;
  /** Runs of the reproduction with the change, each of which passed; null when the record does not say. */
  runs: number | null;
}

/** What became of the candidate commit: on the branch (`already`: an earlier run put it there), or why not. */
export type CandidateCommit = { added: true; sha: string; already: boolean } | { added: false; why: string };

/** The words after the PR's link in a comment when the PR carries the candidate commit. Pure. */
export function withCandidate(pr: { candidate?: CandidateCommit }): string {
  return pr.candidate?.added ? ', and a generated candidate fix (not reviewed) with which it passes, as a separate commit' : '';
}

/** The largest file the commit may change (the scratch copy's bound). */
const MAX_FILE_BYTES = 2_000_000;
/** Commits of the branch looked at for an earlier candidate commit. */
const LOOK_BACK = 30;
const TRAILER = /^RepGen-Candidate: ([0-9a-f]{16})$/m;

/** The words the plain test's docstring gives for what it passed against (build-repro-test.ts `fixedBy`). */
export const CANDIDATE_FIXED_BY = 'the generated candidate change committed with this test (not reviewed)';

/**
 * The outcome's candidate when the PR may carry it: fix-sensitive, with its diff, and `on` (the repository's
 * `suggestFix` and `prCandidateCommit`). Pure.
 */
export function prCandidate(outcome: Pick<ReproOutcome, 'candidateFix'>, on: boolean): PrCandidate | undefined {
  const c = outcome.candidateFix;
  if (!on || !c || c.answer !== 'yes' || c.result !== 'fix_sensitive' || !c.diff) return undefined;
  return { diff: c.diff, runs: c.runs ?? null };
}

/** The trailer that names the change and the test the commit carries: the same trailer on the branch is the same commit. Pure. */
export function candidateTrailer(diff: string, test: string): string {
  return `RepGen-Candidate: ${createHash('sha256').update(diff).update('\0').update(test).digest('hex').slice(0, 16)}`;
}

/**
 * The diff's file patches, or why it is refused: over the candidate step's limits, not a plain text edit, or a path
 * the candidate step refuses (tests, CI, build and setup files, hidden files, anything outside the tree) or one of
 * the PR's own files (`protectedNames`: the regression test's name). Pure.
 */
export function planCandidateCommit(
  diff: string,
  protectedNames: readonly string[],
): { ok: true; files: FilePatch[] } | { ok: false; why: string } {
  const parsed = parseUnifiedDiff(diff);
  if (!parsed.ok) return { ok: false, why: parsed.why };
  for (const f of parsed.files) {
    const why = refusedPath(f.path, ['repro.py', ...protectedNames]);
    if (why) return { ok: false, why: `it changes ${f.path}, which ${why}` };
  }
  return { ok: true, files: parsed.files };
}

/** The latest RepGen candidate commit among the branch's last commits, with its trailer; null when none. */
export async function findCandidateCommit(
  octokit: Octokit,
  at: { owner: string; repo: string; branch: string },
): Promise<{ sha: string; trailer: string } | null> {
  const { data } = await octokit.rest.repos.listCommits({ owner: at.owner, repo: at.repo, sha: at.branch, per_page: LOOK_BACK });
  for (const c of data) {
    const m = TRAILER.exec(c.commit.message);
    if (m) return { sha: c.sha, trailer: m[0] };
  }
  return null;
}

export interface CandidateCommitInput {
  owner: string;
  repo: string;
  branch: string;
  issueNumber: number;
  candidate: PrCandidate;
  /** The regression test without its xfail marker, written in the same commit. */
  plainTest: { path: string; content: string };
  evidenceUrl: string;
}

/**
 * Adds the candidate commit on top of `branch`: each file the diff names is read at the branch, patched, and written
 * with the plain test in one tree, one commit, and a fast-forward of the branch. A refusal, a diff that does not apply
 * to the branch's files, or GitHub refusing a step is returned as why, with nothing written to the branch.
 */
export async function addCandidateCommit(octokit: Octokit, input: CandidateCommitInput): Promise<CandidateCommit> {
  const plan = planCandidateCommit(input.candidate.diff, [input.plainTest.path.split('/').at(-1)!]);
  if (!plan.ok) return { added: false, why: plan.why };
  const { owner, repo } = input;
  const ref = `heads/${input.branch}`;
  try {
    const { data: head } = await octokit.rest.git.getRef({ owner, repo, ref });
    const { data: commit } = await octokit.rest.git.getCommit({ owner, repo, commit_sha: head.object.sha });
    const entries: { path: string; mode: '100644' | '100755'; type: 'blob'; content: string }[] = [];
    for (const patch of plan.files) {
      const read = await readAtTree(octokit, { owner, repo }, commit.tree.sha, patch.path);
      if (!read.ok) return { added: false, why: read.why };
      const applied = applyFilePatch(read.text, patch);
      if (!applied.ok) return { added: false, why: `it does not apply to the branch: ${applied.why}` };
      entries.push({ path: patch.path, mode: read.mode, type: 'blob', content: applied.text });
    }
    entries.push({ path: input.plainTest.path, mode: '100644', type: 'blob', content: input.plainTest.content });
    const { data: tree } = await octokit.rest.git.createTree({ owner, repo, base_tree: commit.tree.sha, tree: entries });
    const message = candidateCommitMessage(input);
    const { data: made } = await octokit.rest.git.createCommit({ owner, repo, message, tree: tree.sha, parents: [head.object.sha] });
    await octokit.rest.git.updateRef({ owner, repo, ref, sha: made.sha, force: false });
    return { added: true, sha: made.sha, already: false };
  } catch (err) {
    const status = httpStatus(err);
    if (status === null) throw err;
    // 422 on the ref: someone pushed to the branch meanwhile (not a fast forward); the PR keeps the test alone.
    return { added: false, why: `GitHub refused a step of the commit (${status})` };
  }
}

function candidateCommitMessage(input: CandidateCommitInput): string {
  const n = input.issueNumber;
  const runs = input.candidate.runs ? `in each of its ${input.candidate.runs} runs` : 'in every run';
  return [
    `Candidate fix for #${n}, generated by RepGen (not reviewed)`,
    '',
    `A model generated this change to the project; nobody has reviewed it. The reproduction of #${n} passes with it`,
    `${runs} and fails without it (fix-sensitive). This commit also makes ${input.plainTest.path}`,
    'a plain regression test (no xfail marker). Revert this commit to drop the change: the test is then',
    'marked xfail(strict=True) again.',
    '',
    `Evidence: ${input.evidenceUrl}`,
    '',
    candidateTrailer(input.candidate.diff, input.plainTest.content),
  ].join('\n');
}

type Read = { ok: true; text: string | null; mode: '100644' | '100755' } | { ok: false; why: string };

/** `path`'s text in the tree `root` (null when absent), walked folder by folder; a link, a submodule or a big or binary file is refused. */
async function readAtTree(octokit: Octokit, at: { owner: string; repo: string }, root: string, path: string): Promise<Read> {
  const parts = path.split('/');
  let tree = root;
  for (const [i, part] of parts.entries()) {
    const { data } = await octokit.rest.git.getTree({ ...at, tree_sha: tree });
    const e = data.tree.find((t) => t.path === part);
    if (!e?.sha)
      return data.truncated ? { ok: false, why: `${path} could not be read at the branch` } : { ok: true, text: null, mode: '100644' };
    if (i < parts.length - 1) {
      if (e.type !== 'tree') return { ok: false, why: `${path} is not inside a folder at the branch (${parts.slice(0, i + 1).join('/')})` };
      tree = e.sha;
      continue;
    }
    if (e.type !== 'blob' || (e.mode !== '100644' && e.mode !== '100755'))
      return { ok: false, why: `${path} is not a regular file at the branch (mode ${e.mode ?? '?'})` };
    if ((e.size ?? 0) > MAX_FILE_BYTES) return { ok: false, why: `${path} is larger than ${MAX_FILE_BYTES} bytes at the branch` };
    const { data: blob } = await octokit.rest.git.getBlob({ ...at, file_sha: e.sha });
    const bytes = Buffer.from(blob.content, blob.encoding === 'base64' ? 'base64' : 'utf8');
    if (bytes.length > MAX_FILE_BYTES) return { ok: false, why: `${path} is larger than ${MAX_FILE_BYTES} bytes at the branch` };
    try {
      return { ok: true, text: new TextDecoder('utf-8', { fatal: true }).decode(bytes), mode: e.mode };
    } catch {
      return { ok: false, why: `${path} is not UTF-8 text at the branch` };
    }
  }
  return { ok: false, why: `${path} names no file` };
}

/**
 * The PR body's section on the candidate commit: what it is (generated, not reviewed), how it was checked, and how to
 * drop it; or, when none was added, one line saying why. The reason may quote the model's paths: it is made inert. Pure.
 */
export function candidateCommitSection(c: CandidateCommit, d: { runs: number | null; evidenceUrl: string; testPath: string }): string {
  if (!c.added) {
    const why = neutralizeMentions(
      c.why
        .replace(/[\0-\x1f\x7f`<>]/g, ' ')
        .replace(/\s+/g, ' ')
        .slice(0, 300),
    );
    return (
      '**No candidate commit.** RepGen had a generated change with which the reproduction passes, but did not add it to ' +
      `this PR: ${why}. The change is shown, folded, in the issue's RepGen comment.`
    );
  }
  const runs = d.runs ? `in each of its ${d.runs} runs` : 'in every run';
  return [
    '### A candidate fix, in a separate commit (generated, not reviewed)',
    '',
    `The last commit, ${c.sha}, is a change to the project that a model generated; **nobody has reviewed it**. RepGen ` +
      `checked that the reproduction passes with it ${runs} and fails without it (fix-sensitive; evidence: ${d.evidenceUrl}). ` +
      `The same commit makes \`${d.testPath}\` a plain regression test (no \`xfail\` marker), since the test passes with the change.`,
    '',
    `To keep the test and drop the change: \`git revert ${c.sha}\` on this branch (or drop the commit and force-push). ` +
      'The test is then marked `xfail(strict=True)` again, as the first commit has it.',
  ].join('\n');
}
