import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { SetupError } from '../errors.js';

/**
 * Settings of `repgen serve` and `repgen worker`, read from the environment once by the entry points.
 * Names follow Probot's (APP_ID, PRIVATE_KEY, WEBHOOK_SECRET, GHE_HOST, GHE_PROTOCOL) so an existing
 * Probot deployment's Secret works unchanged; RepGen's own knobs are prefixed REPGEN_.
 */

const Int = (min: number, max: number) => z.coerce.number().int().min(min).max(max);

export const AppEnv = z.object({
  /** GitHub App id. */
  APP_ID: z.string().regex(/^\d+$/, 'must be the numeric GitHub App id').optional(),
  /** The App's private key (PEM; `\n` escapes allowed). PRIVATE_KEY_PATH names a file instead. */
  PRIVATE_KEY: z.string().optional(),
  PRIVATE_KEY_PATH: z.string().optional(),
  /** Secret the webhooks are signed with (serve only). */
  WEBHOOK_SECRET: z.string().min(1).optional(),
  /** Redis of the BullMQ queue. @defaultValue 'redis://127.0.0.1:6379' */
  REDIS_URL: z.string().url().default('redis://127.0.0.1:6379'),
  /** HTTP port of `repgen serve`. @defaultValue 3000 */
  PORT: Int(1, 65535).default(3000),
  /** Interface `repgen serve` listens on. @defaultValue '0.0.0.0' */
  HOST: z.string().default('0.0.0.0'),
  /** Path webhooks are posted to. @defaultValue '/api/github/webhooks' */
  WEBHOOK_PATH: z.string().startsWith('/').default('/api/github/webhooks'),
  /** GitHub Enterprise Server host name (as in Probot); empty = github.com. */
  GHE_HOST: z.string().optional(),
  /** @defaultValue 'https' */
  GHE_PROTOCOL: z.enum(['http', 'https']).default('https'),
  /** @defaultValue 'info' */
  LOG_LEVEL: z.enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal']).default('info'),
  /** Prefix of every Redis key RepGen writes (queue and locks). @defaultValue 'repgen' */
  REPGEN_QUEUE_PREFIX: z.string().regex(/^[A-Za-z0-9_-]+$/).default('repgen'),
  /** Tries of a job before its final word is "failed" (stalled restarts do not count). @defaultValue 3 */
  REPGEN_JOB_ATTEMPTS: Int(1, 20).default(3),
  /** First retry delay, doubled each retry. @defaultValue 30000 */
  REPGEN_JOB_BACKOFF_MS: Int(0, 3_600_000).default(30_000),
  /** Jobs one worker process runs at once. @defaultValue 2 */
  REPGEN_WORKER_CONCURRENCY: Int(1, 64).default(2),
  /** Runs one installation may have active across all workers (fairness between installations). @defaultValue 2 */
  REPGEN_INSTALLATION_CONCURRENCY: Int(1, 1000).default(2),
  /** Runs one repository may start per window; later triggers wait in the queue. @defaultValue 10 */
  REPGEN_REPO_RATE_LIMIT: Int(1, 10_000).default(10),
  /** The rate-limit window in seconds. @defaultValue 3600 */
  REPGEN_REPO_RATE_WINDOW_S: Int(1, 86_400 * 7).default(3600),
  /** How long a worker's lock on a job lasts without renewal; a killed worker's job is retried after it. @defaultValue 60000 */
  REPGEN_LOCK_MS: Int(1000, 3_600_000).default(60_000),
  /** How often workers look for jobs whose worker died. @defaultValue 30000 */
  REPGEN_STALLED_INTERVAL_MS: Int(500, 3_600_000).default(30_000),
  /** Worker restarts one job survives before it fails. @defaultValue 2 */
  REPGEN_MAX_STALLED: Int(0, 20).default(2),
  /** Where the worker clones repositories (a fresh directory per job). @defaultValue the OS temp dir */
  REPGEN_WORKDIR: z.string().optional(),
  /** Pace the worker's GitHub writes (one per second, as GitHub advises). @defaultValue true */
  REPGEN_GITHUB_THROTTLE: z.enum(['true', 'false']).default('true').transform((v) => v === 'true'),
  /** Seconds `repgen worker` waits for running jobs on SIGTERM before leaving them to be retried. @defaultValue 25 */
  REPGEN_SHUTDOWN_GRACE_S: Int(0, 3600).default(25),
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
      key = readFileSync(env.PRIVATE_KEY_PATH, 'utf8');
    } catch {
      throw new SetupError(`PRIVATE_KEY_PATH: cannot read ${env.PRIVATE_KEY_PATH}`);
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
