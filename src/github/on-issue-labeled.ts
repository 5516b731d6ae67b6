import { RepoConfig } from '../config/repo-config.js';
import { isBot, repoRole } from './check-permission.js';
import { mayTrigger } from './gate-trigger.js';
import { loadRepoConfig } from './load-repo-config.js';
import { badConfigComment } from './messages.js';
import type { Octokit } from './octokit.js';
import { startRun, type HandlerDeps, type StartResult } from './start-run.js';
import { IssueLabeledEvent } from './webhook-payloads.js';

export type LabeledResult = StartResult | 'ignored' | 'malformed' | 'refused' | 'bad_config';

/** `issues.labeled`: the configured label (default `needs-repro`) starts a run. */
export async function onIssueLabeled(octokit: Octokit, deliveryId: string, payload: unknown, deps: HandlerDeps): Promise<LabeledResult> {
  const parsed = IssueLabeledEvent.safeParse(payload);
  if (!parsed.success) {
    deps.log.warn({ deliveryId, problem: parsed.error.issues[0]?.path.join('.') }, 'malformed issues.labeled payload ignored');
    return 'malformed';
  }
  const event = parsed.data;
  if (isBot(event.sender) || event.issue.pull_request !== undefined) return 'ignored';
  const owner = event.repository.owner.login;
  const repo = event.repository.name;
  // Both reads at once: the handler has one second.
  const [loaded, role] = await Promise.all([loadRepoConfig(octokit, owner, repo), repoRole(octokit, owner, repo, event.sender.login)]);
  if (!loaded.ok) {
    // A broken file still says which label it meant; only that label (or the default) earns a complaint.
    if (event.label.name !== (loaded.rawLabel ?? 'needs-repro')) return 'ignored';
    if (!(await mayTrigger(octokit, event, role, RepoConfig.parse({}), deps))) return 'refused';
    await octokit.rest.issues.createComment({ owner, repo, issue_number: event.issue.number, body: badConfigComment(loaded.problems) });
    return 'bad_config';
  }
  if (event.label.name !== loaded.config.label) return 'ignored';
  if (!(await mayTrigger(octokit, event, role, loaded.config, deps))) return 'refused';
  return startRun(
    octokit,
    deliveryId,
    event,
    { kind: 'repro', trigger: 'label', gpu: false, ref: null, llm: null, config: loaded.config, commentId: null },
    deps,
  );
}
