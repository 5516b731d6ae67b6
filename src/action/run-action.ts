// 1 event  2 gate (bots, label, command, permission, config)  3 progress comment + 👀  4 preflight (sandbox,
// checkout)  5 workspace at the ref  6 pipeline  7 publish (comment, check run, labels, PR) + files for the outputs
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ProbotOctokit } from 'probot';
import { hostSecrets } from '../commands/reproduce-files.js';
import { scriptPython } from '../config/env/exec-env.js';
import { CancelledError, SetupError } from '../errors.js';
import type { ScriptExecutor } from '../exec/types.js';
import type { cloneAtRef } from '../github/clone-repo.js';
import { checkPython } from '../host/check-python.js';
import { ReadBoundedError, readBounded } from '../host/read-bounded.js';
import { IssueGoneError, RefNotFoundError } from '../github/errors.js';
import { finalFailureComment, progressMarker } from '../github/messages.js';
import type { Octokit } from '../github/octokit.js';
import { IssuePublisher } from '../github/publish/issue-publisher.js';
import type { LlmClient } from '../llm/types.js';
import type { Logger } from '../log.js';
import type { BuildContextFn } from '../pipeline/run-repro.js';
import { createProgressTracker } from '../publish/progress-tracker.js';
import { checkCheckoutHoldsNoToken, checkSandbox } from './check-sandbox.js';
import { gateComment, gateLabeled, type GateStatus, type RunAsk } from './gate-event.js';
import { prepareCheckout } from './prepare-checkout.js';
import { publishOutcome, readIssue } from './publish-outcome.js';
import { operatorEnv, type ActionEnv } from './read-action-env.js';
import { readActionEvent } from './read-event.js';
import { runActionPipeline } from './run-pipeline.js';

export type ActionStatus = GateStatus | 'unsupported' | 'ran' | 'bad_ref' | 'setup_failed' | 'failed' | 'cancelled' | 'issue_gone';

export interface ActionResult {
  status: ActionStatus;
  /** The run's headline verdict (docs/verdicts.md); null when nothing ran. */
  verdict: string | null;
  reproPath: string | null;
  evidencePath: string | null;
  commentUrl: string | null;
  /** One line for the log (and the step's error annotation when `exitCode` is 1). */
  message: string;
  /** 1 when RepGen itself failed (a runner without a sandbox, a crash); a verdict, a refusal or an ignored event is 0. */
  exitCode: 0 | 1;
}

export interface ActionDeps {
  /** The step's whole environment: the operator's settings (REPGEN_*) come from it. */
  env: NodeJS.ProcessEnv;
  log: Logger;
  /** Cancellation (the workflow run cancelled: SIGINT/SIGTERM). */
  signal?: AbortSignal;
  /** Tests inject these; a real run builds them from the environment. */
  executor?: ScriptExecutor;
  llm?: LlmClient | null;
  buildContext?: BuildContextFn;
  clone?: typeof cloneAtRef;
  checkSandbox?: typeof checkSandbox;
  /** @defaultValue 1000 */
  minEditIntervalMs?: number;
}

const nothing = { verdict: null, reproPath: null, evidencePath: null, commentUrl: null } as const;

