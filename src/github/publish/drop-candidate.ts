// Once the real fix is verified, the generated change of the regression-test PR's candidate commit (candidate-commit.ts)
// must not be merged on top of it: a commit on the branch puts every file the candidate commit changed back as it was
// in that commit's parent, and keeps the regression test plain. Only the latest candidate commit of the issue counts,
// and only the paths it changed (its parent's tree against its own), each still as the candidate left it: a path a
// candidate commit never changes, or one changed since, leaves the branch to the people on it.
import { refusedPath } from '../../pipeline/stages/candidate-fix/path-policy.js';
import { httpStatus, type Octokit } from '../octokit.js';
import { findCandidateCommit } from './candidate-commit.js';

export interface DropCandidateInput {
  owner: string;
  repo: string;
  branch: string;
  issueNumber: number;
  /** The regression test, plain, naming the real fix: written in the same commit. */
  plainTest: { path: string; content: string };
  /** The fixing pull request and the commit the fix check passed at. */
  fix: { prNumber: number; prUrl: string; sha: string };
  /** The login RepGen's commits carry, when the caller knows it (open-repro-pr.ts `appLogin`). */
  appLogin?: string;
}

/** The dropping commit and the paths it put back; or why nothing was written; null: no candidate change on the branch. */
export type DropCandidate =
  { dropped: true; sha: string; candidate: string; paths: string[] } | { dropped: false; candidate: string; why: string; foreign?: true };

type Entry = { mode: string; type: string; sha: string };
const same = (a: Entry | undefined, b: Entry | undefined): boolean => (a && b ? a.sha === b.sha && a.mode === b.mode : a === b);
const regular = (e: Entry | undefined): boolean => !e || (e.type === 'blob' && (e.mode === '100644' || e.mode === '100755'));

/**
 * Drops the branch's candidate change (see the file's comment): null when the branch carries no candidate commit of
 * the issue, or its change is gone already (reverted); `dropped: false` with why when RepGen leaves it (`foreign`: a
 * commit with the candidate subject that is not RepGen's; a path it would not touch, a file changed since, GitHub
 * refusing a step such as the branch moving meanwhile): nothing written.
 */
export async function dropCandidateCommit(octokit: Octokit, input: DropCandidateInput): Promise<DropCandidate | null> {
  const { owner, repo, branch, issueNumber } = input;
  const appLogin = input.appLogin;
  const carried = await findCandidateCommit(octokit, { owner, repo, branch, issueNumber, ...(appLogin ? { appLogin } : {}) });
  if (!carried) return null;
  // Only RepGen's own commit is put back: one that only looks like it (candidate-trailer.ts) is left to its author.
  if (!carried.ours) return { dropped: false, candidate: carried.sha, why: carried.why, foreign: true };
  const candidate = carried.sha;
  const short = candidate.slice(0, 12);
  try {
    const { data: ref } = await octokit.rest.git.getRef({ owner, repo, ref: `heads/${branch}` });
    const [parentTree, candidateTree, head] = await Promise.all([
      treeOf(octokit, { owner, repo }, carried.parent),
      treeOf(octokit, { owner, repo }, candidate),
      treeOf(octokit, { owner, repo }, ref.object.sha),
    ]);
    if (!parentTree.files || !candidateTree.files || !head.files)
      return { dropped: false, candidate, why: 'the trees are too large to read whole' };
    const before = parentTree.files;
    const after = candidateTree.files;
    const now = head.files;
    const testName = input.plainTest.path.split('/').at(-1)!;
    const changed = [...new Set([...before.keys(), ...after.keys()])]
      .filter((p) => p !== input.plainTest.path && !same(before.get(p), after.get(p)))
      .sort();
    for (const p of changed) {
      const why = regular(before.get(p)) && regular(after.get(p)) ? refusedPath(p, ['repro.py', testName]) : 'is not a regular file';
      if (why) return { dropped: false, candidate, why: `commit ${short} changes ${p}, which ${why}: not a change RepGen makes` };
    }
    const put = changed.filter((p) => !same(now.get(p), before.get(p)));
    const moved = put.find((p) => !same(now.get(p), after.get(p)));
    if (moved) return { dropped: false, candidate, why: `${moved} changed on the branch after commit ${short}` };
    if (!put.length) return null;
    const tree = [
      ...put.map((path) => {
        const e = before.get(path);
        // A file the candidate created goes: a null sha removes the path.
        return e
          ? { path, mode: e.mode as '100644' | '100755', type: 'blob' as const, sha: e.sha }
          : { path, mode: '100644' as const, type: 'blob' as const, sha: null };
      }),
      { path: input.plainTest.path, mode: '100644' as const, type: 'blob' as const, content: input.plainTest.content },
    ];
    const { data: made } = await octokit.rest.git.createTree({ owner, repo, base_tree: head.tree, tree });
    const message = dropMessage(input, short, put);
    const { data: commit } = await octokit.rest.git.createCommit({ owner, repo, message, tree: made.sha, parents: [ref.object.sha] });
    await octokit.rest.git.updateRef({ owner, repo, ref: `heads/${branch}`, sha: commit.sha, force: false });
    return { dropped: true, sha: commit.sha, candidate, paths: put };
  } catch (err) {
    const status = httpStatus(err);
    if (status === null) throw err;
    const moved = status === 422 ? ': the branch moved meanwhile' : '';
    return { dropped: false, candidate, why: `GitHub refused a step of the commit (${status})${moved}` };
  }
}

/** A commit's tree sha and its files (path → entry); files null when GitHub truncated the listing. */
async function treeOf(
  octokit: Octokit,
  at: { owner: string; repo: string },
  sha: string,
): Promise<{ tree: string; files: Map<string, Entry> | null }> {
  const { data: commit } = await octokit.rest.git.getCommit({ ...at, commit_sha: sha });
  const { data } = await octokit.rest.git.getTree({ ...at, tree_sha: commit.tree.sha, recursive: 'true' });
  if (data.truncated) return { tree: commit.tree.sha, files: null };
  const files = new Map<string, Entry>();
  for (const e of data.tree)
    if (e.path && e.sha && e.type !== 'tree') files.set(e.path, { mode: e.mode ?? '', type: e.type ?? '', sha: e.sha });
  return { tree: commit.tree.sha, files };
}

function dropMessage(input: DropCandidateInput, short: string, paths: string[]): string {
  const n = input.issueNumber;
  const fix = `#${input.fix.prNumber} (${input.fix.sha.slice(0, 12)})`;
  return [
    `Drop the generated candidate change for #${n}: the real fix in ${fix} makes the test pass`,
    '',
    `RepGen ran the reproduction of #${n} against ${input.fix.prUrl} at ${input.fix.sha.slice(0, 12)} and it passed.`,
    `The generated change of commit ${short} (not reviewed) is dropped, so it is not merged on top of the real fix:`,
    ...paths.map((p) => `- ${p}: as before ${short}`),
    `${input.plainTest.path} stays a plain regression test; merge it after ${input.fix.prUrl}.`,
  ].join('\n');
}
