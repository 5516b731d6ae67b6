import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { readAppEnv } from '../../src/config/app-env.js';
import { silentLogger } from '../../src/log.js';
import { ReproJob, REPRO_QUEUE } from '../../src/queue/repro-job.js';
import { startAppServer, type AppServerHandle } from '../../workers/app-server.js';
import { startFakeGithub, type FakeGithub } from './fake-github.js';
import { checkRunRerequestedPayload, commentPayload, labeledPayload, postWebhook, testPrivateKey } from './webhook-fixtures.js';

const SECRET = 'webhook-secret-for-tests';
const PREFIX = `repgen-test-app-${process.pid}`;
const ADMIN = { login: 'Codertocat' };

let gh: FakeGithub;
let app: AppServerHandle;
let redis: Redis;
let queue: Queue;
let issue = 100;

async function cleanRedis(): Promise<void> {
  const keys = await redis.keys(`${PREFIX}:*`);
  if (keys.length) await redis.del(...keys);
}

async function jobs(): Promise<ReproJob[]> {
  const list = await queue.getJobs(['waiting', 'delayed', 'active', 'prioritized']);
  return list.map((j) => ReproJob.parse(j.data));
}

beforeAll(async () => {
  redis = new Redis('redis://127.0.0.1:6379', { maxRetriesPerRequest: null });
  await cleanRedis();
  gh = await startFakeGithub({ roles: { Codertocat: 'admin', reader: 'read', triager: 'triage', maintainer: 'maintain' } });
  const env = readAppEnv({
    APP_ID: '1',
    PRIVATE_KEY: testPrivateKey(),
    WEBHOOK_SECRET: SECRET,
    REPGEN_QUEUE_PREFIX: PREFIX,
    REPGEN_REPO_RATE_LIMIT: '50',
    LOG_LEVEL: 'fatal',
  });
  app = await startAppServer(env, { log: silentLogger, baseUrl: gh.url, port: 0, host: '127.0.0.1' });
  queue = new Queue(REPRO_QUEUE, { connection: redis, prefix: PREFIX });
  // Warm-up: the first request signs the App's JWT and fetches an installation token (cached after).
  await postWebhook(app.url, 'issues', labeledPayload('needs-repro', { issueNumber: 99_999, sender: ADMIN }), { secret: SECRET });
});

afterAll(async () => {
  await app?.close();
  await queue?.close();
  await cleanRedis();
  await redis?.quit();
  await gh?.close();
});

beforeEach(() => {
  issue += 1;
  gh.calls.length = 0;
  gh.options.config = null;
});

const post = (event: string, payload: unknown, opts: { deliveryId?: string; signature?: string | null } = {}) =>
  postWebhook(app.url, event, payload, { secret: SECRET, ...opts });
const commentsOn = (n: number) => [...gh.comments.values()].filter((c) => c.issue === n);

describe('webhook signature', () => {
  it('rejects an unsigned POST and a wrongly signed one, touching neither GitHub nor the queue', async () => {
    const payload = labeledPayload('needs-repro', { issueNumber: issue, sender: ADMIN });
    const unsigned = await post('issues', payload, { signature: null });
    const wrong = await post('issues', payload, { signature: `sha256=${'0'.repeat(64)}` });
    expect(unsigned.status).toBeGreaterThanOrEqual(400);
    expect(wrong.status).toBeGreaterThanOrEqual(400);
    expect(gh.calls).toEqual([]);
    expect((await jobs()).filter((j) => j.issueNumber === issue)).toEqual([]);
  });
});

