import type { RepoConfig } from '../config/repo-config.js';
import { issueKey } from '../queue/repro-job.js';
import { enqueueVerify, type VerifyJob } from '../queue/verify-job.js';
import { FIX_CHECK_NAME, fixCheckExternalId } from '../publish/build-fix-check-report.js';
import type { Octokit } from './octokit.js';
import type { HandlerDeps } from './start-run.js';

/** The pull request and repository a fix check is about, whichever event asked for it. */
export interface VerifyTarget {
  installationId: number;
  owner: string;
  repo: string;
  cloneUrl: string;
  /** `https://github.com/owner/repo` (issue URLs are built from it). */
  repoUrl: string;
  pr: VerifyJob['pr'];
}

export type VerifyStart = 'queued' | 'enqueue_failed';

/** Issues among `numbers` that have a confirmed reproduction RepGen remembers (Redis, no GitHub call). */
export async function issuesWithRepro(
  numbers: readonly number[],
  target: Pick<VerifyTarget, 'owner' | 'repo'>,
  deps: HandlerDeps,
): Promise<number[]> {
  const found = await Promise.all(
    numbers.map(async (n) =>
      (await deps.registry.lastReproduced(issueKey({ owner: target.owner, repo: target.repo, issueNumber: n }))) ? n : null,
    ),
  );
  return found.filter((n): n is number => n !== null);
}

/**
 * One fix check: a queued check run on the PR's head (so the PR shows it at once), then the job. A job that
 * cannot be queued leaves no check run spinning: it is completed as neutral with the reason.
 */
export async function startVerify(
  octokit: Octokit,
  deliveryId: string,
  target: VerifyTarget,
  req: { issueNumber: number; trigger: VerifyJob['trigger']; requestedBy: string; config: RepoConfig },
  deps: HandlerDeps,
): Promise<VerifyStart> {
  const { owner, repo, pr } = target;
  const external_id = fixCheckExternalId({ owner, repo, issueNumber: req.issueNumber, prNumber: pr.number });
  const { data: check } = await octokit.rest.checks.create({
    owner,
    repo,
    name: FIX_CHECK_NAME(req.issueNumber),
    head_sha: pr.headSha,
    status: 'queued',
    external_id,
    output: {
      title: `Queued: the reproduction of #${req.issueNumber} will run at this commit`,
      summary:
        `RepGen re-runs the confirmed reproduction of issue #${req.issueNumber} against this pull request's ` +
        `head (${pr.headSha.slice(0, 12)}). Asked by ${req.requestedBy}.`,
    },
  });
  const job: VerifyJob = {
    v: 1,
    kind: 'verify',
    deliveryId,
    installationId: target.installationId,
    owner,
    repo,
    issueNumber: req.issueNumber,
    issueUrl: `${target.repoUrl.replace(/\/+$/, '')}/issues/${req.issueNumber}`,
    pr,
    cloneUrl: target.cloneUrl,
    checkRunId: check.id,
    requestedBy: req.requestedBy,
    trigger: req.trigger,
    config: req.config,
    enqueuedAt: Date.now(),
  };
  try {
    await enqueueVerify(deps.queue, job, { attempts: deps.settings.attempts, backoffMs: deps.settings.backoffMs });
  } catch (err) {
    deps.log.error({ deliveryId, err: (err as Error).message }, 'enqueue of a fix check failed');
    await octokit.rest.checks.update({
      owner,
      repo,
      check_run_id: check.id,
      status: 'completed',
      conclusion: 'neutral',
      completed_at: new Date().toISOString(),
      output: {
        title: 'RepGen could not queue the fix check',
        summary: 'Its queue is unavailable; nothing ran. Comment `/repgen verify` on this pull request to try again.',
      },
    });
    return 'enqueue_failed';
  }
  deps.log.info({ deliveryId, issue: req.issueNumber, pr: pr.number }, 'fix check queued');
  return 'queued';
}
