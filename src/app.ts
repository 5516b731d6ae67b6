import type { ApplicationFunction } from 'probot';
import { onCheckRunRerequested } from './github/on-check-run-rerequested.js';
import { onIssueComment } from './github/on-issue-comment.js';
import { onIssueLabeled } from './github/on-issue-labeled.js';
import { onPullRequest } from './github/on-pull-request.js';
import type { HandlerDeps } from './github/start-run.js';

/**
 * The Probot app: registers handlers, nothing else. Probot has verified the webhook signature before any
 * of these run; `context.id` is the X-GitHub-Delivery id that makes redeliveries no-ops.
 */
export function createApp(deps: HandlerDeps): ApplicationFunction {
  return (app) => {
    app.on('issues.labeled', async (context) => {
      await onIssueLabeled(context.octokit, context.id, context.payload, deps);
    });
    app.on('issue_comment.created', async (context) => {
      await onIssueComment(context.octokit, context.id, context.payload, deps);
    });
    // A fix check when the PR's description links a reproduced issue; new code on the PR checks again.
    app.on('pull_request.opened', async (context) => {
      await onPullRequest(context.octokit, context.id, context.payload, deps);
    });
    app.on('pull_request.synchronize', async (context) => {
      await onPullRequest(context.octokit, context.id, context.payload, deps);
    });
    app.on('pull_request.reopened', async (context) => {
      await onPullRequest(context.octokit, context.id, context.payload, deps);
    });
    app.on('check_run.rerequested', async (context) => {
      await onCheckRunRerequested(context.octokit, context.id, context.payload, deps);
    });
  };
}
