// Stage 0 for the App's worker: the issue with its later human comments, and a shallow clone of the
// repository at the job's ref that every script run sees read-only on PYTHONPATH.
import { chmod } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { localBisectSource } from '../bisect/local-bisect-source.js';
import type { IssueSource, ProjectCheckout } from '../pipeline/ports.js';
import type { IssueInput } from '../pipeline/types.js';
import type { ReproJob } from '../queue/repro-job.js';
import { compileTree, diskTree, projectPackages } from '../workspace/checkout.js';
import { isBot } from './check-permission.js';
import { cloneAtRef } from './clone-repo.js';
import { IssueGoneError } from './errors.js';
import { RefNotFoundError } from '../workspace/errors.js';
import { httpStatus, type Octokit } from './octokit.js';

export interface GitHubIssueSourceOptions {
  octokit: Octokit;
  data: Pick<ReproJob, 'owner' | 'repo' | 'issueNumber' | 'cloneUrl' | 'ref' | 'bisect'>;
  /** The installation token: sent to git as a header, never put in a URL or argv. */
  token: string;
  /** Where the clone goes (the job's own folder). */
  dir: string;
  /** Byte-compiles the clone (it is mounted read-only, so Python could not cache bytecode). Unset: not compiled. */
  python?: string;
  /** @defaultValue cloneAtRef */
  clone?: typeof cloneAtRef;
}

/** An issue on GitHub. `readIssue` throws IssueGoneError on 404/410; `checkout` RefNotFoundError for a missing ref. */
export function githubIssueSource(o: GitHubIssueSourceOptions): IssueSource {
  const { data } = o;
  const name = `${data.owner}/${data.repo}`;
  return {
    label: `${name}#${data.issueNumber}`,
    readIssue: () => readIssue(o.octokit, data),
    checkout: async (issue, signal): Promise<ProjectCheckout> => {
      const history = !!data.bisect;
      const { sha } = await (o.clone ?? cloneAtRef)({ url: data.cloneUrl, ref: data.ref, token: o.token, dir: o.dir, signal, history });
      signal.throwIfAborted();
      // The job's folder is mkdtemp's 0700: the sandbox's unprivileged uid must reach the tree it imports (search only).
      await chmod(dirname(o.dir), 0o711);
      if (o.python) await compileTree(o.python, o.dir, signal);
      const packages = await projectPackages(diskTree(o.dir));
      // `/repgen bisect`: the commits between GOOD and the ref were fetched with it; checkouts go beside the clone.
      const bisect = data.bisect
        ? await localBisectSource({
            repoDir: o.dir,
            repo: name,
            good: data.bisect.good,
            issueText: `${issue.title}\n\n${issue.body}`,
            packages,
            bad: { ref: data.ref, sha },
            cacheDir: join(dirname(o.dir), 'checkouts'),
            python: o.python,
          }).catch((err: unknown) => {
            // A GOOD that does not exist ends the bisection, never the reproduction.
            if (!(err instanceof RefNotFoundError)) throw err;
            return { source: null, notes: [`\`/repgen bisect ${data.bisect?.good ?? ''}\`: ${err.message}`] };
          })
        : null;
      const notes = bisect?.source ? [] : (bisect?.notes ?? []);
      if (data.bisect && !bisect?.source && !notes.length)
        notes.push(
          '`/repgen bisect` was asked, but the report names no version or commit where it worked: give one, like `/repgen bisect v1.2.0`',
        );
      return {
        ...(bisect?.source ? { bisect: bisect.source } : {}),
        repoDir: o.dir,
        workspace: { hostPath: o.dir, project: `${name} @ ${sha.slice(0, 12)} (${data.ref})`, packages },
        sha,
        ref: { repo: name, ref: data.ref, sha, source: 'explicit', why: `the ref the run was asked for (${data.ref})`, notes },
      };
    },
  };
}

/** The issue, with the later comments of people (not bots, not `/repgen` commands): they often carry the missing piece. */
export async function readIssue(octokit: Octokit, data: Pick<ReproJob, 'owner' | 'repo' | 'issueNumber'>): Promise<IssueInput> {
  try {
    const { data: issue } = await octokit.rest.issues.get({ owner: data.owner, repo: data.repo, issue_number: data.issueNumber });
    const { data: comments } = await octokit.rest.issues.listComments({
      owner: data.owner,
      repo: data.repo,
      issue_number: data.issueNumber,
      per_page: 30,
    });
    const extra = comments
      .filter((c) => c.user && !isBot({ login: c.user.login, type: c.user.type }) && c.body && !/^\s*\/repgen/i.test(c.body))
      .map((c) => `\n\n---\nComment by ${c.user?.login ?? 'someone'}:\n\n${c.body ?? ''}`)
      .join('');
    return { title: issue.title, body: `${issue.body ?? ''}${extra}`, url: issue.html_url, number: issue.number };
  } catch (err) {
    const status = httpStatus(err);
    if (status === 404 || status === 410) throw new IssueGoneError('the issue was deleted');
    throw err;
  }
}
