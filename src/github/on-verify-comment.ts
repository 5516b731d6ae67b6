import type { RepoConfig } from '../config/repo-config.js';
import { linkedIssues } from './linked-issues.js';
import { httpStatus, type Octokit } from './octokit.js';
import { PullRequestEvent, verifyTargetOf } from './on-pull-request.js';
import type { HandlerDeps } from './start-run.js';
import { issuesWithRepro, startVerify } from './start-verify.js';
import type { IssueCommentEvent } from './webhook-payloads.js';

export type VerifyCommentResult = 'queued' | 'duplicate' | 'no_link' | 'no_repro' | 'pr_gone' | 'enqueue_failed';

/**
 * `/repgen verify [#N]` on a pull request, from someone the permission gate let through: the issue it names,
 * or else the issues the PR's description links, each with a confirmed reproduction, checked at the PR's
 * head. The comment payload does not carry the head, so the PR is read first.
 */
export async function onVerifyComment(
  octokit: Octokit,
  deliveryId: string,
  event: IssueCommentEvent,
  command: { issue: number | null },
  config: RepoConfig,
  deps: HandlerDeps,
): Promise<VerifyCommentResult> {
  const owner = event.repository.owner.login;
  const repo = event.repository.name;
  const issue_number = event.issue.number;
  const reply = async (body: string): Promise<void> => {
    await octokit.rest.issues.createComment({ owner, repo, issue_number, body });
  };
  let pr: unknown;
  try {
    pr = (await octokit.rest.pulls.get({ owner, repo, pull_number: issue_number })).data;
  } catch (err) {
    if (httpStatus(err) === 404) return 'pr_gone';
    throw err;
  }
  const parsed = PullRequestEvent.safeParse({
    action: 'verify',
    installation: event.installation,
    repository: { ...event.repository, html_url: repoUrlOf(event) },
    pull_request: pr,
    sender: event.sender,
  });
  if (!parsed.success) {
    deps.log.warn({ deliveryId, problem: parsed.error.issues[0]?.path.join('.') }, 'pull request unreadable for a fix check');
    return 'pr_gone';
  }
  const target = verifyTargetOf(parsed.data);
  const asked = command.issue !== null ? [command.issue] : linkedIssues(parsed.data.pull_request.body, { owner, repo });
  if (!asked.length) {
    await reply(
      'RepGen cannot tell which issue this pull request fixes: its description links none (`Fixes #N`). Name it: `/repgen verify #N`.',
    );
    return 'no_link';
  }
  const withRepro = await issuesWithRepro(asked, target, deps);
  const without = asked.filter((n) => !withRepro.includes(n));
  if (!withRepro.length) {
    await reply(
      `RepGen has no confirmed reproduction of ${list(without)}, so there is nothing to run at this pull request yet. Comment \`/repgen\` on the issue first.`,
    );
    return 'no_repro';
  }
  if (!(await deps.registry.claimDelivery(deliveryId))) return 'duplicate';
  await octokit.rest.reactions.createForIssueComment({ owner, repo, comment_id: event.comment.id, content: 'eyes' });
  let result: VerifyCommentResult = 'queued';
  for (const n of withRepro) {
    if (
      (await startVerify(
        octokit,
        deliveryId,
        target,
        { issueNumber: n, trigger: 'comment', requestedBy: event.sender.login, config },
        deps,
      )) === 'enqueue_failed'
    )
      result = 'enqueue_failed';
  }
  if (without.length)
    await reply(`RepGen has no confirmed reproduction of ${list(without)}; only ${list(withRepro)} is checked at this pull request.`);
  return result;
}

function list(ns: readonly number[]): string {
  return ns.map((n) => `#${n}`).join(', ');
}

/** The repository's web URL, from the issue's (the comment payload's repository part is read permissively and may lack it). */
function repoUrlOf(event: IssueCommentEvent): string {
  return event.issue.html_url.replace(/\/(issues|pull)\/\d+$/, '');
}
