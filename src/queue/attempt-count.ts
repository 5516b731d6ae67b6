/**
 * How many times a job's work really started, from BullMQ's own counters (bullmq 5/6 semantics):
 * - `attemptsMade` (atm) grows once per attempt that *ended* through the processor (retried, failed, done), and
 *   once more when BullMQ fails a job for stalling too often: that last "attempt" only takes the job to fail it,
 *   nothing runs.
 * - `stalledCounter` (stc) grows once per attempt whose worker died (SIGKILL, OOM) before it ended: those ran.
 * - `attemptsStarted` (ats) is not usable: it also grows on every slot wait and shutdown hand-back (moveToDelayed
 *   with skipAttempt) and on the stall-failure pick-up above, so it overstates (3 for a job that ran twice).
 */
export interface AttemptCounters {
  attemptsMade: number;
  stalledCounter?: number;
  failedReason?: string | undefined;
}

/** The reason BullMQ's stalled-job check gives a job it fails (moveStalledJobsToWait.lua). */
const STALL_FAILURE = /stalled more than allowable limit/i;

export function failedAsStalled(reason: string | undefined): boolean {
  return reason !== undefined && STALL_FAILURE.test(reason);
}

/** Runs of a job that failed for good (the final word), counting those its worker died in. */
export function runsOfFailedJob(job: AttemptCounters): number {
  const stalls = job.stalledCounter ?? 0;
  const ended = failedAsStalled(job.failedReason) ? Math.max(0, job.attemptsMade - 1) : job.attemptsMade;
  return Math.max(1, ended + stalls);
}

/** Which run this is, for a job now in a processor (1 for the first). */
export function currentRun(job: AttemptCounters): number {
  return job.attemptsMade + (job.stalledCounter ?? 0) + 1;
}
