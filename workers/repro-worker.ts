import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue, QueueEvents, UnrecoverableError, Worker, type Job } from 'bullmq';
import { Redis } from 'ioredis';
import { Probot, ProbotOctokit } from 'probot';
import { appCredentials, githubBaseUrl, type AppEnv } from '../src/config/app-env.js';
import { reapWorkDirs } from '../src/exec/sandbox/reap-work-dirs.js';
import { scriptPython } from '../src/config/env/exec-env.js';
import { readOperatorEnv, type OperatorEnv } from '../src/config/operator-env.js';
import { executorChooser, type ExecutorChooser } from '../src/exec/executor-chooser.js';
import type { ScriptExecutor } from '../src/exec/types.js';
import { postFinalWordForFailedJob } from '../src/github/final-word.js';
import { startLostRunSweeps } from '../src/github/start-lost-run-sweeps.js';
import { githubIssueSource } from '../src/github/github-issue-source.js';
import type { InstallationAuth, Octokit } from '../src/github/octokit.js';
import { finishFailedVerifyJob, processVerifyJob, type RunFixCheck } from '../src/github/process-verify-job.js';
import { GitHubResultPublisher } from '../src/github/publish/github-result-publisher.js';
import { IssuePublisher } from '../src/github/publish/issue-publisher.js';
import { IssueGoneError } from '../src/github/errors.js';
import type { LlmClient } from '../src/llm/types.js';
import type { Logger } from '../src/log.js';
import type { RunStages } from '../src/pipeline/ports.js';
import type { BuildContextFn } from '../src/pipeline/run-repro.js';
import { processReproJob, SHUTDOWN_REASON, type JobPorts, type ProcessDeps, type RunPipeline } from '../src/queue/process-repro-job.js';
import { subscribeCancels } from '../src/queue/cancel-channel.js';
import { InstallationSlots } from '../src/queue/installation-slots.js';
import { REPRO_QUEUE } from '../src/queue/repro-job.js';
import { RunRegistry } from '../src/queue/run-registry.js';
import { VERIFY_JOB } from '../src/queue/verify-job.js';

/** Wires the repro worker: Redis connections, GitHub auth, the processor, cancel and final-word listeners. */
export interface ReproWorkerHandle {
  worker: Worker;
  /** Stops taking jobs, waits up to `graceMs` for running ones, then hands them back to the queue. */
  close: (graceMs?: number) => Promise<void>;
}

