import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import type { RepoConfig } from '../config/repo-config.js';
import type { Logger } from '../log.js';
import { enqueueRepro } from '../queue/enqueue.js';
import { reserveRepoSlot } from '../queue/rate-limit.js';
import { issueKey, reproJobId, type ReproJob } from '../queue/repro-job.js';
import type { RunRegistry } from '../queue/run-registry.js';
import { alreadyRunningComment, enqueueFailedComment, progressMarker, queuedComment } from './messages.js';
import type { Octokit } from './octokit.js';
import type { TriggerEvent } from './webhook-payloads.js';

export interface HandlerSettings {
  /** Job attempts. @defaultValue 3 */
  attempts: number;
  /** First retry delay. @defaultValue 30000 */
  backoffMs: number;
  /** Runs per repository per window. @defaultValue 10 */
  repoRateLimit: number;
  /** @defaultValue 3600000 */
  repoRateWindowMs: number;
}

export interface HandlerDeps {
  queue: Queue;
  redis: Redis;
  registry: RunRegistry;
  settings: HandlerSettings;
  log: Logger;
}

export interface RunRequest {
  kind: ReproJob['kind'];
  trigger: ReproJob['trigger'];
  gpu: boolean;
  ref: string | null;
  llm: string | null;
  /** `/repgen bisect [GOOD]`. @defaultValue null */
  bisect?: { good: string | null } | null;
  config: RepoConfig;
  /** The comment that asked, when one did (the 👀 goes on it). */
  commentId: number | null;
}

export type StartResult = 'queued' | 'duplicate' | 'busy' | 'enqueue_failed';

/**
 * Validated and permitted trigger → one job. Order matters for the one-second budget and for "loses
 * nothing": the delivery and issue locks first (cheap, and they make duplicates no-ops), then the 👀 and
 * the progress comment in parallel (the job needs the comment id), then the enqueue.
 */
export async function startRun(
  octokit: Octokit,
  deliveryId: string,
  event: TriggerEvent,
  req: RunRequest,
  deps: HandlerDeps,
): Promise<StartResult> {
  const owner = event.repository.owner.login;
  const repo = event.repository.name;
  const issue_number = event.issue.number;
  const key = issueKey({ owner, repo, issueNumber: issue_number });
  if (!(await deps.registry.claimDelivery(deliveryId))) {
    deps.log.info({ deliveryId }, 'duplicate delivery ignored');
    return 'duplicate';
  }
  const jobId = reproJobId({ kind: req.kind, deliveryId });
  const claim = await deps.registry.claimIssue(key, { jobId, deliveryId, commentUrl: '', kind: req.kind, since: Date.now() });
  if (!claim.ok) {
    await octokit.rest.issues.createComment({ owner, repo, issue_number, body: alreadyRunningComment(claim.active.commentUrl) });
    return 'busy';
  }
  const marker = progressMarker(jobId);
  try {
    const delayMs = await reserveRepoSlot(deps.redis, deps.registry.prefix, event.repository.full_name, jobId, {
      limit: deps.settings.repoRateLimit,
      windowMs: deps.settings.repoRateWindowMs,
    });
    const [comment] = await Promise.all([
      octokit.rest.issues.createComment({ owner, repo, issue_number, body: queuedComment(marker, delayMs, event.sender.login) }),
      react(octokit, owner, repo, issue_number, req.commentId),
    ]);
    const job: ReproJob = {
      v: 1,
      kind: req.kind,
      deliveryId,
      installationId: event.installation.id,
      owner,
      repo,
      issueNumber: issue_number,
      issueUrl: event.issue.html_url,
      cloneUrl: event.repository.clone_url,
      ref: req.ref ?? event.repository.default_branch,
      gpu: req.gpu || req.config.gpu,
      llm: req.llm,
      ...(req.bisect ? { bisect: req.bisect } : {}),
      commentId: comment.data.id,
      commentUrl: comment.data.html_url,
      requestedBy: event.sender.login,
      trigger: req.trigger,
      config: req.config,
      enqueuedAt: Date.now(),
    };
    await deps.registry.updateIssue(key, { jobId, deliveryId, commentUrl: comment.data.html_url, kind: req.kind, since: Date.now() });
    try {
      await enqueueRepro(deps.queue, job, { attempts: deps.settings.attempts, backoffMs: deps.settings.backoffMs, delayMs });
    } catch (err) {
      deps.log.error({ jobId, err: (err as Error).message }, 'enqueue failed');
      await deps.registry.releaseIssue(key, jobId);
      await octokit.rest.issues.updateComment({ owner, repo, comment_id: comment.data.id, body: enqueueFailedComment(marker) });
      return 'enqueue_failed';
    }
    deps.log.info({ jobId, issue: key, delayMs }, 'run queued');
    return 'queued';
  } catch (err) {
    // GitHub refused the comment or the reaction: free the locks so a redelivery or a new trigger can start over.
    await deps.registry.releaseIssue(key, jobId);
    await deps.redis.del(`${deps.registry.prefix}:delivery:${deliveryId}`);
    throw err;
  }
}

async function react(octokit: Octokit, owner: string, repo: string, issue_number: number, commentId: number | null): Promise<void> {
  if (commentId === null) await octokit.rest.reactions.createForIssue({ owner, repo, issue_number, content: 'eyes' });
  else await octokit.rest.reactions.createForIssueComment({ owner, repo, comment_id: commentId, content: 'eyes' });
}