describe('issues.labeled', () => {
  it('queues one validated job, reacts 👀 and posts one progress comment before it answers', async () => {
    const res = await post('issues', labeledPayload('needs-repro', { issueNumber: issue, sender: ADMIN }));
    expect(res.status).toBe(200);
    const mine = (await jobs()).filter((j) => j.issueNumber === issue);
    expect(mine).toHaveLength(1);
    expect(mine[0]).toMatchObject({
      kind: 'repro',
      trigger: 'label',
      owner: 'Codertocat',
      repo: 'Hello-World',
      ref: 'master',
      requestedBy: 'Codertocat',
      deliveryId: res.deliveryId,
    });
    expect(gh.callsTo('POST', new RegExp(`/issues/${issue}/reactions$`)).map((c) => c.body)).toEqual([{ content: 'eyes' }]);
    const comments = commentsOn(issue);
    expect(comments).toHaveLength(1);
    expect(comments[0]?.body).toContain('queued');
    expect(mine[0]?.commentId).toBe(comments[0]?.id);
  });

  it('makes one job of duplicate deliveries of the same webhook', async () => {
    const payload = labeledPayload('needs-repro', { issueNumber: issue, sender: ADMIN });
    const first = await post('issues', payload);
    const again = await post('issues', payload, { deliveryId: first.deliveryId });
    const concurrent = await Promise.all([1, 2, 3].map(() => post('issues', payload, { deliveryId: first.deliveryId })));
    expect([again, ...concurrent].every((r) => r.status === 200)).toBe(true);
    expect((await jobs()).filter((j) => j.issueNumber === issue)).toHaveLength(1);
    expect(commentsOn(issue)).toHaveLength(1);
  });

  it('answers a second trigger on a busy issue with a link to the running run', async () => {
    await post('issues', labeledPayload('needs-repro', { issueNumber: issue, sender: ADMIN }));
    const running = commentsOn(issue)[0];
    await post('issue_comment', commentPayload('/repgen --gpu', { issueNumber: issue, sender: ADMIN }));
    expect((await jobs()).filter((j) => j.issueNumber === issue)).toHaveLength(1);
    const reply = commentsOn(issue)[1];
    expect(reply?.body).toContain('already in progress');
    expect(reply?.body).toContain(running?.html_url);
  });

  it('ignores other labels, bots and pull requests', async () => {
    await post('issues', labeledPayload('bug', { issueNumber: issue, sender: ADMIN }));
    await post('issues', labeledPayload('needs-repro', { issueNumber: issue, sender: { login: 'dependabot[bot]', type: 'Bot' } }));
    expect(commentsOn(issue)).toEqual([]);
    expect(gh.callsTo('POST', /reactions/)).toEqual([]);
    expect((await jobs()).filter((j) => j.issueNumber === issue)).toEqual([]);
  });

  it('refuses an unauthorised user politely, once per person and issue', async () => {
    const payload = () => labeledPayload('needs-repro', { issueNumber: issue, sender: { login: 'reader' } });
    await post('issues', payload());
    await post('issues', payload());
    await post('issue_comment', commentPayload('/repgen', { issueNumber: issue, sender: { login: 'reader' } }));
    const comments = commentsOn(issue);
    expect(comments).toHaveLength(1);
    expect(comments[0]?.body).toMatch(/^Sorry, reader /);
    expect((await jobs()).filter((j) => j.issueNumber === issue)).toEqual([]);
    // Someone GitHub does not know as a collaborator (404 on the permission call) is refused the same way.
    await post('issue_comment', commentPayload('/repgen', { issueNumber: issue, sender: { login: 'stranger' } }));
    expect(commentsOn(issue)).toHaveLength(2);
  });

  it('lets triagers trigger only when the config lists triage', async () => {
    await post('issue_comment', commentPayload('/repgen', { issueNumber: issue, sender: { login: 'triager' } }));
    expect(commentsOn(issue)[0]?.body).toMatch(/^Sorry/);
    issue += 1;
    gh.options.config = 'trigger: [admin, maintain, write, triage]\n';
    await post('issue_comment', commentPayload('/repgen', { issueNumber: issue, sender: { login: 'triager' } }));
    expect((await jobs()).filter((j) => j.issueNumber === issue)).toHaveLength(1);
  });

  it('uses the configured label and carries the config into the job', async () => {
    gh.options.config = 'label: repro-please\ngpu: true\ncaps:\n  minutes: 5\n';
    await post('issues', labeledPayload('needs-repro', { issueNumber: issue, sender: ADMIN }));
    expect(commentsOn(issue)).toEqual([]);
    await post('issues', labeledPayload('repro-please', { issueNumber: issue, sender: ADMIN }));
    const [job] = (await jobs()).filter((j) => j.issueNumber === issue);
    expect(job?.gpu).toBe(true);
    expect(job?.config.caps.minutes).toBe(5);
  });

  it('answers a bad config with a comment naming the bad key, and runs nothing', async () => {
    gh.options.config = 'label: needs-repro\ncaps:\n  minuets: 5\n';
    await post('issues', labeledPayload('needs-repro', { issueNumber: issue, sender: ADMIN }));
    const [comment] = commentsOn(issue);
    expect(comment?.body).toContain('`caps.minuets`: is not a known setting');
    expect((await jobs()).filter((j) => j.issueNumber === issue)).toEqual([]);
  });

  it('logs and ignores a signed but malformed payload (no crash, nothing posted)', async () => {
    const payload = labeledPayload('needs-repro', { issueNumber: issue, sender: ADMIN }) as Record<string, unknown>;
    delete payload.issue;
    const res = await post('issues', payload);
    expect(res.status).toBe(200);
    expect(gh.calls).toEqual([]);
  });
});

