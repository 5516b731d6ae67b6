import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { readAppEnv } from '../../src/config/app-env.js';
import { silentLogger } from '../../src/log.js';
import { issueKey } from '../../src/queue/repro-job.js';
import { RunRegistry } from '../../src/queue/run-registry.js';
import { REPRO_QUEUE } from '../../src/queue/repro-job.js';
import { VERIFY_JOB, VerifyJob } from '../../src/queue/verify-job.js';
import { startAppServer, type AppServerHandle } from '../../workers/app-server.js';
import { startFakeGithub, type FakeGithub } from './fake-github.js';
import {
  checkRunRerequestedPayload,
  commentPayload,
  postWebhook,
  prCommentPayload,
  pullRequestPayload,
  testPrivateKey,
} from './webhook-fixtures.js';

/**
 * The App's side of a fixing PR: real pull_request and issue_comment payloads against the fake GitHub,
 * the real Redis queue. What runs at the PR head is test/workers/verify-worker.redis.test.ts.
 */
const SECRET = 'webhook-secret-for-tests';
const PREFIX = `repgen-test-verify-${process.pid}`;
const ADMIN = { login: 'Codertocat' };
const HEAD = 'b'.repeat(40);

let gh: FakeGithub;
let app: AppServerHandle;
let redis: Redis;
let queue: Queue;
let registry: RunRegistry;
let issue = 500;
let pr = 9000;

async function cleanRedis(): Promise<void> {
  const keys = await redis.keys(`${PREFIX}:*`);
  if (keys.length) await redis.del(...keys);
}

async function verifyJobs(): Promise<VerifyJob[]> {
  const list = await queue.getJobs(['waiting', 'delayed', 'active', 'prioritized']);
  return list.filter((j) => j.name === VERIFY_JOB).map((j) => VerifyJob.parse(j.data));
}

const reproduce = (n: number, owner = 'Codertocat', repo = 'Hello-World') =>
  registry.setLastReproduced(issueKey({ owner, repo, issueNumber: n }), {
    script: 'import torch\nraise RuntimeError("boom")\n',
    sha: 'c'.repeat(40),
    summary: 'reproduced',
    commentUrl: `https://github.com/Codertocat/Hello-World/issues/${n}#issuecomment-1`,
    ref: 'master',
    markers: ['RuntimeError: boom'],
    at: Date.now(),
  });

beforeAll(async () => {
  redis = new Redis('redis://127.0.0.1:6379', { maxRetriesPerRequest: null });
  await cleanRedis();
  registry = new RunRegistry(redis, { prefix: PREFIX });
  gh = await startFakeGithub({ roles: { Codertocat: 'admin', reader: 'read' }, pulls: {} });
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
  await postWebhook(app.url, 'issue_comment', prCommentPayload('/repgen verify', { prNumber: 1, sender: ADMIN }), { secret: SECRET });
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
  pr += 1;
  gh.calls.length = 0;
  gh.checkRuns.length = 0;
  gh.options.config = null;
});

const post = (event: string, payload: unknown, deliveryId?: string) =>
  postWebhook(app.url, event, payload, { secret: SECRET, ...(deliveryId ? { deliveryId } : {}) });
const commentsOn = (n: number) => [...gh.comments.values()].filter((c) => c.issue === n);
const mine = async () => (await verifyJobs()).filter((j) => j.pr.number === pr);

