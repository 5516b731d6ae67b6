import { parseFixCheckExternalId } from '../publish/build-fix-check-report.js';
import { isBot, repoRole } from './check-permission.js';
import { mayTrigger } from './gate-trigger.js';
import { loadRepoConfig } from './load-repo-config.js';
import { httpStatus, type Octokit } from './octokit.js';
import { PullRequestEvent, verifyTargetOf } from './on-pull-request.js';
import type { HandlerDeps } from './start-run.js';
import { issuesWithRepro, startVerify, type VerifyStart } from './start-verify.js';
import type { CheckRunRerequestedEvent, TriggerEvent } from './webhook-payloads.js';

export type FixCheckRerunResult = VerifyStart | 'ignored' | 'refused' | 'bad_config' | 'pr_gone' | 'no_repro' | 'duplicate';

/**
 * "Re-run" on a RepGen fix check: the same issue's reproduction at the PR's current head (a push since then
 * is what a maintainer wants checked). The permission gate is /repgen's; a refusal is said on the PR.
 */
export async function onFixCheckRerequested(
  octokit: Octokit,
  deliveryId: string,
  event: CheckRunRerequestedEvent,
  deps: HandlerDeps,
): Promise<FixCheckRerunResult> {
  const id = parseFixCheckExternalId(event.check_run.external_id);
  if (!id || isBot(event.sender) || `${id.owner}/${id.repo}` !== event.repository.full_name.toLowerCase()) return 'ignored';
  const owner = event.repository.owner.login;
  const repo = event.repository.name;
  const [loaded, role] = await Promise.all([loadRepoConfig(octokit, owner, repo), repoRole(octokit, owner, repo, event.sender.login)]);
  if (!loaded.ok) return 'bad_config';
  const onPr: TriggerEvent = {
    installation: event.installation,
    repository: event.repository,
    issue: { number: id.prNumber, html_url: `${event.repository.html_url}/pull/${id.prNumber}` },
    sender: event.sender,
  };
  if (!(await mayTrigger(octokit, onPr, role, loaded.config, deps))) return 'refused';
  let pr: unknown;
  try {
    pr = (await octokit.rest.pulls.get({ owner, repo, pull_number: id.prNumber })).data;
  } catch (err) {
    if (httpStatus(err) === 404) return 'pr_gone';
    throw err;
  }
  const parsed = PullRequestEvent.safeParse({
    action: 'rerequested',
    installation: event.installation,
    repository: event.repository,
    pull_request: pr,
    sender: event.sender,
  });
  if (!parsed.success) return 'pr_gone';
  const target = verifyTargetOf(parsed.data);
  if (!(await issuesWithRepro([id.issueNumber], target, deps)).length) return 'no_repro';
  if (!(await deps.registry.claimDelivery(deliveryId))) return 'duplicate';
  return startVerify(
    octokit,
    deliveryId,
    target,
    { issueNumber: id.issueNumber, trigger: 'check_run', requestedBy: event.sender.login, config: loaded.config },
    deps,
  );
}