export async function runAction(a: ActionEnv, deps: ActionDeps): Promise<ActionResult> {
  // 1 event
  const payload = await readEventFile(a.eventPath);
  const event = readActionEvent(a.eventName, payload);
  if (event.kind === 'unsupported') return { ...nothing, status: 'unsupported', message: event.why, exitCode: 0 };
  const [owner = '', repo = ''] = a.repository.split('/');
  const octokit = createActionOctokit(a);
  const runUrl = `${a.serverUrl}/${a.repository}/actions${a.runId ? `/runs/${a.runId}` : ''}`;

  // 2 gate
  const gateDeps = {
    octokit,
    owner,
    repo,
    label: a.inputs['trigger-label'],
    runsUrl: `${a.serverUrl}/${a.repository}/actions`,
    log: deps.log,
  };
  const gate = event.kind === 'labeled' ? await gateLabeled(event.payload, gateDeps) : await gateComment(event.payload, gateDeps);
  if (!gate.go) return { ...nothing, status: gate.status, message: gate.why, exitCode: 0 };
  const { ask } = gate;
  const issueNumber = event.payload.issue.number;

  // 3 the run's one comment, edited as it goes
  const jobId = `action-${a.runId ?? Date.now()}-${a.runAttempt ?? '1'}`;
  const marker = progressMarker(jobId);
  const secrets = [a.token, ...hostSecrets(deps.env)];
  const [comment] = await Promise.all([
    octokit.rest.issues.createComment({
      owner,
      repo,
      issue_number: issueNumber,
      body: `${marker}\n⏳ **RepGen** is reproducing this issue (asked by ${ask.requestedBy}) in [this workflow run](${runUrl}).`,
    }),
    ask.commentId === null
      ? octokit.rest.reactions.createForIssue({ owner, repo, issue_number: issueNumber, content: 'eyes' })
      : octokit.rest.reactions.createForIssueComment({ owner, repo, comment_id: ask.commentId, content: 'eyes' }),
  ]);
  const commentUrl = comment.data.html_url;
  const local = new AbortController();
  const signal = AbortSignal.any([local.signal, ...(deps.signal ? [deps.signal] : [])]);
  const pub = new IssuePublisher(octokit, {
    owner,
    repo,
    issueNumber,
    commentId: comment.data.id,
    secrets,
    log: deps.log,
    minEditIntervalMs: deps.minEditIntervalMs,
    // Nobody is left to read the result: stop spending the runner on it.
    onGone: () => local.abort(new IssueGoneError('the issue was deleted')),
  });
  const tracker = createProgressTracker((md) => pub.progress(`${marker}\n${md}`).catch(() => undefined), { secrets });
  const scratch = join(a.tempDir ?? tmpdir(), 'repgen', `issue-${issueNumber}`);
  const finish = async (status: ActionStatus, body: string, message: string, exitCode: 0 | 1): Promise<ActionResult> => {
    await pub.final(`${marker}\n${body}`).catch(() => undefined);
    return { ...nothing, commentUrl, status, message, exitCode };
  };

  try {
    // 4 preflight: nothing untrusted runs on a runner that cannot isolate it, or next to a readable token
    const opEnv = operatorEnv(deps.env, a.inputs);
    await tracker.progress('intake', 'checking the sandbox and the checkout');
    const isolation = deps.executor
      ? deps.executor.name
      : await (deps.checkSandbox ?? checkSandbox)(
          ask.config.executor.kind === 'kubernetes' ? { ...opEnv, REPGEN_EXECUTOR: 'kubernetes' } : opEnv,
        );
    deps.log.info({ isolation }, 'sandbox ready');
    await checkCheckoutHoldsNoToken(a.workspace);
    await checkPython(scriptPython({ REPGEN_PYTHON: opEnv.REPGEN_PYTHON }), {
      setting: a.inputs.python ? 'the python input' : 'REPGEN_PYTHON',
      path: deps.env.PATH,
    });

    // 5 the issue and the workspace at the ref
    const issue = await readIssue(octokit, owner, repo, issueNumber);
    await tracker.progress('intake', ask.ref ? `checking out ${ask.ref}` : "using the workflow's checkout");
    const checkout = await prepareCheckout(
      {
        workspace: a.workspace,
        repository: a.repository,
        ref: ask.ref,
        cloneUrl: event.payload.repository.clone_url,
        defaultBranch: event.payload.repository.default_branch,
        token: a.token,
        issueText: `${issue.title}\n\n${issue.body}`,
        scratch,
        signal,
      },
      deps.clone,
    );

    // 6 the pipeline, writing the files for the outputs (upload them as an artifact)
    const { evidence, files } = await runActionPipeline(
      {
        jobId,
        issue,
        prepared: checkout.prepared,
        sha: checkout.sha,
        ask,
        outDir: join(scratch, 'out'),
        secrets,
        label: `${owner}/${repo}#${issueNumber}`,
      },
      { env: opEnv, log: deps.log, executor: deps.executor, llm: deps.llm, buildContext: deps.buildContext },
      tracker.progress,
      signal,
    );
    if (pub.isGone) return { ...nothing, status: 'issue_gone', message: 'the issue was deleted during the run', exitCode: 0 };

    // 7 the App's comment, check run, labels, PR
    const outcome = evidence.outcome;
    const published = await publishOutcome(outcome, {
      octokit,
      pub,
      owner,
      repo,
      issueNumber,
      issueUrl: event.payload.issue.html_url,
      jobId,
      commentUrl,
      sha: checkout.sha,
      baseBranch: checkout.baseBranch,
      openPr: a.inputs['open-pr'] === true && ask.config.pr !== 'off',
      candidateCommit: ask.config.suggestFix && ask.config.prCandidateCommit,
      evidenceRef: `evidence.json of [the workflow run](${runUrl})`,
      secrets,
      log: deps.log,
    });
    const verdict = outcome.verdict ?? outcome.status;
    const message = `${verdict}: ${outcome.summary}${published.prUrl ? ` (PR ${published.prUrl})` : ''}`;
    return {
      status: 'ran',
      verdict,
      reproPath: files.script,
      evidencePath: files.evidence,
      commentUrl,
      message,
      exitCode: outcome.status === 'exit_infra' || outcome.status === 'exit_env' ? 1 : 0,
    };
  } catch (err) {
    return await failed(err, { ask, pub, signal, finish });
  } finally {
    await rm(join(scratch, 'ref-checkout'), { recursive: true, force: true }).catch(() => undefined);
  }
}