describe('pull_request opened / synchronize', () => {
  it('queues a fix check for the linked, reproduced issue and shows it on the PR at once (queued check run)', async () => {
    await reproduce(issue);
    const res = await post(
      'pull_request',
      pullRequestPayload('opened', {
        body: `This changes the stem.\n\nFixes #${issue}`,
        number: pr,
        headSha: HEAD,
        headRef: 'fix-stem',
        sender: ADMIN,
      }),
    );
    expect(res.status).toBe(200);
    const jobs = await mine();
    expect(jobs).toHaveLength(1);
    expect(jobs[0]).toMatchObject({
      kind: 'verify',
      issueNumber: issue,
      issueUrl: `https://github.com/Codertocat/Hello-World/issues/${issue}`,
      pr: { number: pr, headSha: HEAD, headRef: 'fix-stem' },
      trigger: 'pull_request',
      requestedBy: 'Codertocat',
      owner: 'Codertocat',
      repo: 'Hello-World',
    });
    const [check] = gh.checkRuns;
    expect(check).toMatchObject({
      name: `RepGen fix check (#${issue})`,
      head_sha: HEAD,
      status: 'queued',
      external_id: `verify:codertocat/hello-world#${issue}@pr${pr}`,
    });
    expect(jobs[0]?.checkRunId).toBe(check?.id);
    // Nothing is said in the PR's conversation: the check run is the answer.
    expect(commentsOn(pr)).toEqual([]);
  });

  it('checks again on a push (synchronize), one job per delivery however often GitHub redelivers', async () => {
    await reproduce(issue);
    const payload = pullRequestPayload('synchronize', { body: `Closes #${issue}`, number: pr, headSha: HEAD, sender: ADMIN });
    const first = await post('pull_request', payload);
    await Promise.all([1, 2].map(() => post('pull_request', payload, first.deliveryId)));
    expect(await mine()).toHaveLength(1);
    expect(gh.checkRuns).toHaveLength(1);
  });

  it('costs no GitHub call for a PR that links nothing, links another repository, or links an issue without a reproduction', async () => {
    for (const body of ['Refactor, no issue.', `Fixes other/repo#${issue}`, `Fixes #${issue + 100}`, null]) {
      expect((await post('pull_request', pullRequestPayload('opened', { body, number: pr, headSha: HEAD, sender: ADMIN }))).status).toBe(
        200,
      );
    }
    expect(gh.calls).toEqual([]);
    expect(await mine()).toEqual([]);
  });

  it('ignores bots and other actions (closed)', async () => {
    await reproduce(issue);
    await post(
      'pull_request',
      pullRequestPayload('opened', {
        body: `Fixes #${issue}`,
        number: pr,
        headSha: HEAD,
        sender: { login: 'dependabot[bot]', type: 'Bot' },
      }),
    );
    await post('pull_request', pullRequestPayload('closed', { body: `Fixes #${issue}`, number: pr, headSha: HEAD, sender: ADMIN }));
    expect(gh.calls).toEqual([]);
    expect(await mine()).toEqual([]);
  });

  it('does not run for a sender without a trigger role: a neutral check run says a maintainer can comment /repgen verify', async () => {
    await reproduce(issue);
    await post(
      'pull_request',
      pullRequestPayload('opened', { body: `Fixes #${issue}`, number: pr, headSha: HEAD, sender: { login: 'reader' } }),
    );
    expect(await mine()).toEqual([]);
    expect(gh.checkRuns).toEqual([
      expect.objectContaining({ name: `RepGen fix check (#${issue})`, status: 'completed', conclusion: 'neutral', head_sha: HEAD }),
    ]);
    expect(JSON.stringify(gh.checkRuns[0])).toContain('/repgen verify');
    expect(commentsOn(pr)).toEqual([]);
  });

  it('makes one fix check per reproduced issue when a PR fixes several', async () => {
    await reproduce(issue);
    await reproduce(issue + 1);
    await post(
      'pull_request',
      pullRequestPayload('opened', {
        body: `Fixes #${issue}\nFixes #${issue + 1}\nFixes #${issue + 2}`,
        number: pr,
        headSha: HEAD,
        sender: ADMIN,
      }),
    );
    expect((await mine()).map((j) => j.issueNumber).sort()).toEqual([issue, issue + 1]);
    expect(gh.checkRuns.map((c) => c.name).sort()).toEqual([`RepGen fix check (#${issue})`, `RepGen fix check (#${issue + 1})`]);
    issue += 2;
  });
});

