import type { TriggerRole } from '../config/repo-config.js';
import type { Octokit } from './octokit.js';

/** Bots never trigger runs: the App's own comments, dependabot and friends would loop or spam. */
export function isBot(user: { login: string; type?: string | null }): boolean {
  return user.type === 'Bot' || user.login.endsWith('[bot]');
}

/**
 * The role `login` holds on the repository on the repository. `role_name` distinguishes maintain and
 * triage, which the legacy `permission` field folds into write and read. A user GitHub does not know
 * (404) has no role.
 */
export async function repoRole(octokit: Octokit, owner: string, repo: string, login: string): Promise<string | null> {
  try {
    const { data } = await octokit.rest.repos.getCollaboratorPermissionLevel({ owner, repo, username: login });
    return (data as { role_name?: string }).role_name ?? data.permission;
  } catch (err) {
    if ((err as { status?: number }).status === 404) return null;
    throw err;
  }
}

export function roleMayTrigger(role: string | null, allowed: readonly TriggerRole[]): boolean {
  return role !== null && (allowed as readonly string[]).includes(role);
}
