import { RepoConfig } from '../config/repo-config.js';
import { isBot, repoRole, roleMayTrigger } from '../github/check-permission.js';
import { loadRepoConfig } from '../github/load-repo-config.js';
import { badConfigComment, helpComment, refusalComment } from '../github/messages.js';
import type { Octokit } from '../github/octokit.js';
import { parseRepgenCommand } from '../github/parse-repgen-command.js';
import type { Logger } from '../log.js';
import type { CommentPayload, LabeledPayload } from './read-event.js';

/** A permitted request for a run, as the App's handlers would have queued it. */
export interface RunAsk {
  trigger: 'label' | 'comment';
  ref: string | null;
  gpu: boolean;
  llm: string | null;
  config: RepoConfig;
  /** Whether `.github/repgen.yml` exists (its caps then lower the workflow's). */
  configFromFile: boolean;
  /** The comment that asked, when one did (the 👀 goes on it). */
  commentId: number | null;
  requestedBy: string;
}

export type GateStatus = 'ignored' | 'refused' | 'bad_config' | 'help' | 'not_in_action';
export type Gate = { go: true; ask: RunAsk } | { go: false; status: GateStatus; why: string };

export interface GateDeps {
  octokit: Octokit;
  owner: string;
  repo: string;
  /** The `trigger-label` input; the config's label (or `needs-repro`) when unset. */
  label: string | undefined;
  /** Where the workflow's runs are listed (the answer to `/repgen status` and `cancel`). */
  runsUrl: string;
  log: Logger;
}

/** Marks RepGen's refusal for one person, so it is said once per person and issue (the App keeps this in Redis). */
export function refusalMarker(login: string): string {
  return `<!-- repgen:refused user=${login.toLowerCase()} -->`;
}

/**
 * The App's rules for both triggers, run on a workflow's event: bots and pull requests are ignored, the
 * label must be the trigger label, a comment must hold a `/repgen` command, `.github/repgen.yml` must be
 * valid, and the sender must hold one of the config's roles (write, maintain or admin by default).
 */
export async function gateLabeled(payload: LabeledPayload, deps: GateDeps): Promise<Gate> {
  if (isBot(payload.sender)) return { go: false, status: 'ignored', why: 'labels added by bots never start RepGen' };
  if (payload.issue.pull_request !== undefined) return { go: false, status: 'ignored', why: 'RepGen runs on issues, not pull requests' };
  const { owner, repo, octokit } = deps;
  const [loaded, role] = await Promise.all([loadRepoConfig(octokit, owner, repo), repoRole(octokit, owner, repo, payload.sender.login)]);
  const label = deps.label ?? (loaded.ok ? loaded.config.label : (loaded.rawLabel ?? 'needs-repro'));
  if (payload.label.name !== label)
    return { go: false, status: 'ignored', why: `the label '${payload.label.name}' is not the trigger label '${label}'` };
  const config = loaded.ok ? loaded.config : RepoConfig.parse({});
  if (!(await mayTrigger(role, config, payload.issue.number, payload.sender.login, deps)))
    return { go: false, status: 'refused', why: `${payload.sender.login} may not start RepGen` };
  if (!loaded.ok) return badConfig(loaded.problems, payload.issue.number, deps);
  return {
    go: true,
    ask: {
      trigger: 'label',
      ref: null,
      gpu: config.gpu,
      llm: null,
      config,
      configFromFile: loaded.source === 'file',
      commentId: null,
      requestedBy: payload.sender.login,
    },
  };
}