describe('/repgen verify on a pull request', () => {
  it('reads the PR, checks its linked issue at the head, and puts 👀 on the comment', async () => {
    await reproduce(issue);
    gh.options.pulls![pr] = { body: `Resolves #${issue}`, headSha: HEAD, headRef: 'fix' };
    const res = await post('issue_comment', prCommentPayload('/repgen verify', { prNumber: pr, sender: ADMIN }));
    expect(res.status).toBe(200);
    const [job] = await mine();
    expect(job).toMatchObject({
      issueNumber: issue,
      trigger: 'comment',
      pr: { number: pr, headSha: HEAD, headRef: 'fix', url: `https://github.com/Codertocat/Hello-World/pull/${pr}` },
    });
    expect(gh.callsTo('POST', /\/issues\/comments\/\d+\/reactions$/).map((c) => c.body)).toEqual([{ content: 'eyes' }]);
    expect(gh.checkRuns).toHaveLength(1);
  });

  it('takes the issue from `/repgen verify #N` when the description links none', async () => {
    await reproduce(issue);
    gh.options.pulls![pr] = { body: 'A fix.', headSha: HEAD, headRef: 'fix' };
    await post('issue_comment', prCommentPayload(`/repgen verify #${issue}`, { prNumber: pr, sender: ADMIN }));
    expect((await mine()).map((j) => j.issueNumber)).toEqual([issue]);
  });

  it('says what is missing: no linked issue, or no reproduction of it', async () => {
    gh.options.pulls![pr] = { body: 'A fix.', headSha: HEAD, headRef: 'fix' };
    await post('issue_comment', prCommentPayload('/repgen verify', { prNumber: pr, sender: ADMIN }));
    expect(commentsOn(pr)[0]?.body).toContain('`/repgen verify #N`');
    await post('issue_comment', prCommentPayload(`/repgen verify #${issue}`, { prNumber: pr, sender: ADMIN }));
    expect(commentsOn(pr)[1]?.body).toContain(`no confirmed reproduction of #${issue}`);
    expect(await mine()).toEqual([]);
    expect(gh.checkRuns).toEqual([]);
  });

  it('refuses someone without a trigger role, as /repgen does', async () => {
    await reproduce(issue);
    gh.options.pulls![pr] = { body: `Fixes #${issue}`, headSha: HEAD, headRef: 'fix' };
    await post('issue_comment', prCommentPayload('/repgen verify', { prNumber: pr, sender: { login: 'reader' } }));
    expect(commentsOn(pr)[0]?.body).toMatch(/^Sorry, reader /);
    expect(await mine()).toEqual([]);
    expect(gh.checkRuns).toEqual([]);
  });

  it('on an issue, /repgen verify points to the pull request instead of running', async () => {
    await post('issue_comment', commentPayload('/repgen verify', { issueNumber: issue, sender: ADMIN }));
    expect(commentsOn(issue)[0]?.body).toContain('comment it on the pull request');
    expect(await verifyJobs()).not.toContainEqual(expect.objectContaining({ issueNumber: issue }));
  });

  it('other commands on a pull request still run nothing', async () => {
    await post('issue_comment', prCommentPayload('/repgen --gpu', { prNumber: pr, sender: ADMIN }));
    expect(commentsOn(pr)[0]?.body).toContain('/repgen verify');
    expect(await mine()).toEqual([]);
  });
});

describe('Re-run on a fix check', () => {
  it("checks the PR's current head again; other check runs with a look-alike id are not ours", async () => {
    // The check_run example is from github/hello-world.
    await reproduce(issue, 'github', 'hello-world');
    gh.options.pulls![pr] = { body: `Fixes #${issue}`, headSha: HEAD, headRef: 'fix' };
    const rerun = (externalId: string) => {
      const p = checkRunRerequestedPayload(issue, { name: `RepGen fix check (#${issue})`, sender: ADMIN }) as {
        check_run: { external_id: string };
      };
      p.check_run.external_id = externalId;
      return post('check_run', p);
    };
    await rerun(`verify:other/repo#${issue}@pr${pr}`);
    await rerun(`verify:github/hello-world#${issue}@pr${pr};x`);
    expect(gh.calls).toEqual([]);
    expect((await rerun(`verify:github/hello-world#${issue}@pr${pr}`)).status).toBe(200);
    const [job] = await mine();
    expect(job).toMatchObject({
      trigger: 'check_run',
      issueNumber: issue,
      owner: 'github',
      repo: 'hello-world',
      pr: { number: pr, headSha: HEAD },
    });
    expect(gh.checkRuns).toEqual([expect.objectContaining({ name: `RepGen fix check (#${issue})`, status: 'queued', head_sha: HEAD })]);
  });
});
