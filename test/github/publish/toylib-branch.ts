import { candidateTrailer, treeChanges } from '../../../src/github/publish/candidate-trailer.js';
import type { CommitBy } from '../fake-git.js';
import type { FakeGithub } from '../fake-github.js';

/**
 * The toy project both regression-test PR suites (open-repro-pr, unmark-repro-test) put a branch on: its tested
 * commit, the test's branch and path, a file with a bug and the candidate diff that fixes it; and a push to the branch.
 */
export const BASE = 'a'.repeat(40);
export const BRANCH = 'repgen/issue-7';
export const TEST = 'tests/repro/test_issue_7.py';
export const STATS = 'def peak(xs):\n    """The largest value."""\n    return max(xs) * 1.1\n';
export const FIX = '--- a/toylib/stats.py\n+++ b/toylib/stats.py\n@@ -3 +3 @@\n-    return max(xs) * 1.1\n+    return max(xs)\n';

/**
 * A commit on BRANCH as `o.as` (a person's unsigned push unless told) makes it: `files` changed (null: removed). With
 * `o.trailer`, the message ends with the RepGen-Candidate trailer the commit's own content gives (candidate-trailer.ts).
 */
export function pushOnBranch(
  gh: FakeGithub,
  message: string,
  files: Record<string, string | null>,
  o: { as?: CommitBy; trailer?: boolean } = {},
): string {
  const head = gh.git.commit(BRANCH)!;
  const before = gh.git.trees.get(head.tree)!;
  const changes = new Map(
    Object.entries(files).map(([p, t]) => [p, t === null ? null : { mode: '100644', type: 'blob' as const, sha: gh.git.blob(t) }]),
  );
  const tree = gh.git.tree(before, changes);
  const text = o.trailer ? `${message}\n\n${candidateTrailer(treeChanges(before, gh.git.trees.get(tree)!))}` : message;
  const c = gh.git.makeCommit(tree, [head.sha], text, o.as);
  gh.git.refs.set(`refs/heads/${BRANCH}`, c.sha);
  return c.sha;
}
