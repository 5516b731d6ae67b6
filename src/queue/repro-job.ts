import { z } from 'zod';
import { RepoConfig } from '../config/repo-config.js';

/** The queue every reproduction goes through. */
export const REPRO_QUEUE = 'repro';

/**
 * Job data as stored in Redis. Written only by `enqueueRepro` and read back with `ReproJob.parse(job.data)`
 * as the processor's first line: Redis is a boundary, and an old or foreign job must fail loudly, not half-run.
 */
export const ReproJob = z
  .object({
    v: z.literal(1),
    /** `repro` runs the pipeline; `pr` opens the regression-test PR of the issue's last reproduced run. */
    kind: z.enum(['repro', 'pr']),
    /** X-GitHub-Delivery of the webhook that asked for it (duplicate deliveries share it). */
    deliveryId: z.string().min(1),
    installationId: z.number().int().positive(),
    owner: z.string().min(1),
    repo: z.string().min(1),
    issueNumber: z.number().int().positive(),
    issueUrl: z.string().url(),
    /** Where to clone from (the payload's clone_url); credentials never go in it. */
    cloneUrl: z.string().min(1),
    /** The ref to test: `--ref`, else the default branch. */
    ref: z.string().min(1),
    gpu: z.boolean(),
    llm: z.string().nullable(),
    /** `/repgen bisect [GOOD]`: after a confirmed reproduction, bisect from GOOD (null: a version the report says worked). */
    bisect: z
      .object({ good: z.string().min(1).nullable() })
      .strict()
      .nullable()
      .optional(),
    /** The progress comment the worker edits at every stage. */
    commentId: z.number().int().positive(),
    commentUrl: z.string(),
    requestedBy: z.string(),
    /** What asked: the label, a `/repgen` comment, or the check run's Re-run button. */
    trigger: z.enum(['label', 'comment', 'check_run']),
    config: RepoConfig,
    enqueuedAt: z.number().int(),
  })
  .strict();
export type ReproJob = z.infer<typeof ReproJob>;

/** Identifies an issue across installations: the key of the one-active-run lock. */
export function issueKey(job: Pick<ReproJob, 'owner' | 'repo' | 'issueNumber'>): string {
  return `${job.owner}/${job.repo}#${job.issueNumber}`.toLowerCase();
}

/**
 * BullMQ job ids may not contain ':'; the delivery id makes duplicate deliveries collide on purpose,
 * so BullMQ itself refuses the second copy even if our own delivery lock were lost.
 */
export function reproJobId(job: Pick<ReproJob, 'deliveryId' | 'kind'>): string {
  return `${job.kind}-${job.deliveryId.replace(/[^A-Za-z0-9_-]/g, '_')}`;
}
