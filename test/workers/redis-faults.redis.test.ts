import { Queue, type Job } from 'bullmq';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { RunPipeline } from '../../src/queue/process-repro-job.js';
import { REPRO_QUEUE } from '../../src/queue/repro-job.js';
import { commentPayload, postWebhook } from '../github/webhook-fixtures.js';
import { makeGitRepo, reproducedOutcome, SECRET, startHarness, type Harness } from './harness.js';
import { waitFor } from '../helpers/poll.js';

// Issue 25, item 5: Redis away longer than the job lock (the job handed out a second time) or restarted without
// persistence (RepGen's own records gone) must never give an issue two check runs, a label twice or an edit over
// its final word.

let h: Harness;
let queue: Queue;
let repo: ReturnType<typeof makeGitRepo>;
let issue = 600;

// Each test has its own harness and queue prefix: one test empties its Redis prefix (a restart without persistence),
// and a test that fails leaves no worker behind for the next one.
beforeAll(() => {
  repo = makeGitRepo();
});
afterAll(() => {
  repo?.cleanup();
});
beforeEach(async () => {
  h = await startHarness('faults', { github: { issues: {} }, env: { REPGEN_REPO_RATE_LIMIT: '1000' } });
  queue = new Queue(REPRO_QUEUE, { connection: h.redis, prefix: h.prefix });
  issue += 1;
  h.gh.options.issues![issue] = { title: 'matmul shape error', body: 'x @ y fails with RuntimeError: mat1 and mat2 shapes' };
});
afterEach(async () => {
  await queue?.close();
  await h?.close();
});

const trigger = () =>
  postWebhook(
    h.app.url,
    'issue_comment',
    commentPayload('/repgen', { issueNumber: issue, sender: { login: 'Codertocat' }, cloneUrl: repo.path }),
    {
      secret: SECRET,
    },
  );
const progressComment = () => [...h.gh.comments.values()].find((c) => c.issue === issue && c.body.includes('repgen:progress'));
const jobOfIssue = (): Promise<Job | undefined> =>
  queue.getJobs(['completed']).then((jobs) => jobs.find((j) => (j.data as { issueNumber: number }).issueNumber === issue));
const edits = () => h.gh.callsTo('PATCH', /\/issues\/comments\/\d+$/).filter((c) => c.path.endsWith(`/${progressComment()?.id}`)).length;
const labelPosts = () => h.gh.callsTo('POST', new RegExp(`/issues/${issue}/labels$`)).length;
const checkRunsOf = (jobId: string) => h.gh.checkRuns.filter((c) => String(c.external_id).endsWith(`@${jobId}`));

/** Runs the job once to its result; returns the finished job. */
async function firstRun(runs: { n: number }): Promise<Job> {
  await trigger();
  await waitFor(() => /Reproduced/.test(progressComment()?.body ?? ''), { what: 'the result' });
  const job = await waitFor(jobOfIssue, { what: 'the completed job' });
  expect(runs.n).toBe(1);
  expect(checkRunsOf(job.id!)).toHaveLength(1);
  expect(labelPosts()).toBe(1);
  return job;
}

/** Hands a finished job out once more, as the stalled checker does when its lock expired, and waits for its end. */
async function handOutAgain(job: Job): Promise<{ status: string }> {
  await job.retry('completed');
  return waitFor(
    async () => {
      const again = await queue.getJob(job.id!);
      return again && (await again.getState()) === 'completed' ? (again.returnvalue as { status: string }) : null;
    },
    { what: 'the second run' },
  );
}

