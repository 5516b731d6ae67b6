import type { RepoConfig } from '../config/repo-config.js';
import { issueKey } from '../queue/repro-job.js';
import { roleMayTrigger } from './check-permission.js';
import { refusalComment } from './messages.js';
import type { Octokit } from './octokit.js';
import type { HandlerDeps } from './start-run.js';
import type { TriggerEvent } from './webhook-payloads.js';

/**
 * The permission gate shared by both triggers: allowed → true. Refused → false, with one polite comment
 * per person and issue (a Redis NX key), so repeating the command does not make the bot repeat itself.
 */
export async function mayTrigger(
  octokit: Octokit,
  event: TriggerEvent,
  role: string | null,
  config: RepoConfig,
  deps: HandlerDeps,
): Promise<boolean> {
  const owner = event.repository.owner.login;
  const repo = event.repository.name;
  const login = event.sender.login;
  if (roleMayTrigger(role, config.trigger)) return true;
  const key = `${deps.registry.prefix}:refused:${issueKey({ owner, repo, issueNumber: event.issue.number })}:${login.toLowerCase()}`;
  const first = (await deps.redis.set(key, '1', 'EX', 30 * 86_400, 'NX')) === 'OK';
  deps.log.info({ login, repo: event.repository.full_name, first }, 'trigger refused: no permission');
  if (first)
    await octokit.rest.issues.createComment({ owner, repo, issue_number: event.issue.number, body: refusalComment(login, config.trigger) });
  return false;
}
