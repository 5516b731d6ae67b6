import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RepoConfig } from '../../src/config/repo-config.js';
import { enqueueRepro } from '../../src/queue/enqueue.js';
import { InstallationSlots } from '../../src/queue/installation-slots.js';
import { reserveRepoSlot } from '../../src/queue/rate-limit.js';
import { REPRO_QUEUE, reproJobId, type ReproJob } from '../../src/queue/repro-job.js';
import { RunRegistry } from '../../src/queue/run-registry.js';

const PREFIX = `repgen-test-queue-${process.pid}`;
let redis: Redis;
let queue: Queue;

function job(over: Partial<ReproJob> = {}): ReproJob {
  return {
    v: 1,
    kind: 'repro',
    deliveryId: 'd-1',
    installationId: 1,
    owner: 'o',
    repo: 'r',
    issueNumber: 1,
    issueUrl: 'https://github.com/o/r/issues/1',
    cloneUrl: 'https://github.com/o/r.git',
    ref: 'main',
    gpu: false,
    llm: null,
    commentId: 5,
    commentUrl: 'https://github.com/o/r/issues/1#issuecomment-5',
    requestedBy: 'me',
    trigger: 'comment',
    config: RepoConfig.parse({}),
    enqueuedAt: Date.now(),
    ...over,
  };
}

beforeAll(async () => {
  redis = new Redis('redis://127.0.0.1:6379', { maxRetriesPerRequest: null });
  queue = new Queue(REPRO_QUEUE, { connection: redis, prefix: PREFIX });
});
afterAll(async () => {
  await queue.obliterate({ force: true }).catch(() => undefined);
  await queue.close();
  const keys = await redis.keys(`${PREFIX}:*`);
  if (keys.length) await redis.del(...keys);
  await redis.quit();
});

describe('enqueueRepro', () => {
  it('stores validated data with attempts and exponential backoff under a deterministic id', async () => {
    const { jobId } = await enqueueRepro(queue, job({ deliveryId: 'abc:1/2' }), { attempts: 4, backoffMs: 1000 });
    expect(jobId).toBe('repro-abc_1_2');
    const stored = await queue.getJob(jobId);
    expect(stored?.opts).toMatchObject({ attempts: 4, backoff: { type: 'exponential', delay: 1000 } });
    expect(stored?.data).toMatchObject({ owner: 'o', issueNumber: 1 });
  });

  it('adds nothing for a second copy of the same delivery', async () => {
    await enqueueRepro(queue, job({ deliveryId: 'dup' }));
    await enqueueRepro(queue, job({ deliveryId: 'dup', issueNumber: 99 }));
    const all = await queue.getJobs(['waiting']);
    expect(all.filter((j) => j.id === reproJobId({ kind: 'repro', deliveryId: 'dup' })).map((j) => j.data.issueNumber)).toEqual([1]);
  });

  it('refuses data that does not match ReproJob before it reaches Redis', async () => {
    await expect(enqueueRepro(queue, { ...job(), issueNumber: -1 })).rejects.toThrow();
    await expect(enqueueRepro(queue, { ...job(), extra: 1 } as ReproJob)).rejects.toThrow();
  });

  it('delays the job when asked (the repository rate limit)', async () => {
    const { jobId } = await enqueueRepro(queue, job({ deliveryId: 'later' }), { delayMs: 60_000 });
    expect(await (await queue.getJob(jobId))?.getState()).toBe('delayed');
  });
});

describe('reserveRepoSlot', () => {
  it('lets `limit` runs start now, then spaces the rest one window after the run they replace', async () => {
    const rate = { limit: 2, windowMs: 10_000 };
    const t0 = 1_000_000;
    const delays = [];
    for (let i = 0; i < 5; i++) delays.push(await reserveRepoSlot(redis, PREFIX, 'O/R', `j${i}`, rate, t0 + i));
    expect(delays).toEqual([0, 0, 10_000 - 2, 10_000 - 2, 20_000 - 4]);
    // Another repository is not affected.
    expect(await reserveRepoSlot(redis, PREFIX, 'o/other', 'x', rate, t0)).toBe(0);
    // Once the window has passed, runs start at once again.
    expect(await reserveRepoSlot(redis, PREFIX, 'o/r2', 'y', rate, t0)).toBe(0);
    expect(await reserveRepoSlot(redis, PREFIX, 'o/r2', 'z', rate, t0 + 60_000)).toBe(0);
  });
});

describe('InstallationSlots', () => {
  it('caps active runs per installation, renews a holder, and frees a slot whose lease ran out', async () => {
    const slots = new InstallationSlots(redis, PREFIX, { cap: 2, leaseMs: 1000 });
    const t = 5_000_000;
    expect(await slots.acquire(7, 'a', t)).toBe(true);
    expect(await slots.acquire(7, 'b', t)).toBe(true);
    expect(await slots.acquire(7, 'c', t)).toBe(false);
    expect(await slots.acquire(8, 'c', t)).toBe(true);
    expect(await slots.acquire(7, 'a', t + 500)).toBe(true); // a renewal, not a third slot
    await slots.release(7, 'b');
    expect(await slots.acquire(7, 'c', t + 600)).toBe(true);
    // 'a' renewed at t+500 (expires t+1500), 'c' at t+600: at t+1550 'a' is gone (its worker died).
    expect(await slots.acquire(7, 'd', t + 1550)).toBe(true);
    expect(await slots.acquire(7, 'e', t + 1550)).toBe(false);
  });
});

describe('RunRegistry', () => {
  it('one active run per issue; release only by its own job; deliveries claimed once', async () => {
    const reg = new RunRegistry(redis, { prefix: PREFIX });
    const run = { jobId: 'j1', deliveryId: 'd1', commentUrl: 'u1', kind: 'repro' as const, since: 1 };
    expect(await reg.claimIssue('o/r#1', run)).toEqual({ ok: true });
    expect(await reg.claimIssue('o/r#1', { ...run, jobId: 'j2' })).toEqual({ ok: false, active: run });
    await reg.releaseIssue('o/r#1', 'j2');
    expect(await reg.activeRun('o/r#1')).toEqual(run);
    await reg.releaseIssue('o/r#1', 'j1');
    expect(await reg.activeRun('o/r#1')).toBeNull();
    expect(await reg.claimDelivery('dd')).toBe(true);
    expect(await reg.claimDelivery('dd')).toBe(false);
    expect(await reg.claimFinalWord('j1')).toBe(true);
    expect(await reg.claimFinalWord('j1')).toBe(false);
  });
});