describe('/repgen comments', () => {
  it('parses options into the job and puts 👀 on the comment', async () => {
    const res = await post(
      'issue_comment',
      commentPayload('/repgen --gpu --ref 0123abc --llm openai', { issueNumber: issue, sender: { login: 'maintainer' } }),
    );
    expect(res.status).toBe(200);
    const [job] = (await jobs()).filter((j) => j.issueNumber === issue);
    expect(job).toMatchObject({ gpu: true, ref: '0123abc', llm: 'openai', trigger: 'comment', requestedBy: 'maintainer' });
    expect(gh.callsTo('POST', /\/issues\/comments\/\d+\/reactions$/).map((c) => c.body)).toEqual([{ content: 'eyes' }]);
  });

  it('answers an unknown command with the help text', async () => {
    await post('issue_comment', commentPayload('/repgen frobnicate', { issueNumber: issue, sender: ADMIN }));
    const [comment] = commentsOn(issue);
    expect(comment?.body).toContain('unknown command `frobnicate`');
    expect(comment?.body).toContain('| `/repgen cancel` |');
    expect((await jobs()).filter((j) => j.issueNumber === issue)).toEqual([]);
  });

  it('ignores comments without a command and comments by bots (its own help text included)', async () => {
    await post('issue_comment', commentPayload('thanks, will look', { issueNumber: issue, sender: ADMIN }));
    await post('issue_comment', commentPayload('/repgen', { issueNumber: issue, sender: { login: 'repgen[bot]', type: 'Bot' } }));
    expect(gh.calls).toEqual([]);
  });

  it('starts nothing for /repgen shown in a fenced or an indented code block, or in a quote', async () => {
    for (const body of ['to rerun, type:\n```\n/repgen --gpu\n```', 'like this:\n\n    /repgen', '> /repgen\nthat did not work']) {
      expect((await post('issue_comment', commentPayload(body, { issueNumber: issue, sender: ADMIN }))).status).toBe(200);
    }
    expect(gh.calls).toEqual([]);
    expect((await jobs()).filter((j) => j.issueNumber === issue)).toEqual([]);
  });

  it('cancels a queued run: the job is removed and its comment says so', async () => {
    await post('issue_comment', commentPayload('/repgen', { issueNumber: issue, sender: ADMIN }));
    const [progress] = commentsOn(issue);
    await post('issue_comment', commentPayload('/repgen cancel', { issueNumber: issue, sender: ADMIN }));
    expect((await jobs()).filter((j) => j.issueNumber === issue)).toEqual([]);
    expect(gh.comments.get(progress?.id ?? 0)?.body).toContain('cancelled');
    // The issue is free again: a new run can start.
    await post('issue_comment', commentPayload('/repgen', { issueNumber: issue, sender: ADMIN }));
    expect((await jobs()).filter((j) => j.issueNumber === issue)).toHaveLength(1);
  });

  it('says what is running on /repgen status, and that nothing is when nothing is', async () => {
    await post('issue_comment', commentPayload('/repgen status', { issueNumber: issue, sender: ADMIN }));
    expect(commentsOn(issue)[0]?.body).toContain('No RepGen run is in progress');
    await post('issue_comment', commentPayload('/repgen', { issueNumber: issue, sender: ADMIN }));
    await post('issue_comment', commentPayload('/repgen status', { issueNumber: issue, sender: ADMIN }));
    expect(commentsOn(issue)[2]?.body).toMatch(/A RepGen run is (waiting|delayed)/);
  });

  it('refuses /repgen pr when nothing was reproduced yet, and when PRs are off', async () => {
    await post('issue_comment', commentPayload('/repgen pr', { issueNumber: issue, sender: ADMIN }));
    expect(commentsOn(issue)[0]?.body).toContain('no reproduced run');
    gh.options.config = 'pr: off\n';
    await post('issue_comment', commentPayload('/repgen pr', { issueNumber: issue, sender: ADMIN }));
    expect(commentsOn(issue)[1]?.body).toContain('turned off');
  });
});

