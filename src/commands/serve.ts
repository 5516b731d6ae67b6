import type { Command } from '../cli/io.js';
import { parseCliArgs } from '../cli/parse-args.js';
import { runUntilSignal } from '../cli/run-until-signal.js';
import { readAppEnv } from '../config/app-env.js';
import { createLineLogger } from '../log.js';

const HELP = `usage: repgen serve

Starts the GitHub App's webhook server (Probot): verifies each webhook's signature, checks who asked,
queues a reproduction job in Redis, reacts 👀 and posts the progress comment. GET /healthz answers ok.

environment: APP_ID, PRIVATE_KEY (or PRIVATE_KEY_PATH), WEBHOOK_SECRET, REDIS_URL, PORT (3000),
HOST (0.0.0.0), WEBHOOK_PATH (/api/github/webhooks), GHE_HOST, GHE_PROTOCOL (https), LOG_LEVEL,
REPGEN_QUEUE_PREFIX, REPGEN_JOB_ATTEMPTS, REPGEN_JOB_BACKOFF_MS, REPGEN_REPO_RATE_LIMIT,
REPGEN_REPO_RATE_WINDOW_S (see README).
`;

export const command: Command = {
  summary: 'run the GitHub App webhook server',
  help: HELP,
  run: async (args, io) => {
    if (!parseCliArgs(args, {})) {
      io.stdout(HELP);
      return 0;
    }
    const env = readAppEnv(io.env);
    const log = createLineLogger((l) => io.stderr(l));
    const { startAppServer } = await import('../../workers/app-server.js');
    const handle = await startAppServer(env, { log });
    io.stderr(`repgen serve: listening on ${handle.url}\n`);
    await runUntilSignal(() => handle.close(), log);
    return 0;
  },
};
