import { stat } from 'node:fs/promises';
import { z } from 'zod';
import type { Workspace } from '../exec/types.js';
import { checkoutAt, diskTree, gitRefLookup, gitTree, isGitRepo, projectPackages } from './checkout.js';
import { WorkspaceError } from './errors.js';
import { missingFilesNote, missingFilesRecord } from './find-missing-files.js';
import { runGit } from '../host/git.js';
import { refCandidates, resolveRef, type RepoName, type ResolvedRef } from './resolve-ref.js';

/** The ref a run used, as evidence.json records it. */
export const RefRecord = z.object({
  /** `owner/name` when known. */
  repo: z.string().nullable(),
  /** The ref as asked or found (`v0.9.2`, a SHA, `main`, `working tree`). */
  ref: z.string(),
  /** The commit; null for a folder that is not a git repository. */
  sha: z.string().nullable(),
  source: z.enum(['explicit', 'link', 'version', 'default']),
  why: z.string(),
  /** What the report named that the repository lacks (a released version without a tag), what the checkout lacks. */
  notes: z.array(z.string()),
  /** Files of the tree at `sha` the checkout lacks (missing from the mirror): how many, and the first 50. */
  missing: z.object({ count: z.number().int(), paths: z.array(z.string()) }).optional(),
});
export type RefRecord = z.infer<typeof RefRecord>;

export interface PreparedWorkspace {
  workspace: Workspace & { project: string; packages: string[] };
  ref: RefRecord;
}

/** `owner/name` of a GitHub remote URL (https or ssh), else null. Pure. */
export function githubRepoOf(url: string): RepoName | null {
  const m = /github\.com[/:]([\w.-]+)\/([\w.-]+?)(?:\.git)?\/?$/.exec(url.trim());
  return m?.[1] && m[2] ? { owner: m[1], name: m[2] } : null;
}

async function originRepo(dir: string): Promise<RepoName | null> {
  const r = await runGit(['config', '--get', 'remote.origin.url'], { cwd: dir }).catch(() => null);
  return r?.code === 0 ? githubRepoOf(r.stdout) : null;
}

export function parseRepoName(repo: string | null | undefined): RepoName | null {
  const m = /^([\w.-]+)\/([\w.-]+)$/.exec(repo ?? '');
  return m?.[1] && m[2] ? { owner: m[1], name: m[2] } : null;
}

/**
 * The workspace of a run from a local repository: the ref resolved from `explicit` or the report (see
 * resolve-ref.ts), checked out into the cache. Without an explicit ref and with nothing named by the
 * report, a work tree is used as it is (the user's checkout, local changes included); a bare repository
 * gives its default branch's head.
 */
export async function prepareWorkspace(input: {
  /** A git work tree, a bare repository / mirror, or a plain folder. */
  repoDir: string;
  /** `owner/name`; read from the origin remote when unset. */
  repo?: string | null;
  explicitRef?: string | null;
  issueText: string;
  cacheDir: string;
  /** Interpreter that byte-compiles fresh checkouts. */
  python?: string;
  signal?: AbortSignal;
}): Promise<PreparedWorkspace> {
  const st = await stat(input.repoDir).catch(() => null);
  if (!st?.isDirectory()) throw new WorkspaceError(`'${input.repoDir}' is not a directory`);
  const git = await isGitRepo(input.repoDir);
  if (!git) {
    if (input.explicitRef)
      throw new WorkspaceError(`a ref was asked for (${input.explicitRef}) but '${input.repoDir}' is not a git repository`);
    const packages = await projectPackages(diskTree(input.repoDir));
    return {
      workspace: {
        hostPath: input.repoDir,
        project: `${packages[0] ?? 'the project'} (the folder as it is; not a git repository)`,
        packages,
      },
      ref: {
        repo: input.repo ?? null,
        ref: 'working tree',
        sha: null,
        source: 'default',
        why: 'the folder as given (not a git repository)',
        notes: [],
      },
    };
  }
  const bare = (await runGit(['rev-parse', '--is-bare-repository'], { cwd: input.repoDir })).stdout.trim() === 'true';
  const repo = parseRepoName(input.repo) ?? (await originRepo(input.repoDir));
  const repoLabel = repo ? `${repo.owner}/${repo.name}` : null;
  const packages = await projectPackages(bare ? gitTree(input.repoDir, 'HEAD') : diskTree(input.repoDir));
  const lookup = gitRefLookup(input.repoDir);
  const resolved: ResolvedRef = await resolveRef(
    refCandidates({ explicit: input.explicitRef, text: input.issueText, repo, packages }),
    lookup,
  );
  const name = `${repoLabel ?? packages[0] ?? 'the project'}`;
  if (resolved.source === 'default' && !bare) {
    return {
      workspace: { hostPath: input.repoDir, project: `${name} @ ${resolved.sha.slice(0, 12)} (the given work tree)`, packages },
      ref: {
        repo: repoLabel,
        ref: 'working tree',
        sha: resolved.sha,
        source: 'default',
        why: `the given work tree as it is (HEAD ${resolved.sha.slice(0, 12)}): the report names no commit or released version`,
        notes: resolved.notes,
      },
    };
  }
  const co = await checkoutAt({
    source: input.repoDir,
    sha: resolved.sha,
    cacheDir: input.cacheDir,
    repo: repoLabel ?? input.repoDir,
    python: input.python,
    signal: input.signal,
  });
  const ref: RefRecord = {
    repo: repoLabel,
    ref: resolved.ref,
    sha: resolved.sha,
    source: resolved.source,
    why: resolved.why,
    notes: resolved.notes,
  };
  // The packages of the commit checked out, not of the tree the ref was resolved from (a mirror's head, a work tree):
  // a package added later (kornia's top-level `testing/`) is not the project's at this commit, and a candidate fix's
  // import check imports each of them.
  const checkedOut = await projectPackages(diskTree(co.dir));
  return {
    workspace: {
      hostPath: co.dir,
      project: `${name} @ ${resolved.sha.slice(0, 12)} (${resolved.why})`,
      packages: checkedOut,
    },
    ref: co.missing.length
      ? { ...ref, notes: [...ref.notes, missingFilesNote(co.missing, resolved.ref)], missing: missingFilesRecord(co.missing) }
      : ref,
  };
}

/** A second checkout of the same repository at another ref (the fixing one), for `--verify-fix`; `missing` as checkoutAt's. */
export async function checkoutRef(input: {
  repoDir: string;
  repo?: string | null;
  ref: string;
  cacheDir: string;
  python?: string;
  signal?: AbortSignal;
}): Promise<{ workspace: Workspace; sha: string; missing: string[] }> {
  if (!(await isGitRepo(input.repoDir)))
    throw new WorkspaceError(`'${input.repoDir}' is not a git repository, so it has no ref ${input.ref}`);
  const resolved = await resolveRef(refCandidates({ explicit: input.ref, text: '' }), gitRefLookup(input.repoDir));
  const repo = parseRepoName(input.repo) ?? (await originRepo(input.repoDir));
  const co = await checkoutAt({
    source: input.repoDir,
    sha: resolved.sha,
    cacheDir: input.cacheDir,
    repo: repo ? `${repo.owner}/${repo.name}` : input.repoDir,
    python: input.python,
    signal: input.signal,
  });
  return { workspace: { hostPath: co.dir }, sha: resolved.sha, missing: co.missing };
}
