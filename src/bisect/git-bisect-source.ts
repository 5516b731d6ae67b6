import type { BisectCommit } from './plan-bisect.js';
import type { BisectSource } from './types.js';
import { checkoutAt } from '../workspace/checkout.js';
import { WorkspaceError } from '../workspace/errors.js';
import { runGit } from '../host/git.js';

/** Most first-parent commits a bisection searches; a wider range is cut to its newest commits, and said. */
export const MAX_BISECT_COMMITS = 5000;

/**
 * A bisection's repository side for a local git repository (a clone or a mirror): the first-parent commits
 * between GOOD and BAD (merge commits name the PR), checkouts from the per-SHA cache, a commit's changed files.
 */
export function gitBisectSource(input: {
  repoDir: string;
  /** `owner/name`, the checkout cache's key. */
  repo: string;
  good: { ref: string; sha: string; why: string };
  bad: { ref: string; sha: string };
  cacheDir: string;
  python?: string;
}): BisectSource {
  const { repoDir } = input;
  return {
    good: input.good,
    bad: input.bad,
    async commits(signal) {
      // --first-parent: the mainline's commits, each a PR merge or a direct push; a side branch's commits are
      // never blamed on their own (they may not even import).
      const r = await runGit(
        ['log', '--first-parent', '--reverse', '--format=%H%x09%s', '--end-of-options', `${input.good.sha}..${input.bad.sha}`],
        {
          cwd: repoDir,
          signal,
        },
      );
      if (r.code !== 0) throw new WorkspaceError(`git log ${input.good.ref}..${input.bad.ref} failed: ${r.stderr.trim().slice(0, 300)}`);
      const all: BisectCommit[] = r.stdout
        .split('\n')
        .filter(Boolean)
        .map((line) => {
          const tab = line.indexOf('\t');
          return { sha: line.slice(0, tab), subject: line.slice(tab + 1).slice(0, 200) };
        });
      // GOOD must be on BAD's first-parent line, else `good..bad` holds commits that are not descendants of GOOD.
      const anc = await runGit(['merge-base', '--is-ancestor', input.good.sha, input.bad.sha], { cwd: repoDir, signal });
      if (anc.code !== 0) return [];
      return all.slice(-MAX_BISECT_COMMITS);
    },
    async workspaceAt(sha, signal) {
      const co = await checkoutAt({ source: repoDir, sha, cacheDir: input.cacheDir, repo: input.repo, python: input.python, signal });
      return { hostPath: co.dir };
    },
    async changedFiles(sha, signal) {
      const r = await runGit(['diff', '--no-ext-diff', '--no-textconv', '--name-only', `${sha}^1`, sha, '--'], { cwd: repoDir, signal });
      return r.code === 0 ? r.stdout.split('\n').filter(Boolean) : [];
    },
  };
}
