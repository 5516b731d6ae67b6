// The BullMQ processor of reproduction jobs: glue between the queue and reproduceIssue. It owns what is the
// queue's (job data, per-installation slots, the retry policy, the cancel flag, the job's folder) and leaves
// the rest to the ports: where the issue comes from and where the result goes are adapters made by workers/.
import { DelayedError, UnrecoverableError, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import type { OperatorEnv } from '../config/operator-env.js';
import type { RepoConfig } from '../config/repo-config.js';
import { BadRefError, CancelledError, SourceGoneError } from '../errors.js';
import { makeOwnedDir, removeOwnedDir } from '../exec/sandbox/reap-work-dirs.js';
import type { ExecConfig } from '../exec/index.js';
import type { ScriptExecutor } from '../exec/types.js';
import type { LlmClient } from '../llm/types.js';
import type { Logger } from '../log.js';
import type { IssueSource, ResultPublisher, RunStages } from '../pipeline/ports.js';
import { reproduceIssue } from '../pipeline/reproduce-issue.js';
import type { BuildContextFn } from '../pipeline/run-repro.js';
import type { ExitStatus, IssueInput, ProgressFn, ReproOutcome } from '../pipeline/types.js';
import { currentRun } from './attempt-count.js';
import { isCancelRequested } from './cancel-channel.js';
import type { InstallationSlots } from './installation-slots.js';
import { jobSpec } from './job-spec.js';
import { issueKey, ReproJob } from './repro-job.js';
import type { RunRegistry } from './run-registry.js';

/** Why the run's signal fired: a user's cancel, the worker shutting down, or the time cap. */
export const SHUTDOWN_REASON = 'worker-shutdown';

/** `already_ended`: the job's final word was out before this run of it could publish (it was handed out twice). */
export type JobStatus = ExitStatus | 'cancelled' | 'issue_gone' | 'bad_ref' | 'pr_opened' | 'no_reproduction' | 'already_ended';
export interface JobResult {
  status: JobStatus;
  sha?: string;
  url?: string;
}

/** One job's side of the world, made by workers/ (the GitHub adapters) once the job holds its slot. */
export interface JobPorts {
  source: IssueSource;
  publisher: ResultPublisher & { readonly isGone: boolean };
  /** `/repgen pr`: opens the PR of the issue's last reproduced run; its URL, or null when there is none (said). */
  openLastReproducedPr(): Promise<string | null>;
}

/** What a test's scripted pipeline receives in place of stages 1-5 (ProcessDeps.runPipeline). */
export interface PipelineRequest {
  jobId: string;
  issue: IssueInput;
  repoDir: string;
  config: RepoConfig;
  gpu: boolean;
  llm: string | null;
}
export type RunPipeline = (request: PipelineRequest, progress: ProgressFn, signal: AbortSignal) => Promise<ReproOutcome>;

export interface ProcessDeps {
  registry: RunRegistry;
  redis: Redis;
  slots: InstallationSlots;
  /** The operator's settings, read once at worker start: every job's ceilings. */
  operator: OperatorEnv;
  /** The job's source and publisher; `stop` ends the run (the issue was deleted under it). */
  portsFor(data: ReproJob, job: { jobId: string; dir: string; stop: (why: Error) => void }): Promise<JobPorts>;
  /** The executor of a kind, shared by the worker's jobs (src/exec/executor-chooser.ts). */
  executorFor(cfg: ExecConfig): Promise<ScriptExecutor>;
  /** Tests: the model (null: none) and the context builder. @defaultValue made from the job's spec */
  llm?: LlmClient | null;
  buildContext?: BuildContextFn | null;
  /** Tests: a scripted pipeline in place of stages 1-5, so the queue and GitHub sides run without Python. */
  runPipeline?: RunPipeline;
  /** Tests: stages 1-5 replaced as reproduceIssue sees them (what reaches the pipeline). Wins over runPipeline. */
  stages?: RunStages;
  /** Parent of each job's throwaway directory. */
  workdir: string;
  log: Logger;
  /** Delay before a job that found its installation at its cap is tried again. @defaultValue 5000 */
  slotRetryMs?: number;
}

/**
 * Job data → slot → ports → reproduceIssue, with the final word guaranteed. Error policy, decided here once:
 * cancel, deleted issue, bad ref and the time budget end the job with a word (no retry); anything else is
 * retried with backoff, and the last attempt says the failure itself.
 */
export async function processReproJob(
  job: Job,
  token: string | undefined,
  signal: AbortSignal | undefined,
  deps: ProcessDeps,
): Promise<JobResult> {
  const parsed = ReproJob.safeParse(job.data);
  if (!parsed.success) throw new UnrecoverableError(`job data is not a ReproJob (${parsed.error.issues[0]?.path.join('.') ?? '?'})`);
  const data = parsed.data;
  const jobId = job.id ?? 'unknown';
  const log = deps.log;
  // A job whose lock was lost (Redis away longer than REPGEN_LOCK_MS) is handed out again after it ended: nothing to do.
  if (await deps.registry.hasFinalWord(jobId)) {
    log.warn({ jobId }, 'job already ended (its final word is posted); not run again');
    return { status: 'already_ended' };
  }
  if (!(await deps.slots.acquire(data.installationId, jobId))) {
    // Fairness between installations: wait without spending an attempt.
    await job.moveToDelayed(Date.now() + (deps.slotRetryMs ?? 5000), token);
    throw new DelayedError();
  }
  const stopLease = deps.slots.keepAlive(data.installationId, jobId);
  const local = new AbortController();
  const spec = jobSpec(deps.operator, { ...data, jobId });
  // A backstop two minutes past the pipeline's own wall-clock cap, which normally ends the run first with exit_budget.
  const minutes = spec.caps.minutes.value;
  const budget = AbortSignal.timeout(minutes * 60_000 + 120_000);
  const runSignal = AbortSignal.any([local.signal, budget, ...(signal ? [signal] : [])]);
  // Owned (a marker next to it), so a worker that dies mid-job leaves a folder the next reap can prove stale.
  const dir = await makeOwnedDir(deps.workdir, 'repgen-job-');
  let ports: JobPorts | null = null;
  const gone = async (): Promise<JobResult> => {
    await deps.registry.claimFinalWord(jobId);
    await deps.registry.releaseIssue(issueKey(data), jobId);
    log.warn({ jobId }, 'issue deleted during the run; stopped');
    return { status: 'issue_gone' };
  };
  try {
    ports = await deps.portsFor(data, { jobId, dir, stop: (why) => local.abort(why) });
    const { source, publisher } = ports;
    if (await isCancelRequested(deps.redis, deps.registry.prefix, jobId)) {
      await publisher.end({ kind: 'cancelled', by: 'request' });
      return { status: 'cancelled' };
    }
    if (data.kind === 'pr') {
      const url = await ports.openLastReproducedPr();
      return url ? { status: 'pr_opened', url } : { status: 'no_reproduction' };
    }
    // attemptsStarted also counts slot waits and shutdown hand-backs; only a stall means a run was cut short.
    const restarted =
      (job.stalledCounter ?? 0) > 0 ? ` (restarted: try ${currentRun(job)}; the previous one stopped before finishing)` : '';
    const progress = async (stage: Parameters<ProgressFn>[0], message: string): Promise<void> => {
      const text = stage === 'intake' ? `${message}${restarted}` : message;
      await job.updateProgress({ stage, message: text }).catch(() => undefined);
      await publisher.progress(stage, text).catch(() => undefined);
    };
    await progress('intake', `reading the issue and checking out ${data.ref}`);
    for (const note of spec.notes) log.info({ jobId, note }, 'run spec');
    const result = await reproduceIssue(
      spec,
      {
        source,
        publisher: { progress, publish: (r) => publisher.publish(r), end: (e) => publisher.end(e) },
        executor: await deps.executorFor(spec.executor),
        log,
        ...(deps.llm !== undefined ? { llm: deps.llm } : {}),
        ...(deps.buildContext !== undefined ? { buildContext: deps.buildContext } : {}),
        ...(deps.stages ? { stages: deps.stages } : deps.runPipeline ? { stages: scripted(deps.runPipeline, data, jobId) } : {}),
      },
      runSignal,
    );
    if (result.published.gone || publisher.isGone) return await gone();
    if (result.published.alreadyEnded) return { status: 'already_ended' };
    const url = result.published.locations.find((l) => /\/pull\/\d+$/.test(l));
    return {
      status: result.evidence.outcome.status,
      ...(result.checkout?.sha ? { sha: result.checkout.sha } : {}),
      ...(url ? { url } : {}),
    };
  } catch (err) {
    if (ports?.publisher.isGone || err instanceof SourceGoneError || local.signal.reason instanceof SourceGoneError) return await gone();
    if (!ports) throw await failAttempt(job, data, jobId, deps, null, err);
    const { publisher } = ports;
    if (signal?.aborted && signal.reason === SHUTDOWN_REASON) {
      // Graceful shutdown: hand the job back without spending an attempt; another worker picks it up.
      await job.moveToDelayed(Date.now(), token);
      throw new DelayedError();
    }
    if (signal?.aborted || (await isCancelRequested(deps.redis, deps.registry.prefix, jobId))) {
      await publisher.end({ kind: 'cancelled', by: 'request' });
      return { status: 'cancelled' };
    }
    if (budget.aborted) {
      await publisher.end({ kind: 'time_budget', minutes });
      return { status: 'exit_budget' };
    }
    if (err instanceof BadRefError) {
      await publisher.end({ kind: 'bad_ref', ref: data.ref });
      return { status: 'bad_ref' };
    }
    throw await failAttempt(job, data, jobId, deps, publisher, err);
  } finally {
    stopLease();
    await deps.slots.release(data.installationId, jobId).catch(() => undefined);
    await removeOwnedDir(dir).catch(() => undefined);
  }
}

/** A test's scripted pipeline as stages 1-5: it sees the job's request and reports progress through the ports. */
function scripted(run: RunPipeline, data: ReproJob, jobId: string): RunStages {
  return async (input, deps, signal) => {
    const outcome = await run(
      { jobId, issue: input.issue, repoDir: input.repoDir ?? '', config: data.config, gpu: data.gpu, llm: data.llm },
      deps.progress,
      signal,
    );
    return { outcome, report: null, plan: null, probe: null, context: null, tier0: null, finalRun: null, confirm: null };
  };
}

/**
 * One attempt failed for a reason retrying may fix. Before the last attempt: say so and rethrow (BullMQ
 * retries with backoff). On the last: the final word, and fail for good.
 */
async function failAttempt(
  job: Job,
  data: ReproJob,
  jobId: string,
  deps: ProcessDeps,
  publisher: ResultPublisher | null,
  err: unknown,
): Promise<Error> {
  const error = err instanceof Error ? err : new Error(String(err));
  const reason = error instanceof CancelledError ? 'the run was stopped' : error.message;
  const attempt = job.attemptsMade + 1;
  const attempts = job.opts.attempts ?? 1;
  deps.log.warn({ jobId, attempt, attempts, err: reason }, 'attempt failed');
  const retrying = attempt < attempts;
  // Runs that ended with their worker dying are not in attemptsMade (BullMQ bounds them by maxStalledCount): say them.
  const end = { kind: 'failed', reason, attempt, attempts, retrying, runs: currentRun(job), crashed: job.stalledCounter ?? 0 } as const;
  if (publisher) await publisher.end(end).catch(() => undefined);
  else if (!retrying) await deps.registry.releaseIssue(issueKey(data), jobId);
  return retrying ? error : new UnrecoverableError(reason);
}
