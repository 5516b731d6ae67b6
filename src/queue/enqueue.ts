import type { Queue } from 'bullmq';
import { EnqueueError } from './errors.js';
import { ReproJob, reproJobId } from './repro-job.js';

export interface EnqueueOptions {
  /** Tries before the job fails for good. @defaultValue 3 */
  attempts?: number;
  /** First retry delay in ms, doubled on each retry. @defaultValue 30000 */
  backoffMs?: number;
  /** Start no earlier than this many ms from now (the repository rate limit). @defaultValue 0 */
  delayMs?: number;
}

/**
 * The only producer of the repro queue. Validates the data with the same schema the worker parses with,
 * and uses a deterministic job id so that a duplicate delivery adds nothing.
 */
export async function enqueueRepro(queue: Queue, data: ReproJob, options: EnqueueOptions = {}): Promise<{ jobId: string }> {
  const job = ReproJob.parse(data);
  const jobId = reproJobId(job);
  try {
    await queue.add(job.kind, job, {
      jobId,
      attempts: options.attempts ?? 3,
      backoff: { type: 'exponential', delay: options.backoffMs ?? 30_000 },
      delay: Math.max(0, options.delayMs ?? 0),
      // Keep finished jobs for a day so /repgen status can still read them; Redis must not grow forever.
      removeOnComplete: { age: 86_400, count: 10_000 },
      removeOnFail: { age: 7 * 86_400, count: 10_000 },
    });
  } catch (err) {
    throw new EnqueueError(`could not queue the run: ${(err as Error).message}`);
  }
  return { jobId };
}
