import { chmod } from 'node:fs/promises';
import { join } from 'node:path';
import { DelayedError, UnrecoverableError, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import type { RepoConfig } from '../config/repo-config.js';
import { makeOwnedDir, removeOwnedDir } from '../exec/sandbox/reap-work-dirs.js';
import type { Logger } from '../log.js';
import type { IssueInput } from '../pipeline/types.js';
import { buildFixCheckReport, type CheckConclusion } from '../publish/build-fix-check-report.js';
import { redactSecrets } from '../publish/neutralize.js';
import { failedAsStalled, runsOfFailedJob } from '../queue/attempt-count.js';
import type { InstallationSlots } from '../queue/installation-slots.js';
import { issueKey } from '../queue/repro-job.js';
import type { RunRegistry } from '../queue/run-registry.js';
import { VerifyJob } from '../queue/verify-job.js';
import type { BuggyOracle, FixCheck, FixVerdict } from '../workspace/fix-verdict.js';
import { cloneAtRef } from './clone-repo.js';
import { IssueGoneError, RefNotFoundError } from './errors.js';
import { readIssue } from './github-issue-source.js';
import { httpStatus, type InstallationAuth, type Octokit } from './octokit.js';
import { SHUTDOWN_REASON } from '../queue/process-repro-job.js';
import { buildReproTest, reproTestPath } from './publish/build-repro-test.js';
import { unmarkNote, unmarkReproTest } from './publish/unmark-repro-test.js';

/** What the worker hands the fix-check runner (wired in workers/: executor, limits, the report's reading). */
export interface FixCheckRequest {
  jobId: string;
  /** The issue as it reads now: the runner reads the reported symptom from it, to tell "still reproduces" from other failures. */
  issue: IssueInput;
  /** The confirmed reproduction. */
  script: string;
  /** The PR's head: the ref as a name and its commit. */
  ref: string;
  sha: string;
  /** The checkout of `sha`, readable by the sandbox: the run's workspace. */
  repoDir: string;
  config: RepoConfig;
  gpu: boolean;
  /** A behavioural reproduction's oracle as it showed where it was reproduced: recorded beside its values at the PR. */
  buggyOracle?: BuggyOracle;
}
export type RunFixCheck = (request: FixCheckRequest, signal: AbortSignal) => Promise<FixCheck>;

export interface VerifyDeps {
  registry: RunRegistry;
  redis: Redis;
  slots: InstallationSlots;
  auth: (installationId: number) => Promise<InstallationAuth>;
  runFixCheck: RunFixCheck;
  /** @defaultValue cloneAtRef */
  clone?: typeof cloneAtRef;
  workdir: string;
  log: Logger;
  /** @defaultValue 5000 */
  slotRetryMs?: number;
}

export interface VerifyResult {
  status: FixVerdict | 'no_reproduction' | 'issue_gone' | 'head_gone';
  sha: string;
  /** RepGen's regression-test PR, when its test was turned into a plain one. */
  unmarked?: string;
}

/**
 * The processor of a fix check: the issue's confirmed reproduction (the one `/repgen` posted and remembered)
 * runs against the PR's head in the same sandbox as any run, the head's tree as its read-only workspace, and
 * the check run says fixed / still failing / inconclusive with the output. Retries as repro jobs do; the last
 * failed attempt completes the check run as neutral, so no check run is left spinning.
 */
export async function processVerifyJob(
  job: Job,
  token: string | undefined,
  signal: AbortSignal | undefined,
  deps: VerifyDeps,
): Promise<VerifyResult> {
  const parsed = VerifyJob.safeParse(job.data);
  if (!parsed.success) throw new UnrecoverableError(`job data is not a VerifyJob (${parsed.error.issues[0]?.path.join('.') ?? '?'})`);
  const data = parsed.data;
  const jobId = job.id ?? 'unknown';
  if (!(await deps.slots.acquire(data.installationId, jobId))) {
    await job.moveToDelayed(Date.now() + (deps.slotRetryMs ?? 5000), token);
    throw new DelayedError();
  }
  const stopLease = deps.slots.keepAlive(data.installationId, jobId);
  // A backstop: each run has its own time limit (the run spec's), so this only catches a hung step.
  const budget = AbortSignal.timeout((data.config.caps.minutes ?? 1440) * 60_000 + 120_000);
  const runSignal = AbortSignal.any([budget, ...(signal ? [signal] : [])]);
  // Owned (a marker next to it), so a worker that dies mid-job leaves a folder the next reap can prove stale.
  const dir = await makeOwnedDir(deps.workdir, 'repgen-verify-');
  let auth: InstallationAuth | null = null;
  const sha = data.pr.headSha;
  try {
    auth = await deps.auth(data.installationId);
    const octokit = auth.octokit;
    const complete = (c: { conclusion: CheckConclusion; title: string; summary: string; text?: string }) =>
      completeCheck(octokit, data, c, [auth?.token ?? '']);
    await octokit.rest.checks.update({
      owner: data.owner,
      repo: data.repo,
      check_run_id: data.checkRunId,
      status: 'in_progress',
      started_at: new Date().toISOString(),
    });
    const last = await deps.registry.lastReproduced(issueKey(data));
    if (!last) {
      await complete({
        conclusion: 'neutral',
        title: `No reproduction of #${data.issueNumber} to run`,
        summary:
          `RepGen no longer holds a confirmed reproduction of ${data.issueUrl} (it keeps one for 30 days). ` +
          `Comment \`/repgen\` on the issue, then \`/repgen verify\` here.`,
      });
      return { status: 'no_reproduction', sha };
    }
    const issue = await readIssue(octokit, data);
    const repoDir = join(dir, 'repo');
    const cloned = await (deps.clone ?? cloneAtRef)({ url: data.cloneUrl, ref: sha, token: auth.token, dir: repoDir, signal: runSignal });
    // mkdtemp makes 0700: the sandbox's unprivileged uid must read the tree it imports.
    await chmod(dir, 0o755);
    runSignal.throwIfAborted();
    const check = await deps.runFixCheck(
      {
        jobId,
        issue,
        script: last.script,
        ref: `pull request #${data.pr.number} (${data.pr.headRef})`,
        sha: cloned.sha,
        repoDir,
        config: data.config,
        gpu: data.config.gpu,
        ...(last.oracle ? { buggyOracle: last.oracle } : {}),
      },
      runSignal,
    );
    let unmarked: string | undefined;
    let regressionNote = '';
    if (check.verdict === 'fixed') {
      try {
        const done = await unmarkReproTest(octokit, {
          owner: data.owner,
          repo: data.repo,
          issueNumber: data.issueNumber,
          issueUrl: data.issueUrl,
          script: last.script,
          markers: last.markers,
          ...(last.oracle ? { oracle: last.oracle } : {}),
          fix: { prNumber: data.pr.number, prUrl: data.pr.url, sha: cloned.sha },
          ...(auth.appLogin ? { appLogin: auth.appLogin } : {}),
        });
        if (done.done !== 'no_repro_pr') unmarked = done.prUrl;
        regressionNote = unmarkNote(done);
      } catch (err) {
        deps.log.warn({ jobId, err: (err as Error).message }, 'could not update the regression-test PR');
        regressionNote = `RepGen could not update its regression-test PR (${httpStatus(err) ?? 'error'}); add this test to the pull request instead.`;
      }
    }
    const report = buildFixCheckReport({
      check,
      issueNumber: data.issueNumber,
      issueUrl: data.issueUrl,
      evidenceUrl: last.commentUrl,
      secrets: [auth.token],
      ...(check.verdict === 'fixed'
        ? {
            regressionTest: {
              path: reproTestPath(data.issueNumber),
              content: buildReproTest({
                issueNumber: data.issueNumber,
                issueUrl: data.issueUrl,
                script: last.script,
                markers: last.markers,
                ...(last.oracle ? { oracle: last.oracle } : {}),
                fixedBy: `pull request #${data.pr.number} at ${cloned.sha.slice(0, 12)}`,
              }),
              note: regressionNote,
            },
          }
        : {}),
    });
    await complete(report);
    deps.log.info({ jobId, verdict: check.verdict, pr: data.pr.number, issue: data.issueNumber }, 'fix check finished');
    return { status: check.verdict, sha: cloned.sha, ...(unmarked ? { unmarked } : {}) };
  } catch (err) {
    if (signal?.aborted && signal.reason === SHUTDOWN_REASON) {
      await job.moveToDelayed(Date.now(), token);
      throw new DelayedError();
    }
    const octokit = auth?.octokit;
    const complete = (c: { conclusion: CheckConclusion; title: string; summary: string }) =>
      octokit ? completeCheck(octokit, data, c, [auth?.token ?? '']).catch(() => undefined) : Promise.resolve();
    if (err instanceof IssueGoneError) {
      await complete({
        conclusion: 'neutral',
        title: `Issue #${data.issueNumber} is gone`,
        summary: 'The issue was deleted, so RepGen has no report to check the fix against.',
      });
      return { status: 'issue_gone', sha };
    }
    if (err instanceof RefNotFoundError) {
      await complete({
        conclusion: 'neutral',
        title: 'The commit is gone',
        summary: `The pull request's head ${sha.slice(0, 12)} no longer exists (force-pushed?). A newer push gets its own check.`,
      });
      return { status: 'head_gone', sha };
    }
    if (budget.aborted || signal?.aborted) {
      if (await deps.registry.claimFinalWord(jobId))
        await complete({
          conclusion: 'neutral',
          title: 'RepGen stopped the fix check',
          summary: budget.aborted ? 'It passed its time budget.' : 'The run was stopped.',
        });
      throw new UnrecoverableError('fix check stopped');
    }
    const reason = err instanceof Error ? err.message : String(err);
    const attempt = job.attemptsMade + 1;
    const attempts = job.opts.attempts ?? 1;
    deps.log.warn({ jobId, attempt, attempts, err: reason }, 'fix check attempt failed');
    if (attempt < attempts) throw err instanceof Error ? err : new Error(reason);
    // Claimed first: the worker's 'failed' listener (finishFailedVerifyJob) must not say it a second time.
    if (await deps.registry.claimFinalWord(jobId)) await complete(failedCheck(reason, attempts));
    throw new UnrecoverableError(reason);
  } finally {
    stopLease();
    await deps.slots.release(data.installationId, jobId).catch(() => undefined);
    await removeOwnedDir(dir).catch(() => undefined);
  }
}

function failedCheck(reason: string, attempts: number): { conclusion: CheckConclusion; title: string; summary: string } {
  return {
    conclusion: 'neutral',
    title: 'RepGen could not run the fix check',
    summary:
      `It failed ${attempts} time${attempts === 1 ? '' : 's'}: ${reason.slice(0, 500)}\n\nThis is ` +
      `RepGen's failure, not a verdict on the fix. Comment \`/repgen verify\` to try again.`,
  };
}

async function completeCheck(
  octokit: Octokit,
  data: VerifyJob,
  c: { conclusion: CheckConclusion; title: string; summary: string; text?: string },
  secrets: string[],
): Promise<void> {
  await octokit.rest.checks.update({
    owner: data.owner,
    repo: data.repo,
    check_run_id: data.checkRunId,
    status: 'completed',
    conclusion: c.conclusion,
    completed_at: new Date().toISOString(),
    output: {
      title: c.title.slice(0, 250),
      summary: redactSecrets(c.summary, secrets),
      ...(c.text ? { text: redactSecrets(c.text, secrets) } : {}),
    },
  });
}

/**
 * A verify job that failed for good without its processor saying so (a worker killed too often): its check
 * run is completed as neutral. Returns false for jobs that are not fix checks.
 */
export async function finishFailedVerifyJob(
  job: Job,
  reason: string,
  deps: { registry: RunRegistry; auth: (installationId: number) => Promise<InstallationAuth>; log: Logger },
): Promise<boolean> {
  const parsed = VerifyJob.safeParse(job.data);
  if (!parsed.success || !job.id) return false;
  if (!(await deps.registry.claimFinalWord(job.id))) return true;
  try {
    const { octokit, token } = await deps.auth(parsed.data.installationId);
    const why = failedAsStalled(reason) ? 'the worker running it stopped (killed or out of memory) more times than RepGen retries' : reason;
    const runs = runsOfFailedJob({ attemptsMade: job.attemptsMade, stalledCounter: job.stalledCounter, failedReason: reason });
    await completeCheck(octokit, parsed.data, failedCheck(why, runs), [token]);
  } catch (err) {
    deps.log.warn({ jobId: job.id, err: (err as Error).message }, 'could not complete the check run of a failed fix check');
  }
  return true;
}