export async function startReproWorker(
  env: AppEnv,
  wiring: {
    /** The operator's settings (REPGEN_*): every job's ceilings. @defaultValue readOperatorEnv(process.env) */
    operator?: OperatorEnv;
    /** Shared with the fix checks; closed by whoever made it. @defaultValue one made here, closed with the worker */
    executorFor?: ExecutorChooser;
    /** Tests: one executor for every job, a model (null: none), a context builder, a scripted pipeline. */
    executor?: ScriptExecutor;
    llm?: LlmClient | null;
    buildContext?: BuildContextFn | null;
    runPipeline?: RunPipeline;
    stages?: RunStages;
    runFixCheck?: RunFixCheck;
    log: Logger;
    baseUrl?: string;
    minEditIntervalMs?: number;
    slotRetryMs?: number;
    workRoots?: readonly string[];
    reapMinAgeMs?: number;
    /** Tests: how recent a "queued" comment the lost-run sweep leaves alone. @defaultValue 120000 */
    lostRunGraceMs?: number;
  },
): Promise<ReproWorkerHandle> {
  const { appId, privateKey } = appCredentials(env);
  const prefix = env.REPGEN_QUEUE_PREFIX;
  const log = wiring.log;
  // BullMQ needs maxRetriesPerRequest: null on blocking connections; the subscriber must be its own connection.
  const connection = new Redis(env.REDIS_URL, { maxRetriesPerRequest: null });
  const subscriber = new Redis(env.REDIS_URL, { maxRetriesPerRequest: null });
  // ioredis prints an error event nobody listens to as "[ioredis] Unhandled error event" with a stack: log it instead.
  connection.on('error', (err: Error) => log.warn({ connection: 'commands', err: err.message }, 'Redis connection error'));
  subscriber.on('error', (err: Error) => log.warn({ connection: 'cancel subscriber', err: err.message }, 'Redis connection error'));
  const registry = new RunRegistry(connection, { prefix });
  const slots = new InstallationSlots(connection, prefix, { cap: env.REPGEN_INSTALLATION_CONCURRENCY, leaseMs: env.REPGEN_LOCK_MS });
  const probot = new Probot({
    appId,
    privateKey,
    baseUrl: wiring.baseUrl ?? githubBaseUrl(env),
    logLevel: env.LOG_LEVEL,
    // Retries of a whole attempt are BullMQ's; Octokit retries single 5xx answers once. Throttling keeps
    // GitHub's advice of one write per second unless REPGEN_GITHUB_THROTTLE=false (tests, GHES without limits).
    Octokit: ProbotOctokit.defaults((o: Record<string, unknown>) => ({
      ...o,
      throttle: { ...(o.throttle as object), enabled: env.REPGEN_GITHUB_THROTTLE },
      retry: { retries: 1 },
    })),
  });
  // The App's bot login, asked once (GET /app): the author a candidate commit of RepGen's must have. A failed ask is
  // asked again next time; meanwhile the check takes any App's bot account.
  let appLogin: string | undefined;
  const auth = async (installationId: number): Promise<InstallationAuth> => {
    const octokit = (await probot.auth(installationId)) as unknown as Octokit;
    // The clone needs the token itself. Asked through the app-level client so it honours baseUrl (GHE,
    // tests); `octokit.auth()` would use a request object without it.
    const app = (await probot.auth()) as unknown as Octokit;
    const { data } = await app.rest.apps.createInstallationAccessToken({ installation_id: installationId });
    appLogin ??= await app.rest.apps.getAuthenticated().then(
      (r) => (r.data?.slug ? `${r.data.slug}[bot]` : undefined),
      () => undefined,
    );
    return { octokit, token: data.token, ...(appLogin ? { appLogin } : {}) };
  };
  const operator = wiring.operator ?? readOperatorEnv(process.env);
  const ownExecutors = wiring.executorFor ? null : executorChooser({ log, ...(wiring.executor ? { given: wiring.executor } : {}) });
  const executorFor = wiring.executorFor ?? (ownExecutors as ExecutorChooser);
  const workdir = env.REPGEN_WORKDIR ?? tmpdir();
  // The job's GitHub side: its installation's client, the issue and a clone as the source, its comment as the publisher.
  const portsFor: ProcessDeps['portsFor'] = async (data, job): Promise<JobPorts> => {
    const a = await auth(data.installationId);
    const pub = new IssuePublisher(a.octokit, {
      owner: data.owner,
      repo: data.repo,
      issueNumber: data.issueNumber,
      commentId: data.commentId,
      secrets: [a.token],
      log,
      ...(wiring.minEditIntervalMs !== undefined ? { minEditIntervalMs: wiring.minEditIntervalMs } : {}),
      // Nobody is left to read the result: stop spending compute on it.
      onGone: () => job.stop(new IssueGoneError('the issue was deleted')),
    });
    const appLogin = a.appLogin ? { appLogin: a.appLogin } : {};
    const publisher = new GitHubResultPublisher({
      pub,
      octokit: a.octokit,
      data,
      jobId: job.jobId,
      token: a.token,
      registry,
      log,
      ...appLogin,
    });
    return {
      source: githubIssueSource({
        octokit: a.octokit,
        data,
        token: a.token,
        dir: join(job.dir, 'repo'),
        python: scriptPython(operator),
      }),
      publisher,
      openLastReproducedPr: () => publisher.openLastReproducedPr(),
    };
  };
  const deps: ProcessDeps & { auth: typeof auth } = {
    registry,
    redis: connection,
    slots,
    auth,
    operator,
    portsFor,
    executorFor,
    workdir,
    log,
    ...(wiring.llm !== undefined ? { llm: wiring.llm } : {}),
    ...(wiring.buildContext !== undefined ? { buildContext: wiring.buildContext } : {}),
    ...(wiring.runPipeline ? { runPipeline: wiring.runPipeline } : {}),
    ...(wiring.stages ? { stages: wiring.stages } : {}),
    ...(wiring.slotRetryMs !== undefined ? { slotRetryMs: wiring.slotRetryMs } : {}),
  };
  // Folders a crashed run or job left (job checkouts here, the executor's run dirs under its work root): reaped
  // at start and after each job, one reap at a time; only those whose owner is provably gone (src/exec/sandbox/stale-work-dirs.ts).
  const roots = [deps.workdir, ...(wiring.workRoots ?? [])];
  let reaping: Promise<void> | null = null;
  let again = false;
  const reap = (): Promise<void> => {
    if (reaping) {
      again = true;
      return reaping;
    }
    reaping = (async () => {
      do {
        again = false;
        await reapWorkDirs(roots, log, wiring.reapMinAgeMs !== undefined ? { minAgeMs: wiring.reapMinAgeMs } : {}).catch((err: Error) =>
          log.warn({ err: err.message }, 'reaping work folders failed'),
        );
      } while (again);
      reaping = null;
    })();
    return reaping;
  };
  await reap();
  const runFixCheck = wiring.runFixCheck;
  // Fix checks share the queue (same workers, same per-installation fairness) under their own job name.
  // Jobs this process is running: live even when Redis lost them (the lost-run sweep must not call them lost).
  const running = new Set<string>();
  const worker = new Worker(
    REPRO_QUEUE,
    (job, token, signal) => {
      if (job.name !== VERIFY_JOB) {
        if (job.id) running.add(job.id);
        return processReproJob(job, token, signal, deps).finally(() => job.id && running.delete(job.id));
      }
      if (!runFixCheck) throw new UnrecoverableError('this worker was started without a fix-check runner');
      return processVerifyJob(job, token, signal, { ...deps, runFixCheck });
    },
    {
      connection,
      prefix,
      concurrency: env.REPGEN_WORKER_CONCURRENCY,
      lockDuration: env.REPGEN_LOCK_MS,
      stalledInterval: env.REPGEN_STALLED_INTERVAL_MS,
      maxStalledCount: env.REPGEN_MAX_STALLED,
    },
  );
  const finalWord = (job: Job, reason: string): Promise<boolean> =>
    job.name === VERIFY_JOB
      ? finishFailedVerifyJob(job, reason, { registry, auth, log })
      : postFinalWordForFailedJob(job, reason, { registry, auth, log });
  worker.on('error', (err) => log.error({ err: err.message }, 'worker error'));
  // A rejected promise nobody awaits would end the process, and with it every other job it runs: catch all.
  const finalWordSafely = (job: Job, reason: string): void => {
    finalWord(job, reason).catch((err: Error) => log.error({ jobId: job.id, err: err.message }, 'final word failed'));
  };
  worker.on('failed', (job, err) => {
    // Final failures the processor did not announce itself (e.g. UnrecoverableError from bad job data).
    if (job && (job.attemptsMade >= (job.opts.attempts ?? 1) || err.name === 'UnrecoverableError')) finalWordSafely(job, err.message);
    void reap();
  });
  worker.on('completed', () => void reap());
  // Jobs failed by another process's stalled checker never reach this worker's 'failed' event: listen queue-wide.
  const queue = new Queue(REPRO_QUEUE, { connection, prefix });
  const events = new QueueEvents(REPRO_QUEUE, { connection: { url: env.REDIS_URL }, prefix });
  queue.on('error', (err: Error) => log.warn({ err: err.message }, 'queue error'));
  events.on('error', (err: Error) => log.warn({ err: err.message }, 'queue events error'));
  events.on('failed', ({ jobId, failedReason }) => {
    void (async () => {
      const job = await queue.getJob(jobId);
      if (job && (await job.getState()) === 'failed') await finalWord(job, failedReason);
    })().catch((err: Error) => log.error({ jobId, err: err.message }, 'final-word listener failed'));
  });
  const unsubscribe = await subscribeCancels(subscriber, prefix, (jobId) => {
    if (worker.cancelJob(jobId, 'cancel')) log.info({ jobId }, 'run cancelled');
  });
  await worker.waitUntilReady();
  await events.waitUntilReady();
  const stopSweeps = startLostRunSweeps(env.REPGEN_LOST_RUN_SWEEP_S * 1000, {
    appOctokit: async () => (await probot.auth()) as unknown as Octokit,
    installationOctokit: async (id) => (await probot.auth(id)) as unknown as Octokit,
    isLive: async (jobId) => {
      if (running.has(jobId)) return true;
      const job = await queue.getJob(jobId);
      return !!job && ['waiting', 'delayed', 'active', 'prioritized', 'waiting-children'].includes(await job.getState());
    },
    registry,
    log,
    ...(wiring.lostRunGraceMs !== undefined ? { graceMs: wiring.lostRunGraceMs } : {}),
  });
  log.info({ prefix, concurrency: env.REPGEN_WORKER_CONCURRENCY }, 'repro worker started');

  let closing: Promise<void> | null = null;
  const close = (graceMs = env.REPGEN_SHUTDOWN_GRACE_S * 1000): Promise<void> => {
    closing ??= (async () => {
      await stopSweeps();
      await unsubscribe();
      const timer = setTimeout(() => worker.cancelAllJobs(SHUTDOWN_REASON), graceMs);
      await worker.close();
      await reaping;
      clearTimeout(timer);
      await events.close();
      await queue.close();
      await Promise.all([connection.quit().catch(() => undefined), subscriber.quit().catch(() => undefined)]);
      await ownExecutors?.close();
    })();
    return closing;
  };
  return { worker, close };
}
