import { join } from 'node:path';
import { cloneAtRef } from '../github/clone-repo.js';
import { diskTree, projectPackages } from '../workspace/checkout.js';
import { runGit } from '../host/git.js';
import { prepareWorkspace, type PreparedWorkspace } from '../workspace/prepare-workspace.js';

export interface CheckoutRequest {
  /** The workflow's checkout (GITHUB_WORKSPACE). */
  workspace: string;
  /** `owner/name`. */
  repository: string;
  /** `/repgen --ref X`; null for the workflow's own checkout. */
  ref: string | null;
  cloneUrl: string;
  defaultBranch: string;
  token: string;
  issueText: string;
  /** Scratch space of this run (a `--ref` checkout, the checkout cache). */
  scratch: string;
  signal?: AbortSignal;
}

export interface ActionCheckout {
  prepared: PreparedWorkspace;
  /** The tested commit: the check run's head and the PR's base. */
  sha: string;
  /** The branch a regression-test PR targets. */
  baseBranch: string;
}

/**
 * The project every script imports. Without `--ref`, the checkout the workflow already made (as
 * `repgen reproduce --repo` takes a work tree: a commit or version the report names is used when the checkout
 * has it, e.g. with `fetch-depth: 0`). With `--ref`, a shallow checkout of that ref, the token sent as a
 * header (src/github/clone-repo.ts); a ref that does not exist is a RefNotFoundError.
 */
export async function prepareCheckout(req: CheckoutRequest, clone: typeof cloneAtRef = cloneAtRef): Promise<ActionCheckout> {
  if (req.ref === null) {
    const prepared = await prepareWorkspace({
      repoDir: req.workspace,
      repo: req.repository,
      explicitRef: null,
      issueText: req.issueText,
      cacheDir: join(req.scratch, 'checkouts'),
      signal: req.signal,
    });
    const sha = prepared.ref.sha ?? (await runGit(['rev-parse', 'HEAD'], { cwd: req.workspace })).stdout.trim();
    return { prepared, sha, baseBranch: req.defaultBranch };
  }
  const dir = join(req.scratch, 'ref-checkout');
  const { sha } = await clone({ url: req.cloneUrl, ref: req.ref, token: req.token, dir, signal: req.signal });
  const packages = await projectPackages(diskTree(dir));
  const isSha = /^[0-9a-f]{7,40}$/i.test(req.ref);
  return {
    prepared: {
      workspace: { hostPath: dir, project: `${req.repository} @ ${sha.slice(0, 12)} (asked for with --ref ${req.ref})`, packages },
      ref: { repo: req.repository, ref: req.ref, sha, source: 'explicit', why: `asked for with /repgen --ref ${req.ref}`, notes: [] },
    },
    sha,
    baseBranch: isSha ? req.defaultBranch : req.ref,
  };
}
