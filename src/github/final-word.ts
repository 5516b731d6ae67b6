import type { Job } from 'bullmq';
import type { Logger } from '../log.js';
import { failedAsStalled, runsOfFailedJob } from '../queue/attempt-count.js';
import { issueKey, ReproJob } from '../queue/repro-job.js';
import type { RunRegistry } from '../queue/run-registry.js';
import { finalFailureComment, progressMarker } from './messages.js';
import type { InstallationAuth } from './octokit.js';

/**
 * The last line of the "final word" guarantee: a job that failed for good without its processor saying so
 * (a worker killed once too often — BullMQ fails it as stalled —, a crash before the publisher existed)
 * still gets its comment edited. Whoever claims the final word first posts it; everyone else does nothing.
 */
export async function postFinalWordForFailedJob(
  job: Job,
  reason: string,
  deps: { registry: RunRegistry; auth: (installationId: number) => Promise<InstallationAuth>; log: Logger },
): Promise<boolean> {
  const parsed = ReproJob.safeParse(job.data);
  if (!parsed.success || !job.id) return false;
  const data = parsed.data;
  if (!(await deps.registry.claimFinalWord(job.id))) return false;
  try {
    const { octokit } = await deps.auth(data.installationId);
    const stalled = failedAsStalled(reason);
    const why = stalled ? 'the worker running it stopped (killed or out of memory) more times than RepGen retries' : reason;
    // BullMQ's counters, read the way they are kept (src/queue/attempt-count.ts): attemptsStarted overstates.
    const counters = { attemptsMade: job.attemptsMade, stalledCounter: job.stalledCounter, failedReason: reason };
    await octokit.rest.issues.updateComment({
      owner: data.owner,
      repo: data.repo,
      comment_id: data.commentId,
      body: finalFailureComment(progressMarker(job.id), why, runsOfFailedJob(counters), job.stalledCounter ?? 0),
    });
    return true;
  } catch (err) {
    deps.log.error({ jobId: job.id, err: (err as Error).message }, 'could not post the final word');
    return false;
  } finally {
    await deps.registry.releaseIssue(issueKey(data), job.id);
  }
}
