import { runGit } from '../host/git.js';
import { gitRefLookup } from '../workspace/checkout.js';
import { refCandidates, resolveRef, workedVersions } from '../workspace/resolve-ref.js';
import { gitBisectSource } from './git-bisect-source.js';
import type { BisectSource } from './types.js';

/**
 * The bisection of a local repository, when one is asked for (`--bisect GOOD`) or the report names a version
 * or commit where it worked. BAD is the commit the issue is reproduced at. A GOOD that was asked for and does
 * not exist is an error (RefNotFoundError); a worked version without a tag is only a note.
 */
export async function localBisectSource(input: {
  repoDir: string;
  repo: string;
  /** `--bisect GOOD`; null: a working version the report names, if any. */
  good: string | null;
  issueText: string;
  /** The project's distribution and import names, as the ref resolver reads versions. */
  packages: readonly string[];
  bad: { ref: string; sha: string };
  cacheDir: string;
  python?: string;
}): Promise<{ source: BisectSource | null; notes: string[] }> {
  const lookup = gitRefLookup(input.repoDir);
  if (input.good) {
    const r = await resolveRef(refCandidates({ explicit: input.good, text: '' }), lookup);
    return { source: await make(input, { ref: input.good, sha: r.sha, why: `asked to bisect from ${input.good}` }), notes: [] };
  }
  const notes: string[] = [];
  for (const c of workedVersions(input.issueText, input.packages)) {
    for (const ref of [c.ref, ...(c.alternatives ?? [])]) {
      const sha = await lookup.commit(ref);
      if (sha && sha !== input.bad.sha) return { source: await make(input, { ref, sha, why: c.why }), notes };
    }
    notes.push(
      `${c.why}, but the repository has no tag or commit for it (tried ${[c.ref, ...(c.alternatives ?? [])].join(', ')}): no bisection`,
    );
  }
  return { source: null, notes };
}

/**
 * GOOD as a bisection can use it. A release tag often sits on a release branch (timm's v0.6.12 is on 0.6.x, not on
 * main), so it is no ancestor of the issue's ref and `good..bad` would be empty or wrong: as `git bisect` does, the
 * bisection then starts where the two lines parted (their merge base), which the reproduction must pass at instead.
 */
async function onBadLine(
  repoDir: string,
  good: { ref: string; sha: string; why: string },
  bad: { ref: string; sha: string },
): Promise<{ ref: string; sha: string; why: string }> {
  const anc = await runGit(['merge-base', '--is-ancestor', good.sha, bad.sha], { cwd: repoDir });
  if (anc.code === 0) return good;
  const mb = await runGit(['merge-base', good.sha, bad.sha], { cwd: repoDir });
  const sha = mb.stdout.trim();
  if (mb.code !== 0 || !/^[0-9a-f]{40}$/.test(sha) || sha === bad.sha) return good;
  return {
    ref: sha.slice(0, 12),
    sha,
    why: `${good.why}; ${good.ref} is on another branch, so from ${sha.slice(0, 12)}, where that branch left the issue's ref's history (their merge base)`,
  };
}

async function make(
  input: Parameters<typeof localBisectSource>[0],
  given: { ref: string; sha: string; why: string },
): Promise<BisectSource> {
  const good = await onBadLine(input.repoDir, given, input.bad);
  return gitBisectSource({
    repoDir: input.repoDir,
    repo: input.repo,
    good,
    bad: input.bad,
    cacheDir: input.cacheDir,
    python: input.python,
  });
}
