import { isBot, repoRole } from './check-permission.js';
import { mayTrigger } from './gate-trigger.js';
import { onFixCheckRerequested, type FixCheckRerunResult } from './on-fix-check-rerequested.js';
import { loadRepoConfig } from './load-repo-config.js';
import { badConfigComment } from './messages.js';
import { CHECK_RUN_NAME } from './publish/issue-publisher.js';
import { parseReproCheckExternalId } from './publish/repro-check-id.js';
import type { Octokit } from './octokit.js';
import { startRun, type HandlerDeps, type StartResult } from './start-run.js';
import { CheckRunRerequestedEvent, type TriggerEvent } from './webhook-payloads.js';

export type CheckRunResult = StartResult | FixCheckRerunResult | 'ignored' | 'malformed' | 'refused' | 'bad_config';

/**
 * "Re-run" on RepGen's check run runs the reproduction again. The check run's `external_id` is the issue
 * key and job RepGen wrote (`owner/repo#N@jobId`, or `owner/repo#N` before); check runs of other apps, or without
 * that id, are not ours.
 */
export async function onCheckRunRerequested(
  octokit: Octokit,
  deliveryId: string,
  payload: unknown,
  deps: HandlerDeps,
): Promise<CheckRunResult> {
  const parsed = CheckRunRerequestedEvent.safeParse(payload);
  if (!parsed.success) {
    deps.log.warn({ deliveryId, problem: parsed.error.issues[0]?.path.join('.') }, 'malformed check_run payload ignored');
    return 'malformed';
  }
  const event = parsed.data;
  if (event.check_run.external_id?.startsWith('verify:')) return onFixCheckRerequested(octokit, deliveryId, event, deps);
  const match = parseReproCheckExternalId(event.check_run.external_id ?? '');
  if (event.check_run.name !== CHECK_RUN_NAME || !match || isBot(event.sender)) return 'ignored';
  if (match.fullName !== event.repository.full_name.toLowerCase()) return 'ignored';
  const issueNumber = match.issueNumber;
  const trigger: TriggerEvent = {
    installation: event.installation,
    repository: event.repository,
    issue: { number: issueNumber, html_url: `${event.repository.html_url}/issues/${issueNumber}` },
    sender: event.sender,
  };
  const owner = event.repository.owner.login;
  const repo = event.repository.name;
  const [loaded, role] = await Promise.all([loadRepoConfig(octokit, owner, repo), repoRole(octokit, owner, repo, event.sender.login)]);
  if (!loaded.ok) {
    await octokit.rest.issues.createComment({ owner, repo, issue_number: issueNumber, body: badConfigComment(loaded.problems) });
    return 'bad_config';
  }
  if (!(await mayTrigger(octokit, trigger, role, loaded.config, deps))) return 'refused';
  return startRun(
    octokit,
    deliveryId,
    trigger,
    { kind: 'repro', trigger: 'check_run', gpu: false, ref: null, llm: null, config: loaded.config, commentId: null },
    deps,
  );
}
