import type { Redis } from 'ioredis';
import { z } from 'zod';

/**
 * Redis state around the queue that BullMQ itself does not keep: which deliveries were seen, which run is
 * active on each issue, the last reproduced script of an issue (for `/repgen pr`), and "final word posted".
 * Every key lives under the configured prefix and expires, so a lost worker never leaves a lock forever.
 */

export const ActiveRun = z.object({
  jobId: z.string(),
  deliveryId: z.string(),
  commentUrl: z.string(),
  kind: z.enum(['repro', 'pr']),
  since: z.number(),
});
export type ActiveRun = z.infer<typeof ActiveRun>;

export const LastReproduced = z.object({
  script: z.string(),
  sha: z.string(),
  summary: z.string(),
  commentUrl: z.string(),
  /** Branch the run tested (the PR's base). */
  ref: z.string(),
  /** Output lines that show the bug (exception `Type: message`), asserted absent by the regression test. */
  markers: z.array(z.string()),
  /**
   * A behavioural bug's oracle (the assertion of the report's expectation): the regression test fails with it, and a
   * fix check shows what it printed here beside what it prints at the fix.
   */
  oracle: z
    .object({
      assertion: z.string(),
      expected: z.string(),
      quote: z.string(),
      reportObserved: z.string().optional(),
      observed: z.string().nullable().optional(),
    })
    .optional(),
  /** The run's fix-sensitive candidate fix: the PR may carry it as a separate commit (repgen.yml `prCandidateCommit`). */
  candidate: z.object({ diff: z.string(), runs: z.number().int().nullable() }).optional(),
  at: z.number(),
});
export type LastReproduced = z.infer<typeof LastReproduced>;

export interface RunRegistryOptions {
  /** Key prefix shared with the queue. @defaultValue 'repgen' */
  prefix?: string;
  /** A delivery id is remembered this long; GitHub redelivers within hours. @defaultValue 86400 */
  deliveryTtlS?: number;
  /** Upper bound of one run; the issue lock expires after it even if no worker releases it. @defaultValue 21600 */
  activeTtlS?: number;
}

// Deletes the lock only when it still belongs to this job (a later run may own it by now).
const RELEASE = `
local v = redis.call('GET', KEYS[1])
if v and cjson.decode(v).jobId == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`;

export class RunRegistry {
  readonly prefix: string;
  private readonly deliveryTtlS: number;
  private readonly activeTtlS: number;

  constructor(
    private readonly redis: Redis,
    options: RunRegistryOptions = {},
  ) {
    this.prefix = options.prefix ?? 'repgen';
    this.deliveryTtlS = options.deliveryTtlS ?? 86_400;
    this.activeTtlS = options.activeTtlS ?? 21_600;
  }

  /** True the first time a delivery id is seen; false for GitHub's redeliveries of the same webhook. */
  async claimDelivery(deliveryId: string): Promise<boolean> {
    const ok = await this.redis.set(`${this.prefix}:delivery:${deliveryId}`, '1', 'EX', this.deliveryTtlS, 'NX');
    return ok === 'OK';
  }

  /** Takes the issue's one-active-run lock, or returns the run that holds it. */
  async claimIssue(issue: string, run: ActiveRun): Promise<{ ok: true } | { ok: false; active: ActiveRun }> {
    const key = this.activeKey(issue);
    const ok = await this.redis.set(key, JSON.stringify(run), 'EX', this.activeTtlS, 'NX');
    if (ok === 'OK') return { ok: true };
    const active = await this.activeRun(issue);
    // The lock vanished between SET and GET (the run just ended): try once more.
    if (!active)
      return (await this.redis.set(key, JSON.stringify(run), 'EX', this.activeTtlS, 'NX')) === 'OK'
        ? { ok: true }
        : { ok: false, active: run };
    return { ok: false, active };
  }

  /** Replaces the lock's record (same job), e.g. once the progress comment exists. */
  async updateIssue(issue: string, run: ActiveRun): Promise<void> {
    await this.redis.set(this.activeKey(issue), JSON.stringify(run), 'EX', this.activeTtlS);
  }

  async activeRun(issue: string): Promise<ActiveRun | null> {
    const raw = await this.redis.get(this.activeKey(issue));
    if (!raw) return null;
    const parsed = ActiveRun.safeParse(JSON.parse(raw));
    return parsed.success ? parsed.data : null;
  }

  async releaseIssue(issue: string, jobId: string): Promise<void> {
    await this.redis.eval(RELEASE, 1, this.activeKey(issue), jobId);
  }

  async setLastReproduced(issue: string, run: LastReproduced): Promise<void> {
    await this.redis.set(`${this.prefix}:last:${issue}`, JSON.stringify(run), 'EX', 30 * 86_400);
  }

  async lastReproduced(issue: string): Promise<LastReproduced | null> {
    const raw = await this.redis.get(`${this.prefix}:last:${issue}`);
    if (!raw) return null;
    const parsed = LastReproduced.safeParse(JSON.parse(raw));
    return parsed.success ? parsed.data : null;
  }

  /** True for the one caller that gets to post a job's final word (worker event, stall handler, processor). */
  async claimFinalWord(jobId: string): Promise<boolean> {
    return (await this.redis.set(this.finalKey(jobId), '1', 'EX', 7 * 86_400, 'NX')) === 'OK';
  }

  /**
   * Whether a job's final word is already claimed: a second run of the same job (its lock lost while Redis was
   * unreachable, so the stalled checker handed it out again) ends here instead of publishing twice.
   */
  async hasFinalWord(jobId: string): Promise<boolean> {
    return (await this.redis.exists(this.finalKey(jobId))) === 1;
  }

  /** Gives a claim back when the post it was for failed, so a retry of the job can still post it. */
  async releaseFinalWord(jobId: string): Promise<void> {
    await this.redis.del(this.finalKey(jobId));
  }

  private finalKey(jobId: string): string {
    return `${this.prefix}:final:${jobId}`;
  }

  private activeKey(issue: string): string {
    return `${this.prefix}:active:${issue}`;
  }
}
