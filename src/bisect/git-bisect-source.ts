import type { BisectCommit } from './plan-bisect.js';
import type { BisectSource } from './types.js';
import { checkoutAt } from '../workspace/checkout.js';
import { WorkspaceError } from '../workspace/errors.js';
import { runGit } from '../host/git.js';

/** Most first-parent commits a bisection searches; a wider range is cut to its newest commits, GOOD moved and said. */
export const MAX_BISECT_COMMITS = 5000;

/** Characters of a commit's subject kept (git cuts it: `%<(N,trunc)`). */
const SUBJECT_CHARS = 200;

/** Ceiling on the log's bytes: MAX + 1 commits of a 64-hex hash, a tab and SUBJECT_CHARS of 4-byte characters. */
const LOG_MAX_BYTES = (MAX_BISECT_COMMITS + 1) * (64 + 2 + SUBJECT_CHARS * 4 + 8);

const SHA = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/;

/**
 * The commits of `git log -z --format=%H%x09%s` output, in its order. Every record must start with a full hash and
 * a tab: anything else is an error, never a commit. Pure.
 */
export function parseFirstParentLog(stdoutZ: string): BisectCommit[] {
  return stdoutZ
    .split('\0')
    .filter((rec) => rec !== '')
    .map((rec) => {
      const tab = rec.indexOf('\t');
      const sha = tab < 0 ? rec : rec.slice(0, tab);
      if (!SHA.test(sha)) throw new WorkspaceError(`git log printed a record that is not a commit: ${JSON.stringify(rec.slice(0, 80))}`);
      return {
        sha,
        subject: rec
          .slice(tab + 1)
          .trimEnd()
          .slice(0, SUBJECT_CHARS),
      };
    });
}

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
  let good = input.good;
  return {
    /** GOOD as asked, or where the searched commits start when the range is longer than MAX_BISECT_COMMITS (after commits()). */
    get good() {
      return good;
    },
    bad: input.bad,
    async commits(signal) {
      // --first-parent: the mainline's commits, each a PR merge or a direct push; a side branch's commits are
      // never blamed on their own (they may not even import). The newest MAX + 1 only (one more says the range was
      // cut), NUL-separated, each subject cut to SUBJECT_CHARS by git itself: the output is bounded whatever the
      // history, so it is read whole or refused, never cut at its start (which once gave the oldest 1,527 of a
      // long range away and a "commit" made of a subject's tail).
      const r = await runGit(
        [
          'log',
          '--first-parent',
          '-z',
          `--max-count=${MAX_BISECT_COMMITS + 1}`,
          `--format=%H%x09%<(${SUBJECT_CHARS},trunc)%s`,
          '--end-of-options',
          `${input.good.sha}..${input.bad.sha}`,
        ],
        { cwd: repoDir, signal, maxBytes: LOG_MAX_BYTES },
      );
      if (r.code !== 0) throw new WorkspaceError(`git log ${input.good.ref}..${input.bad.ref} failed: ${r.stderr.trim().slice(0, 300)}`);
      if (r.truncated) throw new WorkspaceError(`git log ${input.good.ref}..${input.bad.ref} printed more than ${LOG_MAX_BYTES} bytes`);
      const newestFirst = parseFirstParentLog(r.stdout);
      // GOOD must be on BAD's first-parent line, else `good..bad` holds commits that are not descendants of GOOD.
      const anc = await runGit(['merge-base', '--is-ancestor', input.good.sha, input.bad.sha], { cwd: repoDir, signal });
      if (anc.code !== 0) return [];
      const before = newestFirst[MAX_BISECT_COMMITS];
      if (before) {
        // Too long a range: the newest MAX are searched, from the first parent of the oldest of them, which the
        // reproduction must then pass at (it is checked as GOOD is), and the outcome's note says so.
        good = {
          ref: before.sha.slice(0, 12),
          sha: before.sha,
          why:
            `${input.good.why}; ${input.good.ref}..${input.bad.ref} holds more than ${MAX_BISECT_COMMITS} first-parent commits, ` +
            `so only the newest ${MAX_BISECT_COMMITS} are searched, from ${before.sha.slice(0, 12)}`,
        };
      }
      return newestFirst.slice(0, MAX_BISECT_COMMITS).reverse();
    },
    async workspaceAt(sha, signal) {
      const co = await checkoutAt({ source: repoDir, sha, cacheDir: input.cacheDir, repo: input.repo, python: input.python, signal });
      return { hostPath: co.dir };
    },
    async changedFiles(sha, signal) {
      // -z: a path may hold a newline; a list cut at its start is refused, never read from a fragment.
      const r = await runGit(['diff', '--no-ext-diff', '--no-textconv', '--name-only', '-z', `${sha}^1`, sha, '--'], {
        cwd: repoDir,
        signal,
        maxBytes: 64 << 20,
      });
      if (r.truncated) throw new WorkspaceError(`the files ${sha.slice(0, 12)} changed are more than git's output limit`);
      return r.code === 0 ? r.stdout.split('\0').filter(Boolean) : [];
    },
  };
}
