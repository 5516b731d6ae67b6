// A run whose queue entry vanished (Redis restarted without persistence, its data flushed) leaves its issue saying
// "⏳ queued" or "reproducing" forever: no worker will ever pick it up, and nothing else will edit that comment. The
// worker looks for such comments at start and every REPGEN_LOST_RUN_SWEEP_S seconds and says what happened.
import type { Logger } from '../log.js';
import { issueKey } from '../queue/repro-job.js';
import type { RunRegistry } from '../queue/run-registry.js';
import { lostRunComment, progressMarker } from './messages.js';
import type { Octokit } from './octokit.js';

/** The job id of a RepGen comment that still says the run is queued or under way; null for any other comment. Pure. */
export function unfinishedJobOf(body: string): string | null {
  const m = /^<!-- repgen:progress job=([A-Za-z0-9_-]+) -->\n/.exec(body);
  if (!m?.[1]) return null;
  const rest = body.slice(m[0].length);
  const unfinished =
    rest.startsWith('⏳ **RepGen** is queued') ||
    rest.startsWith('### RepGen is reproducing this issue') ||
    /will be retried automatically\.$/.test(rest);
  return unfinished ? m[1] : null;
}

export interface SweepLostRunsDeps {
  /** The App's own client (lists installations). */
  appOctokit: () => Promise<Octokit>;
  /** An installation's client (lists its repositories and their comments, edits one). */
  installationOctokit: (installationId: number) => Promise<Octokit>;
  /** Whether the job is still in the queue (waiting, delayed, active) or running in this process. */
  isLive: (jobId: string) => Promise<boolean>;
  registry: RunRegistry;
  log: Logger;
  /** A comment edited more recently than this is left alone: the App posts "queued" just before it enqueues. @defaultValue 120000 */
  graceMs?: number;
  /** Only comments edited in this window are read. @defaultValue 7 days (how long a final word is remembered) */
  lookbackMs?: number;
  /** @defaultValue Date.now */
  now?: () => number;
}

export interface SweepResult {
  /** RepGen comments read that still said queued or running. */
  unfinished: number;
  /** Jobs found lost and said so, `owner/repo#N@jobId`. */
  lost: string[];
}

/**
 * Every installation's repositories, their RepGen comments edited within the lookback that still say queued or
 * running, and of those the ones whose job is nowhere: each gets its final word (claimed, so a job that turns up
 * after all cannot post a second one) saying the run was lost and how to start it again.
 */
export async function sweepLostRuns(deps: SweepLostRunsDeps): Promise<SweepResult> {
  const now = deps.now ?? Date.now;
  const graceMs = deps.graceMs ?? 120_000;
  const since = new Date(now() - (deps.lookbackMs ?? 7 * 86_400_000)).toISOString();
  const result: SweepResult = { unfinished: 0, lost: [] };
  const app = await deps.appOctokit();
  const installations = await app.paginate(app.rest.apps.listInstallations, { per_page: 100 });
  for (const installation of installations) {
    const octokit = await deps.installationOctokit(installation.id);
    const repos = await octokit.paginate(octokit.rest.apps.listReposAccessibleToInstallation, { per_page: 100 });
    for (const r of repos) {
      const owner = r.owner.login;
      const comments = await octokit.paginate(octokit.rest.issues.listCommentsForRepo, { owner, repo: r.name, since, per_page: 100 });
      for (const c of comments) {
        const jobId = c.user?.type === 'Bot' ? unfinishedJobOf(c.body ?? '') : null;
        if (!jobId) continue;
        result.unfinished += 1;
        if (now() - Date.parse(c.updated_at) < graceMs || (await deps.isLive(jobId))) continue;
        if (!(await deps.registry.claimFinalWord(jobId))) continue;
        const issueNumber = Number(/\/issues\/(\d+)/.exec(c.html_url)?.[1]);
        await octokit.rest.issues.updateComment({ owner, repo: r.name, comment_id: c.id, body: lostRunComment(progressMarker(jobId)) });
        const key = issueKey({ owner, repo: r.name, issueNumber });
        await deps.registry.releaseIssue(key, jobId);
        result.lost.push(`${key}@${jobId}`);
        deps.log.warn({ jobId, issue: key }, 'run lost from the queue; its comment now says so');
      }
    }
  }
  return result;
}
