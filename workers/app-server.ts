import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { createNodeMiddleware, Probot, ProbotOctokit } from 'probot';
import { createApp } from '../src/app.js';
import { appCredentials, githubBaseUrl, type AppEnv } from '../src/config/app-env.js';
import { SetupError } from '../src/errors.js';
import type { Logger } from '../src/log.js';
import { REPRO_QUEUE } from '../src/queue/repro-job.js';
import { RunRegistry } from '../src/queue/run-registry.js';

/** Wires `repgen serve`: Probot (signature check included) behind a plain node:http server. */
export interface AppServerHandle {
  url: string;
  server: Server;
  queue: Queue;
  close: () => Promise<void>;
}

export async function startAppServer(env: AppEnv, wiring: { log: Logger; baseUrl?: string; port?: number; host?: string }): Promise<AppServerHandle> {
  const { appId, privateKey } = appCredentials(env);
  if (!env.WEBHOOK_SECRET) throw new SetupError('WEBHOOK_SECRET is not set (the secret GitHub signs webhooks with)');
  const connection = new Redis(env.REDIS_URL, { maxRetriesPerRequest: null });
  const queue = new Queue(REPRO_QUEUE, { connection, prefix: env.REPGEN_QUEUE_PREFIX });
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
    Octokit: ProbotOctokit.defaults((o: Record<string, unknown>) => ({ ...o, throttle: { ...(o.throttle as object), enabled: false }, retry: { retries: 1 } })),
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
  const middleware = await createNodeMiddleware(app, { probot, webhooksPath: env.WEBHOOK_PATH });
  const server = createServer((req, res) => {
    if (req.method === 'GET' && req.url === '/healthz') {
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok\n');
      return;
    }
    void Promise.resolve(
      middleware(req, res, () => {
        res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
      }),
    ).catch(() => {
      if (!res.headersSent) res.writeHead(500).end();
    });
  });
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
