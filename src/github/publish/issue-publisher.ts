import { GITHUB_COMMENT_LIMIT } from '../../publish/build-result-comment.js';
import { redactSecrets } from '../../publish/neutralize.js';
import type { Logger } from '../../log.js';
import { IssueGoneError } from '../errors.js';
import { httpStatus, type Octokit } from '../octokit.js';

/** The check run's name; the Re-run handler recognises RepGen's own check runs by it. */
export const CHECK_RUN_NAME = 'RepGen reproduction';

export interface IssuePublisherOptions {
  owner: string;
  repo: string;
  issueNumber: number;
  commentId: number;
  /** Literal secrets (the installation token) redacted from everything posted. */
  secrets: readonly string[];
  log: Logger;
  /** Least time between two progress edits; later stages coalesce. @defaultValue 1000 */
  minEditIntervalMs?: number;
  /** Called once when GitHub says the issue or comment is gone (the run should stop). */
  onGone?: () => void;
}

/**
 * Edits the run's one progress comment. Progress edits are serialised and coalesced (only the newest body
 * is sent), so a burst of stage events is one or two API calls and they can never land out of order;
 * `final()` waits for them and always wins. A 404 means the issue or comment was deleted: `IssueGoneError`.
 */
export class IssuePublisher {
  private pending: string | null = null;
  private loop: Promise<void> | null = null;
  private gone = false;

  constructor(
    private readonly octokit: Octokit,
    private readonly options: IssuePublisherOptions,
  ) {}

  get isGone(): boolean {
    return this.gone;
  }

  /** Queues a progress edit; rejects only with IssueGoneError (other failures are logged and skipped). */
  async progress(body: string): Promise<void> {
    if (this.gone) throw new IssueGoneError('the issue or its RepGen comment was deleted');
    this.pending = body;
    if (!this.loop) this.loop = this.drain().finally(() => (this.loop = null));
    if (this.gone) throw new IssueGoneError('the issue or its RepGen comment was deleted');
  }

  /** Posts the final body after every queued progress edit; returns false when the issue is gone. */
  async final(body: string): Promise<boolean> {
    this.pending = null;
    await this.loop?.catch(() => undefined);
    if (this.gone) return false;
    try {
      await this.edit(body);
      return true;
    } catch (err) {
      if (err instanceof IssueGoneError) return false;
      throw err;
    }
  }

  /** Adds the labels the issue does not have yet: a second completion of the same job adds nothing. */
  async addLabels(labels: string[]): Promise<void> {
    if (!labels.length || this.gone) return;
    const { owner, repo, issueNumber } = this.options;
    const has = await this.octokit.paginate(this.octokit.rest.issues.listLabelsOnIssue, {
      owner,
      repo,
      issue_number: issueNumber,
      per_page: 100,
    });
    const missing = labels.filter((l) => !has.some((h) => h.name.toLowerCase() === l.toLowerCase()));
    if (missing.length) await this.octokit.rest.issues.addLabels({ owner, repo, issue_number: issueNumber, labels: missing });
  }

  /**
   * The check run "RepGen reproduction" on the commit that was tested, one per `externalId`: when a check run with
   * that id is already on the commit (the same job completed before), it is edited, never added again.
   */
  async checkRun(run: {
    headSha: string;
    conclusion: 'success' | 'neutral' | 'failure' | 'action_required' | 'cancelled';
    title: string;
    summary: string;
    detailsUrl: string;
    externalId: string;
  }): Promise<void> {
    const { owner, repo, secrets } = this.options;
    const fields = {
      owner,
      repo,
      name: CHECK_RUN_NAME,
      status: 'completed' as const,
      conclusion: run.conclusion,
      details_url: run.detailsUrl,
      external_id: run.externalId,
      completed_at: new Date().toISOString(),
      output: { title: run.title.slice(0, 250), summary: redactSecrets(run.summary, secrets).slice(0, 65_000) },
    };
    const existing = await this.octokit.paginate(this.octokit.rest.checks.listForRef, {
      owner,
      repo,
      ref: run.headSha,
      check_name: CHECK_RUN_NAME,
      filter: 'all',
      per_page: 100,
    });
    const same = existing.find((c) => c.external_id === run.externalId);
    if (same) await this.octokit.rest.checks.update({ ...fields, check_run_id: same.id });
    else await this.octokit.rest.checks.create({ ...fields, head_sha: run.headSha });
  }

  private async drain(): Promise<void> {
    const interval = this.options.minEditIntervalMs ?? 1000;
    while (this.pending !== null && !this.gone) {
      const body = this.pending;
      this.pending = null;
      try {
        await this.edit(body);
      } catch (err) {
        if (err instanceof IssueGoneError) return;
        this.options.log.warn({ err: (err as Error).message }, 'progress edit failed');
      }
      if (this.pending !== null) await new Promise((r) => setTimeout(r, interval));
    }
  }

  private async edit(body: string): Promise<void> {
    const { owner, repo, commentId, secrets } = this.options;
    const safe = redactSecrets(body, secrets);
    try {
      await this.octokit.rest.issues.updateComment({
        owner,
        repo,
        comment_id: commentId,
        body: safe.length > GITHUB_COMMENT_LIMIT ? `${safe.slice(0, GITHUB_COMMENT_LIMIT - 40)}\n\n_(truncated)_` : safe,
      });
    } catch (err) {
      const status = httpStatus(err);
      // 404: deleted issue or comment; 410: issue deleted/transferred. Either way there is no one to tell.
      if (status === 404 || status === 410) {
        if (!this.gone) this.options.onGone?.();
        this.gone = true;
        throw new IssueGoneError('the issue or its RepGen comment was deleted');
      }
      throw err;
    }
  }
}
