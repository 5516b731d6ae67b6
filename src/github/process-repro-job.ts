import { join } from 'node:path';
import { DelayedError, UnrecoverableError, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import type { RepoConfig } from '../config/repo-config.js';
import { CancelledError } from '../errors.js';
import { makeOwnedDir, removeOwnedDir } from '../exec/reap-work-dirs.js';
import type { Logger } from '../log.js';
import type { ExitStatus, IssueInput, ProgressFn, ReproOutcome, StageName } from '../pipeline/types.js';
import { buildProgressComment, buildResultComment, type StageProgress } from '../publish/build-result-comment.js';
import { isCancelRequested } from '../queue/cancel-channel.js';
import type { InstallationSlots } from '../queue/installation-slots.js';
import { currentRun } from '../queue/attempt-count.js';
import { issueKey, ReproJob } from '../queue/repro-job.js';
import type { RunRegistry } from '../queue/run-registry.js';
import { isBot } from './check-permission.js';
import { cloneAtRef } from './clone-repo.js';
import { IssueGoneError, RefNotFoundError } from './errors.js';
import { cancelledComment, finalFailureComment, progressMarker } from './messages.js';
import { httpStatus, type Octokit } from './octokit.js';
import { IssuePublisher } from './publish/issue-publisher.js';
import { openReproPr } from './publish/open-repro-pr.js';

/** What the worker hands the pipeline: the same `runRepro` the CLI runs, wired by workers/. */
export interface PipelineRequest {
  jobId: string;
  issue: IssueInput;
  repoDir: string;
  config: RepoConfig;
  gpu: boolean;
  llm: string | null;
}
export type RunPipeline = (request: PipelineRequest, progress: ProgressFn, signal: AbortSignal) => Promise<ReproOutcome>;

export interface InstallationAuth {
  octokit: Octokit;
  /** Installation access token: used for the clone, redacted from everything posted. */
  token: string;
}

export interface ProcessDeps {
  registry: RunRegistry;
  redis: Redis;
  slots: InstallationSlots;
  auth: (installationId: number) => Promise<InstallationAuth>;
  runPipeline: RunPipeline;
  /** Checkout of the ref; the real shallow clone unless a test replaces it. @defaultValue cloneAtRef */
  clone?: typeof cloneAtRef;
  /** Parent of each job's throwaway directory. */
  workdir: string;
  log: Logger;
  /** Delay before a job that found its installation at its cap is tried again. @defaultValue 5000 */
  slotRetryMs?: number;
  /** @defaultValue 1000 */
  minEditIntervalMs?: number;
}

export type JobStatus = ExitStatus | 'cancelled' | 'issue_gone' | 'bad_ref' | 'pr_opened' | 'no_reproduction';
export interface JobResult {
  status: JobStatus;
  sha?: string;
  url?: string;
}

/** Why the run's signal fired: a user's cancel, the worker shutting down, or the time cap. */
export const SHUTDOWN_REASON = 'worker-shutdown';

const STAGES: readonly StageName[] = ['intake', 'context', 'report', 'plan', 'agent', 'confirm', 'publish'];

const CONCLUSION: Record<ExitStatus, 'success' | 'neutral' | 'failure' | 'action_required'> = {
  reproduced: 'success',
  not_reproduced: 'neutral',
  needs_info: 'action_required',
  exit_budget: 'neutral',
  exit_infra: 'failure',
};

/**
 * The BullMQ processor: job data → checkout → pipeline → publishing, with the final word guaranteed.
 * Error policy, decided here once: cancel, deleted issue, bad ref and budget end the job with a comment
 * (no retry); anything else is retried with backoff, and the last attempt posts the failure itself.
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
  if (!(await deps.slots.acquire(data.installationId, jobId))) {
    // Fairness between installations: wait without spending an attempt.
    await job.moveToDelayed(Date.now() + (deps.slotRetryMs ?? 5000), token);
    throw new DelayedError();
  }
  const stopLease = deps.slots.keepAlive(data.installationId, jobId);
  const local = new AbortController();
  // A backstop two minutes past the pipeline's own wall-clock cap, which normally ends the run first with exit_budget.
  // (Without a repository cap the operator's ceiling applies in the pipeline; this backstop then allows a day.)
  const budget = AbortSignal.timeout((data.config.caps.minutes ?? 1440) * 60_000 + 120_000);
  const runSignal = AbortSignal.any([local.signal, budget, ...(signal ? [signal] : [])]);
  // Owned (a marker next to it), so a worker that dies mid-job leaves a folder the next reap can prove stale.
  const dir = await makeOwnedDir(deps.workdir, 'repgen-job-');
  let publisher: IssuePublisher | null = null;
  try {
    const auth = await deps.auth(data.installationId);
    const pub = new IssuePublisher(auth.octokit, {
      owner: data.owner,
      repo: data.repo,
      issueNumber: data.issueNumber,
      commentId: data.commentId,
      secrets: [auth.token],
      log,
      minEditIntervalMs: deps.minEditIntervalMs,
      // Nobody is left to read the result: stop spending compute on it.
      onGone: () => local.abort(new IssueGoneError('the issue was deleted')),
    });
    publisher = pub;
    const ctx: RunContext = { job, data, jobId, deps, pub, octokit: auth.octokit };
    if (await isCancelRequested(deps.redis, deps.registry.prefix, jobId)) return await finishCancelled(ctx);
    if (data.kind === 'pr') return await runPrJob(ctx);

    const stages: StageProgress[] = STAGES.map((stage) => ({ stage, state: 'pending' }));
    const progress: ProgressFn = async (stage, message) => {
      for (const s of stages) if (s.state === 'running') s.state = 'done';
      const current = stages.find((s) => s.stage === stage);
      if (current) Object.assign(current, { state: 'running', note: message });
      await job.updateProgress({ stage, message }).catch(() => undefined);
      await pub.progress(`${progressMarker(jobId)}\n${buildProgressComment(stages, { secrets: [auth.token] })}`).catch(() => undefined);
    };
    // attemptsStarted also counts slot waits and shutdown hand-backs; only a stall means a run was cut short.
    const restarted =
      (job.stalledCounter ?? 0) > 0 ? ` (restarted: try ${currentRun(job)}; the previous one stopped before finishing)` : '';
    await progress('intake', `reading the issue and checking out ${data.ref}${restarted}`);
    const issue = await readIssue(auth.octokit, data);
    const cloned = await (deps.clone ?? cloneAtRef)({
      url: data.cloneUrl,
      ref: data.ref,
      token: auth.token,
      dir: join(dir, 'repo'),
      signal: runSignal,
    });
    runSignal.throwIfAborted();
    const outcome = await deps.runPipeline(
      { jobId, issue, repoDir: join(dir, 'repo'), config: data.config, gpu: data.gpu, llm: data.llm },
      progress,
      runSignal,
    );
    if (pub.isGone) return await finishGone(ctx);
    return await publishOutcome(ctx, outcome, cloned.sha, auth.token);
  } catch (err) {
    if (publisher?.isGone || err instanceof IssueGoneError)
      return await finishGone({ job, data, jobId, deps, pub: publisher, octokit: null });
    if (!publisher) throw await failAttempt(job, data, jobId, deps, null, err);
    const ctx: RunContext = { job, data, jobId, deps, pub: publisher, octokit: null };
    if (signal?.aborted && signal.reason === SHUTDOWN_REASON) {
      // Graceful shutdown: hand the job back without spending an attempt; another worker picks it up.
      await job.moveToDelayed(Date.now(), token);
      throw new DelayedError();
    }
    if (signal?.aborted || (await isCancelRequested(deps.redis, deps.registry.prefix, jobId))) return await finishCancelled(ctx);
    if (budget.aborted) {
      return await finishWith(
        ctx,
        `${progressMarker(jobId)}\n⏱️ **RepGen** stopped: the run passed its time ` +
          `budget${data.config.caps.minutes ? ` of ${data.config.caps.minutes} min (\`caps.minutes\`)` : ''}. ` +
          `Nothing was reproduced in that time.`,
        'exit_budget',
      );
    }
    if (err instanceof RefNotFoundError) {
      const ref = data.ref.replace(/`/g, '');
      const text = `❌ **RepGen** did not run: the ref \`${ref}\` does not exist in this repository. Use \`/repgen --ref BRANCH_OR_SHA\` with an existing one.`;
      return await finishWith(ctx, `${progressMarker(jobId)}\n${text}`, 'bad_ref');
    }
    throw await failAttempt(job, data, jobId, deps, publisher, err);
  } finally {
    stopLease();
    await deps.slots.release(data.installationId, jobId).catch(() => undefined);
    await removeOwnedDir(dir).catch(() => undefined);
  }
}

interface RunContext {
  job: Job;
  data: ReproJob;
  jobId: string;
  deps: ProcessDeps;
  pub: IssuePublisher | null;
  octokit: Octokit | null;
}

export async function readIssue(octokit: Octokit, data: Pick<ReproJob, 'owner' | 'repo' | 'issueNumber'>): Promise<IssueInput> {
  try {
    const { data: issue } = await octokit.rest.issues.get({ owner: data.owner, repo: data.repo, issue_number: data.issueNumber });
    const { data: comments } = await octokit.rest.issues.listComments({
      owner: data.owner,
      repo: data.repo,
      issue_number: data.issueNumber,
      per_page: 30,
    });
    // Later comments often carry the missing version or traceback; bots' (RepGen's own included) never do.
    const extra = comments
      .filter((c) => c.user && !isBot({ login: c.user.login, type: c.user.type }) && c.body && !/^\s*\/repgen/i.test(c.body))
      .map((c) => `\n\n---\nComment by ${c.user?.login ?? 'someone'}:\n\n${c.body ?? ''}`)
      .join('');
    return { title: issue.title, body: `${issue.body ?? ''}${extra}`, url: issue.html_url, number: issue.number };
  } catch (err) {
    const status = httpStatus(err);
    if (status === 404 || status === 410) throw new IssueGoneError('the issue was deleted');
    throw err;
  }
}

async function publishOutcome(ctx: RunContext, outcome: ReproOutcome, sha: string, token: string): Promise<JobResult> {
  const { data, jobId, deps, pub } = ctx;
  if (!pub) throw new Error('publisher missing');
  const key = issueKey(data);
  const body = `${progressMarker(jobId)}\n${buildResultComment(outcome, { secrets: [token], evidenceRef: 'the worker log' })}`;
  const markers = outcome.observed
    .flatMap((s) => (s.exception ? [`${s.exception.type}: ${s.exception.message}`.split('\n')[0] ?? ''] : []))
    .filter(Boolean);
  const reproduced = outcome.status === 'reproduced' && outcome.script !== null;
  // Remembered before the comment says "reproduced", so a `/repgen pr` typed right after finds it.
  if (reproduced && outcome.script) {
    await deps.registry.setLastReproduced(key, {
      script: outcome.script,
      sha,
      summary: outcome.summary,
      commentUrl: data.commentUrl,
      ref: data.ref,
      markers,
      at: Date.now(),
    });
  }
  if (!(await pub.final(body))) return finishGone(ctx);
  await deps.registry.claimFinalWord(jobId);
  // The issue is free as soon as its final word is out; the check run and labels below need no lock.
  await deps.registry.releaseIssue(key, jobId);
  // After the final word nothing may fail the job (a retry would rerun the whole pipeline): the
  // extras are attempted once each, and a failure is logged and said in the comment.
  const extras: string[] = [];
  const attempt = async (what: string, fn: () => Promise<void>): Promise<void> => {
    try {
      await fn();
    } catch (err) {
      deps.log.warn({ jobId, what, err: (err as Error).message }, 'publishing step failed');
      extras.push(`RepGen could not ${what} (${httpStatus(err) ?? 'error'}).`);
    }
  };
  await attempt('create the check run', () =>
    pub.checkRun({
      headSha: sha,
      conclusion: CONCLUSION[outcome.status],
      title: outcome.status === 'reproduced' ? 'Bug reproduced' : `RepGen: ${outcome.status.replace('_', ' ')}`,
      summary: body.replace(progressMarker(jobId), '').trim(),
      detailsUrl: data.commentUrl,
      externalId: key,
    }),
  );
  if (outcome.status === 'reproduced') await attempt('add the repro:confirmed label', () => pub.addLabels(['repro:confirmed']));
  if (outcome.status === 'needs_info') await attempt('add the needs-info label', () => pub.addLabels(['needs-info']));
  let url: string | undefined;
  const octokit = ctx.octokit;
  if (reproduced && outcome.script && data.config.pr === 'auto' && octokit) {
    const script = outcome.script;
    await attempt('open the regression-test PR', async () => {
      const pr = await openReproPr(octokit, {
        owner: data.owner,
        repo: data.repo,
        issueNumber: data.issueNumber,
        issueUrl: data.issueUrl,
        baseSha: sha,
        baseBranch: data.ref,
        script,
        markers,
        summary: outcome.summary,
        evidenceUrl: data.commentUrl,
      });
      url = pr.url;
      extras.push(`Regression test proposed in ${pr.url}.`);
    });
  }
  if (extras.length) await pub.final(`${body}\n\n${extras.join('\n')}`).catch(() => undefined);
  deps.log.info({ jobId, status: outcome.status }, 'run finished');
  return { status: outcome.status, sha, ...(url ? { url } : {}) };
}

async function runPrJob(ctx: RunContext): Promise<JobResult> {
  const { data, deps, jobId, pub, octokit } = ctx;
  const key = issueKey(data);
  const last = await deps.registry.lastReproduced(key);
  if (!last || !octokit)
    return finishWith(
      ctx,
      `${progressMarker(jobId)}\nThere is no reproduced run on this issue any more, so RepGen opened no PR. Run \`/repgen\` first.`,
      'no_reproduction',
    );
  await pub?.progress(`${progressMarker(jobId)}\n⏳ **RepGen** is opening a PR with the regression test…`);
  const pr = await openReproPr(octokit, {
    owner: data.owner,
    repo: data.repo,
    issueNumber: data.issueNumber,
    issueUrl: data.issueUrl,
    baseSha: last.sha,
    baseBranch: last.ref,
    script: last.script,
    markers: last.markers,
    summary: last.summary,
    evidenceUrl: last.commentUrl,
  });
  const result = await finishWith(
    ctx,
    `${progressMarker(jobId)}\n✅ **RepGen** opened ${pr.url}: it adds the reproduction as a regression test marked \`xfail(strict=True)\`.`,
    'pr_opened',
  );
  return { ...result, url: pr.url };
}

async function finishWith(ctx: RunContext, body: string, status: JobStatus): Promise<JobResult> {
  const { data, jobId, deps, pub } = ctx;
  if (await deps.registry.claimFinalWord(jobId)) await pub?.final(body);
  await deps.registry.releaseIssue(issueKey(data), jobId);
  deps.log.info({ jobId, status }, 'run ended');
  return { status };
}

async function finishCancelled(ctx: RunContext): Promise<JobResult> {
  return finishWith(ctx, cancelledComment(progressMarker(ctx.jobId), 'request'), 'cancelled');
}

async function finishGone(ctx: RunContext): Promise<JobResult> {
  await ctx.deps.registry.claimFinalWord(ctx.jobId);
  await ctx.deps.registry.releaseIssue(issueKey(ctx.data), ctx.jobId);
  ctx.deps.log.warn({ jobId: ctx.jobId }, 'issue deleted during the run; stopped');
  return { status: 'issue_gone' };
}

/**
 * One attempt failed for a reason retrying may fix. Before the last attempt: say so and rethrow (BullMQ
 * retries with backoff). On the last: post the final word and fail for good.
 */
async function failAttempt(
  job: Job,
  data: ReproJob,
  jobId: string,
  deps: ProcessDeps,
  pub: IssuePublisher | null,
  err: unknown,
): Promise<Error> {
  const error = err instanceof Error ? err : new Error(String(err));
  const reason = error instanceof CancelledError ? 'the run was stopped' : error.message;
  const attempt = job.attemptsMade + 1;
  const attempts = job.opts.attempts ?? 1;
  deps.log.warn({ jobId, attempt, attempts, err: reason }, 'attempt failed');
  if (attempt < attempts) {
    await pub
      ?.progress(
        `${progressMarker(jobId)}\n⚠️ **RepGen** attempt ${attempt} of ${attempts} failed (${reason.slice(0, 300)}); it will be retried automatically.`,
      )
      .catch(() => undefined);
    return error;
  }
  // Runs that ended with their worker dying are not in attemptsMade (BullMQ bounds them by maxStalledCount): say them.
  const runs = currentRun(job);
  if (pub && (await deps.registry.claimFinalWord(jobId)))
    await pub.final(finalFailureComment(progressMarker(jobId), reason, runs, job.stalledCounter ?? 0)).catch(() => undefined);
  await deps.registry.releaseIssue(issueKey(data), jobId);
  return new UnrecoverableError(reason);
}
