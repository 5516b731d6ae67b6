import type { Queue } from 'bullmq';
import { z } from 'zod';
import { RepoConfig } from '../config/repo-config.js';
import { EnqueueError } from './errors.js';

/**
 * A fix check: an issue's confirmed reproduction re-run at a pull request's head. It travels on the repro
 * queue (same workers, same per-installation fairness) under its own job name and schema, so neither kind
 * of job can be read as the other.
 */
export const VERIFY_JOB = 'verify';

export const VerifyJob = z
  .object({
    v: z.literal(1),
    kind: z.literal('verify'),
    /** X-GitHub-Delivery of the webhook that asked for it. */
    deliveryId: z.string().min(1),
    installationId: z.number().int().positive(),
    owner: z.string().min(1),
    repo: z.string().min(1),
    /** The issue whose confirmed reproduction is run. */
    issueNumber: z.number().int().positive(),
    issueUrl: z.string().url(),
    /** The pull request, its head commit (what is tested) and branch (what the check run names). */
    pr: z
      .object({
        number: z.number().int().positive(),
        headSha: z.string().regex(/^[0-9a-f]{40}$/),
        headRef: z.string().min(1),
        url: z.string().url(),
      })
      .strict(),
    /** The base repository's clone URL: the head commit is fetched from it (fork PRs included), never from the fork. */
    cloneUrl: z.string().min(1),
    /** The check run the handler created (queued); the worker moves it on. */
    checkRunId: z.number().int().positive(),
    requestedBy: z.string(),
    /** What asked: the PR's own event, `/repgen verify`, or the check run's Re-run button. */
    trigger: z.enum(['pull_request', 'comment', 'check_run']),
    config: RepoConfig,
    enqueuedAt: z.number().int(),
  })
  .strict();
export type VerifyJob = z.infer<typeof VerifyJob>;

/** One job per delivery and issue: a redelivered webhook adds nothing; one PR fixing two issues makes two jobs. */
export function verifyJobId(job: Pick<VerifyJob, 'deliveryId' | 'issueNumber'>): string {
  return `verify-${job.deliveryId.replace(/[^A-Za-z0-9_-]/g, '_')}-${job.issueNumber}`;
}

/** The only producer of verify jobs; validates with the schema the worker parses with. */
export async function enqueueVerify(
  queue: Queue,
  data: VerifyJob,
  options: { attempts: number; backoffMs: number },
): Promise<{ jobId: string }> {
  const job = VerifyJob.parse(data);
  const jobId = verifyJobId(job);
  try {
    await queue.add(VERIFY_JOB, job, {
      jobId,
      attempts: options.attempts,
      backoff: { type: 'exponential', delay: options.backoffMs },
      removeOnComplete: { age: 86_400, count: 10_000 },
      removeOnFail: { age: 7 * 86_400, count: 10_000 },
    });
  } catch (err) {
    throw new EnqueueError(`could not queue the fix check: ${(err as Error).message}`);
  }
  return { jobId };
}
