import { z } from 'zod';
import { SetupError } from '../errors.js';
import { ReadBoundedError, readBoundedSync } from '../host/read-bounded.js';
import { doc } from './env/define.js';

/**
 * Settings of `repgen serve` and `repgen worker`, read from the environment once by the entry points.
 * Names follow Probot's (APP_ID, PRIVATE_KEY, WEBHOOK_SECRET, GHE_HOST, GHE_PROTOCOL) so an existing
 * Probot deployment's Secret works unchanged; RepGen's own knobs are prefixed REPGEN_.
 */

const Int = (min: number, max: number) => z.coerce.number().int().min(min).max(max);

export const AppEnv = z.object({
  APP_ID: doc(z.string().regex(/^\d+$/, 'must be the numeric GitHub App id').optional(), { description: 'GitHub App id', shown: '—' }),
  PRIVATE_KEY: doc(z.string().optional(), { description: "the App's private key (PEM; `\\n` escapes allowed)", shown: '—' }),
  PRIVATE_KEY_PATH: doc(z.string().optional(), { description: 'a file holding the private key instead', shown: '—' }),
  WEBHOOK_SECRET: doc(z.string().min(1).optional(), { description: 'secret the webhooks are signed with (serve)', shown: '—' }),
  REDIS_URL: doc(z.string().url().default('redis://127.0.0.1:6379'), { description: 'Redis of the BullMQ queue' }),
  PORT: doc(Int(1, 65535).default(3000), { description: 'HTTP port of `repgen serve`' }),
  HOST: doc(z.string().default('0.0.0.0'), { description: 'interface `repgen serve` listens on' }),
  WEBHOOK_PATH: doc(z.string().startsWith('/').default('/api/github/webhooks'), { description: 'path webhooks are posted to' }),
  GHE_HOST: doc(z.string().optional(), { description: 'GitHub Enterprise Server host (as in Probot); unset: github.com', shown: '—' }),
  GHE_PROTOCOL: doc(z.enum(['http', 'https']).default('https'), { description: 'protocol of GHE_HOST' }),
  LOG_LEVEL: doc(z.enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal']).default('info'), {
    description: 'log level of serve and worker',
  }),
  REPGEN_QUEUE_PREFIX: doc(
    z
      .string()
      .regex(/^[A-Za-z0-9_-]+$/)
      .default('repgen'),
    { description: 'prefix of every Redis key RepGen writes' },
  ),
  REPGEN_JOB_ATTEMPTS: doc(Int(1, 20).default(3), {
    description: 'tries of a job before its final word is "failed" (stalled restarts do not count)',
  }),
  REPGEN_JOB_BACKOFF_MS: doc(Int(0, 3_600_000).default(30_000), { description: 'first retry delay, doubled each retry' }),
  REPGEN_WORKER_CONCURRENCY: doc(Int(1, 64).default(2), { description: 'jobs one worker process runs at once' }),
  REPGEN_INSTALLATION_CONCURRENCY: doc(Int(1, 1000).default(2), {
    description: 'runs one installation may have active across all workers',
  }),
  REPGEN_REPO_RATE_LIMIT: doc(Int(1, 10_000).default(10), { description: 'runs one repository may start per window; later ones wait' }),
  REPGEN_REPO_RATE_WINDOW_S: doc(Int(1, 86_400 * 7).default(3600), { description: 'the rate-limit window, seconds' }),
  REPGEN_LOCK_MS: doc(Int(1000, 3_600_000).default(60_000), {
    description: "a worker's lock on a job without renewal; a killed worker's job is retried after it",
  }),
  REPGEN_STALLED_INTERVAL_MS: doc(Int(500, 3_600_000).default(30_000), {
    description: 'how often workers look for jobs whose worker died',
  }),
  REPGEN_LOST_RUN_SWEEP_S: doc(Int(0, 86_400).default(600), {
    description: 'how often the worker looks for issues left saying queued whose job is gone from Redis (0: never); also at start',
  }),
  REPGEN_MAX_STALLED: doc(Int(0, 20).default(2), { description: 'worker restarts one job survives before it fails' }),
  REPGEN_WORKDIR: doc(z.string().optional(), {
    description: 'where the worker clones repositories (a folder per job; stale ones reaped)',
    shown: 'the OS temp dir',
  }),
  REPGEN_GITHUB_THROTTLE: doc(
    z
      .enum(['true', 'false'])
      .default('true')
      .transform((v) => v === 'true'),
    { description: "pace the worker's GitHub writes (one per second)", shown: '`true`' },
  ),
  REPGEN_SHUTDOWN_GRACE_S: doc(Int(0, 3600).default(25), { description: 'seconds `repgen worker` waits for running jobs on SIGTERM' }),
});
export type AppEnv = z.infer<typeof AppEnv>;

/** Parses the environment; a bad value is a SetupError naming the variable. */
export function readAppEnv(env: NodeJS.ProcessEnv = process.env): AppEnv {
  const clean = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = AppEnv.safeParse(clean);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new SetupError(`${issue?.path.join('.') ?? 'environment'}: ${issue?.message ?? 'invalid'}`);
  }
  return parsed.data;
}

/** The App credentials both processes need; a SetupError says which is missing. */
export function appCredentials(env: AppEnv): { appId: number; privateKey: string } {
  if (!env.APP_ID) throw new SetupError('APP_ID is not set (the numeric id of the GitHub App)');
  let key = env.PRIVATE_KEY;
  if (!key && env.PRIVATE_KEY_PATH) {
    try {
      // A PEM key is a few kB; a device or FIFO named here must not fill memory or block the start.
      key = readBoundedSync(env.PRIVATE_KEY_PATH, { maxBytes: 100_000, what: `'${env.PRIVATE_KEY_PATH}'` }).toString('utf8');
    } catch (err) {
      throw new SetupError(`PRIVATE_KEY_PATH: ${err instanceof ReadBoundedError ? err.message : `cannot read ${env.PRIVATE_KEY_PATH}`}`);
    }
  }
  if (!key) throw new SetupError('PRIVATE_KEY (or PRIVATE_KEY_PATH) is not set (the GitHub App private key, PEM)');
  key = key.replace(/\\n/g, '\n');
  if (!key.includes('PRIVATE KEY-----')) throw new SetupError('PRIVATE_KEY is not a PEM private key');
  return { appId: Number(env.APP_ID), privateKey: key };
}

/** GitHub's REST base URL: github.com or the GHE_HOST server, exactly as Probot derives it. */
export function githubBaseUrl(env: Pick<AppEnv, 'GHE_HOST' | 'GHE_PROTOCOL'>): string {
  return env.GHE_HOST ? `${env.GHE_PROTOCOL}://${env.GHE_HOST}/api/v3` : 'https://api.github.com';
}