describe('check_run.rerequested', () => {
  it("re-runs the issue named by RepGen's check run, and ignores other apps' check runs", async () => {
    await post('check_run', checkRunRerequestedPayload(issue, { name: 'CI', sender: ADMIN }));
    expect(gh.calls).toEqual([]);
    const res = await post('check_run', checkRunRerequestedPayload(issue, { sender: ADMIN }));
    expect(res.status).toBe(200);
    const [job] = (await jobs()).filter((j) => j.issueNumber === issue);
    expect(job).toMatchObject({
      trigger: 'check_run',
      owner: 'github',
      repo: 'hello-world',
      issueUrl: `http://github.com/github/hello-world/issues/${issue}`,
    });
    expect(commentsOn(issue)).toHaveLength(1);
  });
});

describe('per-repository rate limit', () => {
  it('queues runs past the limit with a delay, and says when they will start', async () => {
    const prefix = `${PREFIX}-rate`;
    const env = readAppEnv({
      APP_ID: '1',
      PRIVATE_KEY: testPrivateKey(),
      WEBHOOK_SECRET: SECRET,
      REPGEN_QUEUE_PREFIX: prefix,
      REPGEN_REPO_RATE_LIMIT: '1',
      REPGEN_REPO_RATE_WINDOW_S: '600',
      LOG_LEVEL: 'fatal',
    });
    const limited = await startAppServer(env, { log: silentLogger, baseUrl: gh.url, port: 0, host: '127.0.0.1' });
    try {
      const first = issue;
      const second = issue + 1;
      issue += 1;
      await postWebhook(limited.url, 'issues', labeledPayload('needs-repro', { issueNumber: first, sender: ADMIN }), { secret: SECRET });
      await postWebhook(limited.url, 'issues', labeledPayload('needs-repro', { issueNumber: second, sender: ADMIN }), { secret: SECRET });
      const states = await Promise.all(
        (await limited.queue.getJobs(['waiting', 'delayed'])).map(
          async (j) => [j.data.issueNumber, await j.getState(), j.opts.delay] as const,
        ),
      );
      expect(states.sort()).toEqual([
        [first, 'waiting', 0],
        [second, 'delayed', expect.any(Number)],
      ]);
      expect(states.find((s) => s[0] === second)?.[2]).toBeGreaterThan(590_000);
      expect(commentsOn(second)[0]?.body).toContain("It will start in about 10 min (this repository's rate limit)");
    } finally {
      await limited.queue.obliterate({ force: true }).catch(() => undefined);
      await limited.close();
      const keys = await redis.keys(`${prefix}:*`);
      if (keys.length) await redis.del(...keys);
    }
  });
});