export async function gateComment(payload: CommentPayload, deps: GateDeps): Promise<Gate> {
  const command = parseRepgenCommand(payload.comment.body ?? '');
  // Bots first: RepGen's own comments must never trigger RepGen.
  if (command === null) return { go: false, status: 'ignored', why: 'the comment holds no /repgen command' };
  if (isBot(payload.sender) || isBot(payload.comment.user))
    return { go: false, status: 'ignored', why: 'comments by bots never start RepGen' };
  const { owner, repo, octokit } = deps;
  const issue = payload.issue.number;
  const reply = async (body: string): Promise<void> => {
    await octokit.rest.issues.createComment({ owner, repo, issue_number: issue, body });
  };
  const [loaded, role] = await Promise.all([loadRepoConfig(octokit, owner, repo), repoRole(octokit, owner, repo, payload.sender.login)]);
  const config = loaded.ok ? loaded.config : RepoConfig.parse({});
  if (!(await mayTrigger(role, config, issue, payload.sender.login, deps)))
    return { go: false, status: 'refused', why: `${payload.sender.login} may not start RepGen` };
  if (!loaded.ok) return badConfig(loaded.problems, issue, deps);
  if (payload.issue.pull_request !== undefined) {
    await reply('RepGen reproduces bugs reported in issues; it does not run on pull requests.');
    return { go: false, status: 'ignored', why: 'RepGen runs on issues, not pull requests' };
  }
  const ask = (c: { ref: string | null; gpu: boolean; llm: string | null }): Gate => ({
    go: true,
    ask: {
      trigger: 'comment',
      ...c,
      gpu: c.gpu || config.gpu,
      config,
      configFromFile: loaded.source === 'file',
      commentId: payload.comment.id,
      requestedBy: payload.sender.login,
    },
  });
  switch (command.kind) {
    case 'run':
      return ask(command);
    case 'retry':
      return ask({ ref: null, gpu: false, llm: null });
    case 'help':
    case 'unknown':
      await reply(helpComment(command.kind === 'unknown' ? command.reason : undefined));
      return { go: false, status: 'help', why: command.kind === 'unknown' ? command.reason : 'help asked for' };
    case 'cancel':
    case 'status':
    case 'pr':
    case 'verify':
    case 'bisect':
      await reply(notInActionReply(command.kind, deps.runsUrl));
      return { go: false, status: 'not_in_action', why: `\`/repgen ${command.kind}\` is answered by the workflow, not a command` };
  }
}

/** What the App does with a queue and Redis, the workflow does itself; said where the user asked. */
function notInActionReply(kind: 'cancel' | 'status' | 'pr' | 'verify' | 'bisect', runsUrl: string): string {
  switch (kind) {
    case 'bisect':
      return (
        'RepGen runs here as a GitHub Actions workflow, which checks out one commit: it does not bisect. Run ' +
        '`npx repgen reproduce --issue issue.md --repo . --bisect GOOD` in a full clone, or use the RepGen App.'
      );
    case 'cancel':
      return `RepGen runs here as a GitHub Actions workflow: to stop a run, cancel its workflow run (${runsUrl}).`;
    case 'status':
      return (
        `RepGen runs here as a GitHub Actions workflow: its runs and their logs are listed at ${runsUrl}, ` +
        `and each run edits its own comment on this issue as it goes.`
      );
    case 'pr':
      return (
        'RepGen runs here as a GitHub Actions workflow: it opens the regression-test PR itself after a ' +
        'reproduction when the workflow sets `open-pr: true` (and `.github/repgen.yml` ' +
        'does not say `pr: off`).'
      );
    case 'verify':
      return (
        'RepGen runs here as a GitHub Actions workflow, which reproduces issues only: checking a fix against the confirmed ' +
        "reproduction (`/repgen verify`) is done by the RepGen GitHub App. Here, run the regression test RepGen posted on the pull request's branch."
      );
  }
}

async function badConfig(problems: readonly { key: string; message: string }[], issue: number, deps: GateDeps): Promise<Gate> {
  await deps.octokit.rest.issues.createComment({
    owner: deps.owner,
    repo: deps.repo,
    issue_number: issue,
    body: badConfigComment(problems),
  });
  return { go: false, status: 'bad_config', why: `.github/repgen.yml is invalid: ${problems.map((p) => p.key).join(', ')}` };
}

/**
 * The App's permission rule (src/github/check-permission.ts). A refusal is said once per person and issue:
 * the App remembers that in Redis; a workflow has no store, so the refusal carries a hidden marker and the
 * issue's comments are the memory.
 */
async function mayTrigger(role: string | null, config: RepoConfig, issue: number, login: string, deps: GateDeps): Promise<boolean> {
  if (roleMayTrigger(role, config.trigger)) return true;
  const { octokit, owner, repo } = deps;
  const marker = refusalMarker(login);
  const comments = await octokit.paginate(octokit.rest.issues.listComments, { owner, repo, issue_number: issue, per_page: 100 });
  const said = comments.some(
    (c) => c.user !== null && isBot({ login: c.user.login, type: c.user.type }) && (c.body ?? '').includes(marker),
  );
  deps.log.info({ login, role, first: !said }, 'trigger refused: no permission');
  if (!said)
    await octokit.rest.issues.createComment({
      owner,
      repo,
      issue_number: issue,
      body: `${marker}\n${refusalComment(login, config.trigger)}`,
    });
  return false;
}
