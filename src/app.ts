import type { ApplicationFunction } from 'probot';
import { onCheckRunRerequested } from './github/on-check-run-rerequested.js';
import { onIssueComment } from './github/on-issue-comment.js';
import { onIssueLabeled } from './github/on-issue-labeled.js';
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
    app.on('check_run.rerequested', async (context) => {
      await onCheckRunRerequested(context.octokit, context.id, context.payload, deps);
    });
  };
}
