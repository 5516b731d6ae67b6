import { appCommand } from '../cli/app-command.js';

const HELP = `usage: repgen serve

Starts the GitHub App's webhook server (Probot): verifies each webhook's signature, checks who asked,
queues a reproduction job in Redis, reacts 👀 and posts the progress comment. GET /healthz answers ok.

environment: APP_ID, PRIVATE_KEY (or PRIVATE_KEY_PATH), WEBHOOK_SECRET, REDIS_URL, PORT (3000),
HOST (0.0.0.0), WEBHOOK_PATH (/api/github/webhooks), GHE_HOST, GHE_PROTOCOL (https), LOG_LEVEL,
REPGEN_QUEUE_PREFIX, REPGEN_JOB_ATTEMPTS, REPGEN_JOB_BACKOFF_MS, REPGEN_REPO_RATE_LIMIT,
REPGEN_REPO_RATE_WINDOW_S (see README).
`;

export const command = appCommand('run the GitHub App webhook server', HELP, async (env, io, log) => {
  const { startAppServer } = await import('../../workers/app-server.js');
  const handle = await startAppServer(env, { log });
  io.stderr(`repgen serve: listening on ${handle.url}\n`);
  return () => handle.close();
});
