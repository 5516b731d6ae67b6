import { z } from 'zod';
import { isBot, repoRole, roleMayTrigger } from './check-permission.js';
import { linkedIssues } from './linked-issues.js';
import { loadRepoConfig } from './load-repo-config.js';
import type { Octokit } from './octokit.js';
import { FIX_CHECK_NAME } from '../publish/build-fix-check-report.js';
import type { HandlerDeps } from './start-run.js';
import { issuesWithRepro, startVerify, type VerifyStart, type VerifyTarget } from './start-verify.js';
import { TriggerEvent } from './webhook-payloads.js';

const User = z.object({ login: z.string().min(1), type: z.string().nullish() });

/** The subset of a `pull_request` webhook a fix check reads (outside data: permissive). */
export const PullRequestEvent = z.object({
  action: z.string(),
  installation: z.object({ id: z.number().int().positive() }),
  repository: TriggerEvent.shape.repository.extend({ html_url: z.string().url() }),
  pull_request: z.object({
    number: z.number().int().positive(),
    html_url: z.string().url(),
    body: z.string().nullable(),
    head: z.object({ sha: z.string().regex(/^[0-9a-f]{40}$/), ref: z.string().min(1) }),
  }),
  sender: User,
});
export type PullRequestEvent = z.infer<typeof PullRequestEvent>;

/** New code on the PR: opened, a push, reopened. (An edited description is covered by `/repgen verify`.) */
const ACTIONS = new Set(['opened', 'synchronize', 'reopened']);

export type PullRequestResult =
  'ignored' | 'malformed' | 'no_link' | 'no_repro' | 'bad_config' | 'not_permitted' | 'duplicate' | { started: VerifyStart[] };

export function verifyTargetOf(event: Pick<PullRequestEvent, 'installation' | 'repository' | 'pull_request'>): VerifyTarget {
  const pr = event.pull_request;
  return {
    installationId: event.installation.id,
    owner: event.repository.owner.login,
    repo: event.repository.name,
    cloneUrl: event.repository.clone_url,
    repoUrl: event.repository.html_url,
    pr: { number: pr.number, headSha: pr.head.sha, headRef: pr.head.ref, url: pr.html_url },
  };
}

/**
 * `pull_request` opened / synchronize / reopened: when the description links an issue of this repository
 * ("Fixes #12") that RepGen has reproduced, that reproduction runs at the PR's head. Most PRs link nothing
 * or an issue without a reproduction: those cost no GitHub call at all. The permission rule is /repgen's:
 * the PR's sender must hold a trigger role; for anyone else a neutral check run says a maintainer can
 * comment `/repgen verify` (a contributor who did not ask for RepGen gets no comment).
 */
export async function onPullRequest(octokit: Octokit, deliveryId: string, payload: unknown, deps: HandlerDeps): Promise<PullRequestResult> {
  const parsed = PullRequestEvent.safeParse(payload);
  if (!parsed.success) {
    deps.log.warn({ deliveryId, problem: parsed.error.issues[0]?.path.join('.') }, 'malformed pull_request payload ignored');
    return 'malformed';
  }
  const event = parsed.data;
  if (!ACTIONS.has(event.action) || isBot(event.sender)) return 'ignored';
  const target = verifyTargetOf(event);
  const { owner, repo } = target;
  const linked = linkedIssues(event.pull_request.body, { owner, repo });
  if (!linked.length) return 'no_link';
  const withRepro = await issuesWithRepro(linked, target, deps);
  if (!withRepro.length) return 'no_repro';
  const [loaded, role] = await Promise.all([loadRepoConfig(octokit, owner, repo), repoRole(octokit, owner, repo, event.sender.login)]);
  if (!loaded.ok) {
    // Nobody asked on this PR: the broken file is reported where someone does ask (/repgen, the label).
    deps.log.info({ deliveryId, repo: event.repository.full_name }, 'fix check skipped: bad .github/repgen.yml');
    return 'bad_config';
  }
  if (!(await deps.registry.claimDelivery(deliveryId))) return 'duplicate';
  if (!roleMayTrigger(role, loaded.config.trigger)) {
    deps.log.info({ login: event.sender.login, repo: event.repository.full_name }, 'fix check not started: no permission');
    await Promise.all(
      withRepro.map((n) =>
        octokit.rest.checks.create({
          owner,
          repo,
          name: FIX_CHECK_NAME(n),
          head_sha: target.pr.headSha,
          status: 'completed',
          conclusion: 'neutral',
          completed_at: new Date().toISOString(),
          output: {
            title: `Not run: a maintainer can start the fix check for #${n}`,
            summary:
              `RepGen has a confirmed reproduction of issue #${n}, which this pull request says it fixes. It runs ` +
              `it at a PR's head by itself only for PRs from people with the ` +
              `${loaded.config.trigger.map((r) => `\`${r}\``).join(', ')} role; a maintainer can start it by ` +
              `commenting \`/repgen verify\` on this pull request.`,
          },
        }),
      ),
    );
    return 'not_permitted';
  }
  const started: VerifyStart[] = [];
  for (const n of withRepro)
    started.push(
      await startVerify(
        octokit,
        deliveryId,
        target,
        { issueNumber: n, trigger: 'pull_request', requestedBy: event.sender.login, config: loaded.config },
        deps,
      ),
    );
  return { started };
}
