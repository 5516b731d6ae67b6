// What makes a commit RepGen's candidate commit (candidate-commit.ts), checked rather than taken on its word: its
// `RepGen-Candidate:` trailer is a hash of the content the commit changes against its one parent (each changed path
// with its blob sha), so it can be recomputed from the commit's trees alone; and GitHub says the App made it (the
// commit's author is the App's bot account, the committer the same or GitHub itself, and GitHub's signature verified,
// as GitHub signs the commits an App creates through its API). A commit with the candidate subject that fails either
// is someone else's, and RepGen leaves it as it is.
import { createHash } from 'node:crypto';
import type { Octokit } from '../octokit.js';

/** One path of a tree: its mode, kind and object sha. */
export type TreeEntry = { mode: string; type: string; sha: string };

/** A path the commit changed and its blob sha after it (null: the commit removed the path). */
export type Change = { path: string; sha: string | null };

const TRAILER = /^RepGen-Candidate: ([0-9a-f]{16})$/m;
/** The committer login GitHub gives the commits it signs itself (web edits, some API commits). */
const GITHUB_COMMITTER = 'web-flow';

/** The trailer line for these changes: sha256 over the sorted `path\0sha\n` pairs (`-` for a removed path), 16 hex. Pure. */
export function candidateTrailer(changes: readonly Change[]): string {
  const h = createHash('sha256');
  for (const c of [...changes].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))) h.update(`${c.path}\0${c.sha ?? '-'}\n`);
  return `RepGen-Candidate: ${h.digest('hex').slice(0, 16)}`;
}

/** The trailer line a commit message carries, or null. Pure. */
export function trailerOf(message: string): string | null {
  return TRAILER.exec(message)?.[0] ?? null;
}

/** Git's blob id of `text` (what GitHub names the blob it stores). Pure. */
export function blobSha(text: string): string {
  const bytes = Buffer.from(text);
  return createHash('sha1')
    .update(Buffer.concat([Buffer.from(`blob ${bytes.length}\0`), bytes]))
    .digest('hex');
}

/** The paths whose entry differs between two flat trees (added, removed, another blob or mode), with their sha after. Pure. */
export function treeChanges(before: ReadonlyMap<string, TreeEntry>, after: ReadonlyMap<string, TreeEntry>): Change[] {
  const paths = [...new Set([...before.keys(), ...after.keys()])].sort();
  return paths.flatMap((path) => {
    const a = before.get(path);
    const b = after.get(path);
    return a && b && a.sha === b.sha && a.mode === b.mode ? [] : [{ path, sha: b?.sha ?? null }];
  });
}

/** A commit as GitHub's commit list gives it: the parts the check reads. */
export interface ListedCommit {
  sha: string;
  author: { login?: string; type?: string } | null;
  committer: { login?: string; type?: string } | null;
  commit: { message: string; tree: { sha: string }; verification?: { verified: boolean } | null };
}

/**
 * Why GitHub does not vouch that the App made `c`, or null when it does: the author is `appLogin` (when the caller
 * knows it; else any App's bot account), the committer the same account or GitHub, and the signature verified. Pure.
 */
export function notMadeByApp(c: ListedCommit, appLogin: string | undefined): string | null {
  const author = c.author?.login;
  const bot = appLogin ? author === appLogin : c.author?.type === 'Bot' && !!author?.endsWith('[bot]');
  if (!author || !bot)
    return `its author is ${author ? `@${author}` : 'no GitHub account'}, not ${appLogin ? `@${appLogin}` : "the App's bot account"}`;
  const committer = c.committer?.login;
  if (committer !== author && committer !== GITHUB_COMMITTER)
    return `its committer is ${committer ? `@${committer}` : 'no GitHub account'}, not @${author}`;
  if (c.commit.verification?.verified !== true) return 'GitHub has not verified its signature';
  return null;
}

/** A tree's files, path → entry (folders left out); null when GitHub truncated the listing. */
export async function filesOf(
  octokit: Octokit,
  at: { owner: string; repo: string },
  treeSha: string,
): Promise<Map<string, TreeEntry> | null> {
  const { data } = await octokit.rest.git.getTree({ ...at, tree_sha: treeSha, recursive: 'true' });
  if (data.truncated) return null;
  const files = new Map<string, TreeEntry>();
  for (const e of data.tree)
    if (e.path && e.sha && e.type !== 'tree') files.set(e.path, { mode: e.mode ?? '', type: e.type ?? '', sha: e.sha });
  return files;
}

/**
 * Why `c` (one parent, `parent`) is not RepGen's candidate commit, or null when it is: its trailer must be the hash of
 * what it changes against its parent (read from both trees), and GitHub must vouch that the App made it.
 */
export async function notRepgens(
  octokit: Octokit,
  at: { owner: string; repo: string; appLogin?: string },
  c: ListedCommit,
  parent: string,
): Promise<string | null> {
  const short = c.sha.slice(0, 12);
  const trailer = trailerOf(c.commit.message);
  const repo = { owner: at.owner, repo: at.repo };
  const { data: p } = await octokit.rest.git.getCommit({ ...repo, commit_sha: parent });
  const [before, after] = await Promise.all([filesOf(octokit, repo, p.tree.sha), filesOf(octokit, repo, c.commit.tree.sha)]);
  const subject = `commit ${short} has RepGen's candidate subject but`;
  if (!before || !after)
    return `${subject} its trees are too large to check against its RepGen-Candidate trailer: not taken as RepGen's commit; left as it is`;
  if (trailer !== candidateTrailer(treeChanges(before, after)))
    return `${subject} its content does not match its RepGen-Candidate trailer: not RepGen's commit; left as it is`;
  const by = notMadeByApp(c, at.appLogin);
  return by ? `${subject} ${by}: not RepGen's commit; left as it is` : null;
}