/** The error policy, in one place: what the issue is told and whether the step fails. */
async function failed(
  err: unknown,
  ctx: {
    ask: RunAsk;
    pub: IssuePublisher;
    signal: AbortSignal;
    finish: (status: ActionStatus, body: string, message: string, exitCode: 0 | 1) => Promise<ActionResult>;
  },
): Promise<ActionResult> {
  const { ask, pub, signal, finish } = ctx;
  const reason = err instanceof Error ? err.message : String(err);
  if (pub.isGone || err instanceof IssueGoneError)
    return { ...nothing, status: 'issue_gone', message: 'the issue was deleted during the run', exitCode: 0 };
  if (err instanceof RefNotFoundError) {
    const ref = (ask.ref ?? '').replace(/`/g, '');
    return finish(
      'bad_ref',
      `❌ **RepGen** did not run: the ref \`${ref}\` does not exist in this repository. Use \`/repgen --ref BRANCH_OR_SHA\` with an existing one.`,
      reason,
      0,
    );
  }
  if (signal.aborted || err instanceof CancelledError) {
    return finish(
      'cancelled',
      '🛑 **RepGen** stopped: its workflow run was cancelled. Nothing more will run; `/repgen` starts a new run.',
      'the run was cancelled',
      1,
    );
  }
  if (err instanceof SetupError) {
    return finish(
      'setup_failed',
      `❌ **RepGen** could not run on this runner: ${reason.slice(0, 800)}\n\nNothing was run. This is the workflow's setup, not a verdict on the bug.`,
      reason,
      1,
    );
  }
  return finish('failed', finalFailureComment('', reason, 1).trim(), reason, 1);
}

/** GitHub caps a webhook payload at 25 MB; the runner writes the event's. */
const MAX_EVENT_BYTES = 25 * 1024 * 1024;

async function readEventFile(path: string): Promise<unknown> {
  try {
    const bytes = await readBounded(path, { maxBytes: MAX_EVENT_BYTES, what: `the event payload GITHUB_EVENT_PATH='${path}'` });
    return JSON.parse(bytes.toString('utf8')) as unknown;
  } catch (err) {
    if (err instanceof ReadBoundedError) throw new SetupError(err.message);
    throw new SetupError(`cannot read the event payload GITHUB_EVENT_PATH=${path}: ${(err as Error).message}`);
  }
}

/** Octokit with the workflow's token, Probot's plugins (retry, throttling) and the API of this GitHub (GHES). */
export function createActionOctokit(a: Pick<ActionEnv, 'token' | 'apiUrl' | 'throttle'>): Octokit {
  const Client = ProbotOctokit.defaults((o: Record<string, unknown>) => ({
    ...o,
    throttle: { ...(o.throttle as object), enabled: a.throttle },
    retry: { retries: 1 },
  }));
  return new Client({ auth: { token: a.token }, baseUrl: a.apiUrl }) as unknown as Octokit;
}
