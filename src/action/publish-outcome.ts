import { readIssue as readGitHubIssue } from '../github/github-issue-source.js';
import { progressMarker } from '../github/messages.js';
import { httpStatus, type Octokit } from '../github/octokit.js';
import type { IssuePublisher } from '../github/publish/issue-publisher.js';
import { prCandidate, withCandidate } from '../github/publish/candidate-commit.js';
import { openReproPr } from '../github/publish/open-repro-pr.js';
import { reproTestOracle } from '../github/publish/build-repro-test.js';
import type { Logger } from '../log.js';
import type { ExitStatus, IssueInput, ReproOutcome } from '../pipeline/types.js';
import { buildResultComment } from '../publish/build-result-comment.js';
import { issueKey } from '../queue/repro-job.js';

/**
 * Stage 6 for the action: the App's final comment, check run, labels and regression-test PR, through the
 * App's own publisher (src/github/publish/) and comment builder (src/publish/).
 * TODO(#14): the GitHub `ResultPublisher` port replaces this file when it lands.
 */

/** The check run's conclusion per exit status; the App's table (src/github/process-repro-job.ts). */
export const CONCLUSION: Record<ExitStatus, 'success' | 'neutral' | 'failure' | 'action_required'> = {
  reproduced: 'success',
  not_reproduced: 'neutral',
  needs_info: 'action_required',
  exit_budget: 'neutral',
  exit_infra: 'failure',
  exit_env: 'failure',
};

export interface PublishTarget {
  octokit: Octokit;
  pub: IssuePublisher;
  owner: string;
  repo: string;
  issueNumber: number;
  issueUrl: string;
  jobId: string;
  commentUrl: string;
  /** The tested commit (check run, PR base) and the branch the PR targets. */
  sha: string;
  baseBranch: string;
  /** Open the regression-test PR after a reproduction (`open-pr: true` and config `pr` not `off`). */
  openPr: boolean;
  /** The PR may carry a fix-sensitive candidate fix as a separate commit (config `suggestFix` and `prCandidateCommit`). */
  candidateCommit: boolean;
  /** Where the evidence is, said in the comment (the workflow run's log and artifact). */
  evidenceRef: string;
  secrets: readonly string[];
  log: Logger;
}

export interface Published {
  commentPosted: boolean;
  prUrl: string | null;
}

export async function publishOutcome(outcome: ReproOutcome, t: PublishTarget): Promise<Published> {
  const body = `${progressMarker(t.jobId)}\n${buildResultComment(outcome, { secrets: t.secrets, evidenceRef: t.evidenceRef })}`;
  if (!(await t.pub.final(body))) return { commentPosted: false, prUrl: null };
  // After the final word nothing may fail the run: each extra is tried once, and a failure is said in the comment.
  const extras: string[] = [];
  const attempt = async (what: string, fn: () => Promise<void>): Promise<void> => {
    try {
      await fn();
    } catch (err) {
      t.log.warn({ what, err: (err as Error).message }, 'publishing step failed');
      extras.push(
        `RepGen could not ${what} (${httpStatus(err) ?? 'error'}${httpStatus(err) === 403 ? ': does the workflow grant that permission?' : ''}).`,
      );
    }
  };
  await attempt('create the check run', () =>
    t.pub.checkRun({
      headSha: t.sha,
      conclusion: CONCLUSION[outcome.status],
      title: outcome.status === 'reproduced' ? 'Bug reproduced' : `RepGen: ${outcome.status.replace('_', ' ')}`,
      summary: body.replace(progressMarker(t.jobId), '').trim(),
      detailsUrl: t.commentUrl,
      externalId: issueKey({ owner: t.owner, repo: t.repo, issueNumber: t.issueNumber }),
    }),
  );
  if (outcome.status === 'reproduced') await attempt('add the repro:confirmed label', () => t.pub.addLabels(['repro:confirmed']));
  if (outcome.status === 'needs_info') await attempt('add the needs-info label', () => t.pub.addLabels(['needs-info']));
  let prUrl: string | null = null;
  const script = outcome.script;
  if (t.openPr && outcome.status === 'reproduced' && script) {
    const markers = outcome.observed
      .flatMap((s) => (s.exception ? [`${s.exception.type}: ${s.exception.message}`.split('\n')[0] ?? ''] : []))
      .filter(Boolean);
    await attempt('open the regression-test PR', async () => {
      const pr = await openReproPr(t.octokit, {
        owner: t.owner,
        repo: t.repo,
        issueNumber: t.issueNumber,
        issueUrl: t.issueUrl,
        baseSha: t.sha,
        baseBranch: t.baseBranch,
        script,
        markers,
        oracle: reproTestOracle(outcome),
        summary: outcome.summary,
        evidenceUrl: t.commentUrl,
        candidate: prCandidate(outcome, t.candidateCommit),
      });
      prUrl = pr.url;
      extras.push(`Regression test proposed in ${pr.url}${withCandidate(pr)}.`);
    });
  }
  if (extras.length) await t.pub.final(`${body}\n\n${extras.join('\n')}`).catch(() => undefined);
  return { commentPosted: true, prUrl };
}

/** The issue and its people's later comments, as the App's worker reads them (src/github/github-issue-source.ts). */
export async function readIssue(octokit: Octokit, owner: string, repo: string, issueNumber: number): Promise<IssueInput> {
  return readGitHubIssue(octokit, { owner, repo, issueNumber });
}
