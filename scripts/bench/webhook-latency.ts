// Benchmark: signed webhook → job queued + 👀 + progress comment (the handler's whole work), and the
// enqueue itself. Real Redis (REDIS_URL, default 127.0.0.1:6379), real Probot, GitHub faked over HTTP
// with an optional per-call latency. Targets: handler p99 ≤ 1 s, enqueue p99 ≤ 20 ms.
//
//   npx tsx scripts/bench/webhook-latency.ts [--webhooks 200] [--enqueues 2000] [--github-latency-ms 0]
import { parseArgs } from 'node:util';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { readAppEnv } from '../../src/config/app-env.js';
import { RepoConfig } from '../../src/config/repo-config.js';
import { silentLogger } from '../../src/log.js';
import { enqueueRepro } from '../../src/queue/enqueue.js';
import { REPRO_QUEUE, type ReproJob } from '../../src/queue/repro-job.js';
import { startFakeGithub } from '../../test/github/fake-github.js';
import { labeledPayload, postWebhook, testPrivateKey } from '../../test/github/webhook-fixtures.js';
import { startAppServer } from '../../workers/app-server.js';

const { values } = parseArgs({
  options: {
    webhooks: { type: 'string', default: '200' },
    enqueues: { type: 'string', default: '2000' },
    'github-latency-ms': { type: 'string', default: '0' },
  },
});
const WEBHOOKS = Number(values.webhooks);
const ENQUEUES = Number(values.enqueues);
const LATENCY = Number(values['github-latency-ms']);
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const prefix = `repgen-bench-${process.pid}`;

function pct(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
}
const fmt = (ms: number) => `${ms.toFixed(1)} ms`;

const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
const gh = await startFakeGithub({ roles: { Codertocat: 'admin' }, latencyMs: LATENCY });
const env = readAppEnv({
  APP_ID: '1',
  PRIVATE_KEY: testPrivateKey(),
  WEBHOOK_SECRET: 'bench',
  REDIS_URL,
  REPGEN_QUEUE_PREFIX: prefix,
  REPGEN_REPO_RATE_LIMIT: '10000',
  LOG_LEVEL: 'fatal',
});
const app = await startAppServer(env, { log: silentLogger, baseUrl: gh.url, port: 0, host: '127.0.0.1' });

// 1. Webhook → queued + 👀 + progress comment: the HTTP response comes after the handler finished.
for (let i = 0; i < 5; i++)
  await postWebhook(app.url, 'issues', labeledPayload('needs-repro', { issueNumber: 900_000 + i, sender: { login: 'Codertocat' } }), {
    secret: 'bench',
  });
const handler: number[] = [];
for (let i = 0; i < WEBHOOKS; i++) {
  const r = await postWebhook(app.url, 'issues', labeledPayload('needs-repro', { issueNumber: 1 + i, sender: { login: 'Codertocat' } }), {
    secret: 'bench',
  });
  if (r.status !== 200) throw new Error(`webhook answered ${r.status}`);
  handler.push(r.ms);
}
const queued = (await app.queue.getJobs(['waiting'])).length;
const reactions = gh.callsTo('POST', /\/reactions$/).length;

// 2. The enqueue itself (enqueueRepro → BullMQ → Redis), sequential latency and concurrent throughput.
const queue = new Queue(REPRO_QUEUE, { connection: redis, prefix: `${prefix}-enq` });
const base: ReproJob = {
  v: 1,
  kind: 'repro',
  deliveryId: 'x',
  installationId: 1,
  owner: 'o',
  repo: 'r',
  issueNumber: 1,
  issueUrl: 'https://github.com/o/r/issues/1',
  cloneUrl: 'https://github.com/o/r.git',
  ref: 'main',
  gpu: false,
  llm: null,
  commentId: 1,
  commentUrl: 'https://github.com/o/r/issues/1#issuecomment-1',
  requestedBy: 'me',
  trigger: 'label',
  config: RepoConfig.parse({}),
  enqueuedAt: Date.now(),
};
for (let i = 0; i < 20; i++) await enqueueRepro(queue, { ...base, deliveryId: `warm-${i}` });
const enqueue: number[] = [];
for (let i = 0; i < ENQUEUES; i++) {
  const t0 = performance.now();
  await enqueueRepro(queue, { ...base, deliveryId: `seq-${i}`, issueNumber: 1 + i });
  enqueue.push(performance.now() - t0);
}
const t0 = performance.now();
const BATCH = 50;
for (let i = 0; i < ENQUEUES; i += BATCH) {
  await Promise.all(
    Array.from({ length: Math.min(BATCH, ENQUEUES - i) }, (_, k) => enqueueRepro(queue, { ...base, deliveryId: `par-${i + k}` })),
  );
}
const throughput = ENQUEUES / ((performance.now() - t0) / 1000);

handler.sort((a, b) => a - b);
enqueue.sort((a, b) => a - b);
const rows = [
  ['webhook → queued + 👀 + comment', WEBHOOKS, fmt(pct(handler, 50)), fmt(pct(handler, 99)), fmt(handler.at(-1) ?? NaN), '≤ 1000 ms p99'],
  ['enqueueRepro (sequential)', ENQUEUES, fmt(pct(enqueue, 50)), fmt(pct(enqueue, 99)), fmt(enqueue.at(-1) ?? NaN), '≤ 20 ms p99'],
];
process.stdout.write(
  `\nGitHub API latency simulated: ${LATENCY} ms per call; jobs queued ${queued}/${WEBHOOKS + 5}, 👀 reactions ${reactions}\n\n`,
);
process.stdout.write('| measure | n | p50 | p99 | max | target |\n|---|---|---|---|---|---|\n');
for (const r of rows) process.stdout.write(`| ${r.join(' | ')} |\n`);
process.stdout.write(`\nenqueue throughput (${BATCH} concurrent): ${throughput.toFixed(0)} jobs/s\n`);
process.stdout.write(
  `${JSON.stringify({ githubLatencyMs: LATENCY, handlerP50: pct(handler, 50), handlerP99: pct(handler, 99), enqueueP50: pct(enqueue, 50), enqueueP99: pct(enqueue, 99), enqueueThroughput: Math.round(throughput) })}\n`,
);

await queue.obliterate({ force: true });
await queue.close();
await app.close();
await gh.close();
const keys = await redis.keys(`${prefix}*`);
if (keys.length) await redis.del(...keys);
await redis.quit();