describe('publishing under Redis faults', () => {
  it('a job handed out again after its final word runs nothing and posts nothing (already_ended)', async () => {
    const runs = { n: 0 };
    const pipeline: RunPipeline = async () => {
      runs.n += 1;
      return reproducedOutcome();
    };
    const w = await h.startWorker(pipeline);
    const job = await firstRun(runs);
    const before = { edits: edits(), body: progressComment()?.body };
    const second = await handOutAgain(job);
    await w.close(0);
    expect(second.status).toBe('already_ended');
    expect(runs.n).toBe(1);
    expect(checkRunsOf(job.id!)).toHaveLength(1);
    expect(labelPosts()).toBe(1);
    expect(edits()).toBe(before.edits);
    expect(progressComment()?.body).toBe(before.body);
  });

  it('with its final-word record lost (Redis restarted without persistence), a second completion edits the check run and adds no label', async () => {
    const runs = { n: 0 };
    const w = await h.startWorker(async () => {
      runs.n += 1;
      return reproducedOutcome();
    });
    const job = await firstRun(runs);
    await h.redis.del(`${h.prefix}:final:${job.id}`);
    const second = await handOutAgain(job);
    await w.close(0);
    expect(second.status).toBe('reproduced');
    expect(runs.n).toBe(2);
    expect(checkRunsOf(job.id!)).toHaveLength(1);
    expect(h.gh.callsTo('PATCH', /\/check-runs\/\d+$/)).toHaveLength(1);
    expect(labelPosts()).toBe(1);
    expect(h.gh.labels.get(issue)).toEqual(['repro:confirmed']);
  });

  it('a job handed out twice at once publishes once: the run that finishes second ends already_ended', async () => {
    let release: () => void = () => undefined;
    const gate = new Promise<void>((r) => (release = r));
    const runs = { n: 0 };
    // Two workers, as when the first one's lock expired while it kept running: the first run waits at the gate.
    const w = await h.startWorker(async () => {
      runs.n += 1;
      if (runs.n === 1) await gate;
      return reproducedOutcome();
    });
    await trigger();
    const active = await waitFor(
      async () => (await queue.getJobs(['active'])).find((j) => (j.data as { issueNumber: number }).issueNumber === issue),
      { what: 'the running job' },
    );
    await waitFor(() => runs.n === 1, { what: 'the first run' });
    // What BullMQ's stalled checker does to a job whose lock ran out: it goes back to wait and another worker runs it.
    await h.redis.del(`${h.prefix}:${REPRO_QUEUE}:${active.id}:lock`);
    await h.redis.lrem(`${h.prefix}:${REPRO_QUEUE}:active`, 0, active.id!);
    await h.redis.lpush(`${h.prefix}:${REPRO_QUEUE}:wait`, active.id!);
    await waitFor(() => runs.n === 2, { what: 'the second run' });
    await waitFor(() => /Reproduced/.test(progressComment()?.body ?? ''), { what: 'the result' });
    const afterSecond = edits();
    release();
    await waitFor(async () => !(await queue.getJobs(['active'])).some((j) => j.id === active.id), { what: 'the first run to end' });
    await w.close(0);
    expect(checkRunsOf(active.id!)).toHaveLength(1);
    expect(labelPosts()).toBe(1);
    expect(edits()).toBe(afterSecond);
  });

  it('a run queued when Redis lost its data does not stay "queued" forever: the worker says it was lost; a live one runs', async () => {
    await trigger();
    const lost = issue;
    await waitFor(() => /is queued/.test(progressComment()?.body ?? ''), { what: 'the queued comment' });
    // Redis restarted without persistence: the job, its locks and RepGen's records are gone.
    const keys = await h.redis.keys(`${h.prefix}:*`);
    if (keys.length) await h.redis.del(...keys);
    issue += 1;
    h.gh.options.issues![issue] = { title: 'matmul shape error', body: 'x @ y fails with RuntimeError: mat1 and mat2 shapes' };
    await trigger();
    const live = issue;
    await waitFor(() => /is queued/.test(progressComment()?.body ?? ''), { what: 'the second queued comment' });
    const w = await h.startWorker(async () => reproducedOutcome(), { REPGEN_LOST_RUN_SWEEP_S: '1' }, { lostRunGraceMs: 0 });
    const commentOf = (n: number) =>
      [...h.gh.comments.values()].find((c) => c.issue === n && c.body.includes('repgen:progress'))?.body ?? '';
    // Each wait returns the body it saw, and the test asserts on that body, not on a later look at the comment.
    const matching = (n: number, re: RegExp, what: string) =>
      waitFor(
        () => {
          const body = commentOf(n);
          return re.test(body) ? body : null;
        },
        { what },
      );
    const lostBody = await matching(lost, /lost this run/, 'the lost run said');
    const liveBody = await matching(live, /Reproduced/, 'the live run finished');
    await w.close(0);
    expect(lostBody).toContain('`/repgen` starts it again');
    expect(liveBody).not.toContain('lost this run');
  });
});
