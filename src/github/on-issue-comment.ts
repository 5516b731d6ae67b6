import { RepoConfig } from '../config/repo-config.js';
import { requestCancel } from '../queue/cancel-channel.js';
import { issueKey } from '../queue/repro-job.js';
import { isBot, repoRole } from './check-permission.js';
import { mayTrigger } from './gate-trigger.js';
import { loadRepoConfig } from './load-repo-config.js';
import { badConfigComment, cancelledComment, helpComment, progressMarker } from './messages.js';
import type { Octokit } from './octokit.js';
import { parseRepgenCommand } from './parse-repgen-command.js';
import { onVerifyComment, type VerifyCommentResult } from './on-verify-comment.js';
import { startRun, type HandlerDeps, type StartResult } from './start-run.js';
import { IssueCommentEvent } from './webhook-payloads.js';

export type CommentResult =
  | StartResult
  | VerifyCommentResult
  | 'ignored'
  | 'malformed'
  | 'refused'
  | 'bad_config'
  | 'help'
  | 'status'
  | 'cancel'
  | 'no_run'
  | 'pr_off';

/** `issue_comment.created`: `/repgen …` commands. */
export async function onIssueComment(octokit: Octokit, deliveryId: string, payload: unknown, deps: HandlerDeps): Promise<CommentResult> {
  const parsed = IssueCommentEvent.safeParse(payload);
  if (!parsed.success) {
    deps.log.warn({ deliveryId, problem: parsed.error.issues[0]?.path.join('.') }, 'malformed issue_comment payload ignored');
    return 'malformed';
  }
  const event = parsed.data;
  const command = parseRepgenCommand(event.comment.body ?? '');
  // Bots are ignored before anything else: RepGen's own comments must never trigger RepGen.
  if (command === null || isBot(event.sender) || isBot(event.comment.user)) return 'ignored';
  const owner = event.repository.owner.login;
  const repo = event.repository.name;
  const issue_number = event.issue.number;
  const reply = async (body: string): Promise<void> => {
    await octokit.rest.issues.createComment({ owner, repo, issue_number, body });
  };
  // Both reads at once: the handler has one second.
  const [loaded, role] = await Promise.all([loadRepoConfig(octokit, owner, repo), repoRole(octokit, owner, repo, event.sender.login)]);
  if (!loaded.ok) {
    // Without a valid config the default roles decide who hears about the broken file.
    if (!(await mayTrigger(octokit, event, role, RepoConfig.parse({}), deps))) return 'refused';
    await reply(badConfigComment(loaded.problems));
    return 'bad_config';
  }
  const config = loaded.config;
  if (!(await mayTrigger(octokit, event, role, config, deps))) return 'refused';
  if (event.issue.pull_request !== undefined) {
    if (command.kind === 'verify') return onVerifyComment(octokit, deliveryId, event, command, config, deps);
    await reply(
      "RepGen reproduces bugs reported in issues; on a pull request it runs `/repgen verify` (the linked issue's reproduction at the PR head).",
    );
    return 'ignored';
  }
  const key = issueKey({ owner, repo, issueNumber: issue_number });
  const run = (kind: 'repro' | 'pr', gpu = false, ref: string | null = null, llm: string | null = null) =>
    startRun(octokit, deliveryId, event, { kind, trigger: 'comment', gpu, ref, llm, config, commentId: event.comment.id }, deps);

  switch (command.kind) {
    case 'help':
      await reply(helpComment());
      return 'help';
    case 'unknown':
      await reply(helpComment(command.reason));
      return 'help';
    case 'run':
      return run('repro', command.gpu, command.ref, command.llm);
    case 'retry':
      return run('repro');
    case 'bisect':
      return startRun(
        octokit,
        deliveryId,
        event,
        {
          kind: 'repro',
          trigger: 'comment',
          gpu: false,
          ref: null,
          llm: null,
          bisect: { good: command.good },
          config,
          commentId: event.comment.id,
        },
        deps,
      );
    case 'verify':
      await reply(
        '`/repgen verify` checks a fix: comment it on the pull request that fixes this issue (or write ' +
          '`Fixes #N` in its description and RepGen checks it when the PR opens).',
      );
      return 'ignored';
    case 'pr': {
      if (config.pr === 'off') {
        await reply('Regression-test PRs are turned off for this repository (`pr: off` in `.github/repgen.yml`).');
        return 'pr_off';
      }
      if (!(await deps.registry.lastReproduced(key))) {
        await reply('There is no reproduced run on this issue yet, so there is no test to propose. Run `/repgen` first.');
        return 'no_run';
      }
      return run('pr');
    }
    case 'status': {
      const active = await deps.registry.activeRun(key);
      if (!active) {
        const last = await deps.registry.lastReproduced(key);
        await reply(
          last
            ? `No RepGen run is in progress. The last reproduction is here: ${last.commentUrl}`
            : 'No RepGen run is in progress on this issue.',
        );
        return 'status';
      }
      const job = await deps.queue.getJob(active.jobId);
      const state = job ? await job.getState() : 'unknown';
      const stage = (job?.progress as { stage?: string } | undefined)?.stage;
      await reply(`A RepGen run is ${state}${stage ? ` (stage: ${stage})` : ''}: ${active.commentUrl}`);
      return 'status';
    }
    case 'cancel': {
      const active = await deps.registry.activeRun(key);
      if (!active) {
        await reply('No RepGen run is in progress on this issue, so there is nothing to cancel.');
        return 'no_run';
      }
      await requestCancel(deps.redis, deps.registry.prefix, active.jobId);
      const job = await deps.queue.getJob(active.jobId);
      const state = job ? await job.getState() : 'unknown';
      // A job no worker holds yet is removed here; a running one is stopped by its worker, which posts the final word.
      if (job && (state === 'waiting' || state === 'delayed' || state === 'prioritized')) {
        await job.remove().catch(() => undefined);
        await deps.registry.releaseIssue(key, active.jobId);
        if (await deps.registry.claimFinalWord(active.jobId)) {
          const commentId = (job.data as { commentId?: number }).commentId;
          if (commentId)
            await octokit.rest.issues.updateComment({
              owner,
              repo,
              comment_id: commentId,
              body: cancelledComment(progressMarker(active.jobId), event.sender.login),
            });
        }
      }
      await octokit.rest.reactions.createForIssueComment({ owner, repo, comment_id: event.comment.id, content: '+1' });
      return 'cancel';
    }
  }
}
