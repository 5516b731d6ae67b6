import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { Probot, ProbotOctokit } from 'probot';
import { createApp } from '../src/app.js';
import { appCredentials, githubBaseUrl, type AppEnv } from '../src/config/app-env.js';
import { SetupError } from '../src/errors.js';
import { readWebhook } from '../src/github/read-webhook.js';
import type { Logger } from '../src/log.js';
import { REPRO_QUEUE } from '../src/queue/repro-job.js';
import { RunRegistry } from '../src/queue/run-registry.js';

/**
 * Wires `repgen serve`: a plain node:http server that checks each delivery itself (size cap, headers,
 * signature, JSON object, in that order; see readWebhook) and hands only verified ones to Probot.
 */
export interface AppServerHandle {
  url: string;
  server: Server;
  queue: Queue;
  close: () => Promise<void>;
}

export async function startAppServer(
  env: AppEnv,
  wiring: { log: Logger; baseUrl?: string; port?: number; host?: string },
): Promise<AppServerHandle> {
  const { appId, privateKey } = appCredentials(env);
  if (!env.WEBHOOK_SECRET) throw new SetupError('WEBHOOK_SECRET is not set (the secret GitHub signs webhooks with)');
  const connection = new Redis(env.REDIS_URL, { maxRetriesPerRequest: null });
  // ioredis prints an error event nobody listens to as "[ioredis] Unhandled error event" with a stack: log it instead.
  connection.on('error', (err: Error) => wiring.log.warn({ err: err.message }, 'Redis connection error'));
  const queue = new Queue(REPRO_QUEUE, { connection, prefix: env.REPGEN_QUEUE_PREFIX });
  queue.on('error', (err: Error) => wiring.log.warn({ err: err.message }, 'queue error'));
  const registry = new RunRegistry(connection, { prefix: env.REPGEN_QUEUE_PREFIX });
  const probot = new Probot({
    appId,
    privateKey,
    secret: env.WEBHOOK_SECRET,
    baseUrl: wiring.baseUrl ?? githubBaseUrl(env),
    logLevel: env.LOG_LEVEL,
    // The handler's budget is one second. Octokit's throttling paces every write 1 s apart (3 s for ones
    // that notify), which alone would blow it; a trigger makes two writes and the per-repository rate
    // limit bounds how many triggers there are. One quick retry covers a 5xx.
    // (A function, because Probot merges its own throttle options over plain defaults.)
    Octokit: ProbotOctokit.defaults((o: Record<string, unknown>) => ({
      ...o,
      throttle: { ...(o.throttle as object), enabled: false },
      retry: { retries: 1 },
    })),
  });
  const app = createApp({
    queue,
    redis: connection,
    registry,
    log: wiring.log,
    settings: {
      attempts: env.REPGEN_JOB_ATTEMPTS,
      backoffMs: env.REPGEN_JOB_BACKOFF_MS,
      repoRateLimit: env.REPGEN_REPO_RATE_LIMIT,
      repoRateWindowMs: env.REPGEN_REPO_RATE_WINDOW_S * 1000,
    },
  });
  await probot.load(app, { cwd: process.cwd(), addHandler: () => undefined });
  const secret = env.WEBHOOK_SECRET;
  const server = createServer((req, res) => {
    void handleRequest(req, res).catch((err: unknown) => {
      // A handler failed on a verified delivery: our fault, so 500 (GitHub shows it; a redelivery retries).
      wiring.log.error({ err: err instanceof Error ? err.message : String(err) }, 'webhook handler failed');
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' }).end('internal error\n');
    });
  });
  const handleRequest = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const path = (req.url ?? '').split('?')[0];
    if (req.method === 'GET' && path === '/healthz') {
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok\n');
      return;
    }
    if (path !== env.WEBHOOK_PATH) {
      refuse(req, res, { status: 404, reason: 'not found' });
      return;
    }
    const read = await readWebhook(req, secret);
    if ('status' in read) {
      // Only the reason and the headers GitHub sets: never the body, which nobody has vouched for.
      wiring.log.warn(
        { status: read.status, reason: read.reason, delivery: String(req.headers['x-github-delivery'] ?? '').slice(0, 100) },
        'webhook refused',
      );
      refuse(req, res, read);
      return;
    }
    await probot.receive({ id: read.id, name: read.name, payload: read.payload } as Parameters<typeof probot.receive>[0]);
    res.writeHead(200, { 'content-type': 'text/plain' }).end('ok\n');
  };
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(wiring.port ?? env.PORT, wiring.host ?? env.HOST, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const host = (wiring.host ?? env.HOST) === '0.0.0.0' ? '127.0.0.1' : (wiring.host ?? env.HOST);
  wiring.log.info({ port, path: env.WEBHOOK_PATH }, 'repgen app listening');
  return {
    url: `http://${host}:${port}${env.WEBHOOK_PATH}`,
    server,
    queue,
    close: async () => {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await queue.close();
      await connection.quit().catch(() => undefined);
    },
  };
}

/**
 * Answers a refused request. The rest of its body is read and thrown away (memory stays flat) for at most
 * two seconds, so the client sees the answer instead of a reset, then the connection is dropped.
 */
function refuse(req: IncomingMessage, res: ServerResponse, refusal: { status: number; reason: string }): void {
  if (req.complete) {
    res.writeHead(refusal.status, { 'content-type': 'text/plain', connection: 'close' }).end(`${refusal.reason}\n`);
    return;
  }
  // No `connection: close` while the body is still coming: Node would end the socket as soon as the answer is
  // written, the client's next write would meet a reset, and a reset throws away the answer it had not read yet.
  res.writeHead(refusal.status, { 'content-type': 'text/plain' }).end(`${refusal.reason}\n`);
  const timer = setTimeout(() => req.destroy(), 2000);
  timer.unref();
  req.once('end', () => clearTimeout(timer));
  req.once('close', () => clearTimeout(timer));
  req.resume();
}
