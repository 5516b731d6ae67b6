// Stage 6 for the App's worker: the run's one progress comment edited at every stage, then the result
// (comment, check run, labels, the regression-test PR with `pr: auto`), or how the run ended without one.
import type { Logger } from '../../log.js';
import type { Published, ResultPublisher, RunEnd, RunReport } from '../../pipeline/ports.js';
import type { ExitStatus, ReproOutcome, StageName } from '../../pipeline/types.js';
import { buildProgressComment, buildResultComment, type StageProgress } from '../../publish/build-result-comment.js';
import { issueKey, type ReproJob } from '../../queue/repro-job.js';
import type { RunRegistry } from '../../queue/run-registry.js';
import { cancelledComment, finalFailureComment, progressMarker } from '../messages.js';
import { httpStatus, type Octokit } from '../octokit.js';
import type { IssuePublisher } from './issue-publisher.js';
import { prCandidate, withCandidate } from './candidate-commit.js';
import { openReproPr, type OpenedReproPr, type OpenReproPrInput } from './open-repro-pr.js';
import { reproTestOracle } from './build-repro-test.js';
import { reproCheckExternalId } from './repro-check-id.js';

const STAGES: readonly StageName[] = ['intake', 'context', 'report', 'plan', 'agent', 'confirm', 'publish'];

const CONCLUSION: Record<ExitStatus, 'success' | 'neutral' | 'failure' | 'action_required'> = {
  reproduced: 'success',
  not_reproduced: 'neutral',
  needs_info: 'action_required',
  exit_budget: 'neutral',
  exit_infra: 'failure',
  exit_env: 'failure',
};

export interface GitHubResultPublisherOptions {
  pub: IssuePublisher;
  octokit: Octokit;
  data: ReproJob;
  jobId: string;
  /** The installation token: redacted from everything posted. */
  token: string;
  /** The App's bot account (octokit.ts `InstallationAuth`): the author a candidate commit of RepGen's must have. */
  appLogin?: string;
  /** The final word is claimed here (posted once, whichever of the processor and the failure listener gets there). */
  registry: RunRegistry;
  log: Logger;
}

/**
 * The GitHub side of a run. Every end claims the final word before posting it, so a retry, a second run of the
 * same job or the queue's failure listener can never post a second one (nor edit progress over it); the issue's
 * lock is released as soon as the final word is out. The check run and labels are keyed by the job: a second
 * completion edits the check run and adds no label twice.
 * After the final word nothing may fail the publish (a retry would rerun the whole pipeline): the check run,
 * labels and PR are attempted once each, and a failure is logged and said in the comment.
 */
export class GitHubResultPublisher implements ResultPublisher {
  private readonly stages: StageProgress[] = STAGES.map((stage) => ({ stage, state: 'pending' }));
  private readonly marker: string;
  private finalSeen = false;

  constructor(private readonly o: GitHubResultPublisherOptions) {
    this.marker = progressMarker(o.jobId);
  }

  get isGone(): boolean {
    return this.o.pub.isGone;
  }

  async progress(stage: StageName, message: string): Promise<void> {
    // A second run of a job whose final word is out must not turn the result back into a progress list.
    if (await this.ended()) return;
    for (const s of this.stages) if (s.state === 'running') s.state = 'done';
    const current = this.stages.find((s) => s.stage === stage);
    if (current) Object.assign(current, { state: 'running', note: message });
    const body = `${this.marker}\n${buildProgressComment(this.stages, { secrets: [this.o.token] })}`;
    await this.o.pub.progress(body).catch(() => undefined);
  }

  async publish(report: RunReport): Promise<Published> {
    const { data, jobId, registry, pub, log } = this.o;
    const outcome = report.evidence.outcome;
    const sha = report.checkout?.sha ?? '';
    const key = issueKey(data);
    const body = `${this.marker}\n${buildResultComment(outcome, { secrets: [this.o.token], evidenceRef: 'the worker log' })}`;
    const markers = failureMarkers(outcome);
    const oracle = reproTestOracle(outcome);
    const reproduced = outcome.status === 'reproduced' && outcome.script !== null;
    // Remembered whatever the config says now: `/repgen pr` reads the config of its own time.
    const candidate = prCandidate(outcome, true);
    // Remembered before the comment says "reproduced", so a `/repgen pr` typed right after finds it.
    if (reproduced && outcome.script) {
      await registry.setLastReproduced(key, {
        script: outcome.script,
        sha,
        summary: outcome.summary,
        commentUrl: data.commentUrl,
        ref: data.ref,
        markers,
        ...(oracle ? { oracle } : {}),
        ...(candidate ? { candidate } : {}),
        at: Date.now(),
      });
    }
    // Claimed before posting: of two runs of one job (its lock lost while Redis was away), only one publishes.
    if (!(await registry.claimFinalWord(jobId))) {
      log.warn({ jobId }, 'final word already posted by another run of this job; nothing published');
      return { locations: [], alreadyEnded: true };
    }
    let posted: boolean;
    try {
      posted = await pub.final(body);
    } catch (err) {
      // Not posted: give the claim back so the retry this failure causes can post it.
      await registry.releaseFinalWord(jobId).catch(() => undefined);
      throw err;
    }
    if (!posted) return { locations: [], gone: true };
    // The issue is free as soon as its final word is out; the check run and labels below need no lock.
    await registry.releaseIssue(key, jobId);
    const extras: string[] = [];
    const attempt = async (what: string, fn: () => Promise<void>): Promise<void> => {
      try {
        await fn();
      } catch (err) {
        log.warn({ jobId, what, err: (err as Error).message }, 'publishing step failed');
        extras.push(`RepGen could not ${what} (${httpStatus(err) ?? 'error'}).`);
      }
    };
    await attempt('create the check run', () =>
      pub.checkRun({
        headSha: sha,
        conclusion: CONCLUSION[outcome.status],
        title: outcome.status === 'reproduced' ? 'Bug reproduced' : `RepGen: ${outcome.status.replace('_', ' ')}`,
        summary: body.replace(this.marker, '').trim(),
        detailsUrl: data.commentUrl,
        externalId: reproCheckExternalId(key, jobId),
      }),
    );
    if (outcome.status === 'reproduced') await attempt('add the repro:confirmed label', () => pub.addLabels(['repro:confirmed']));
    if (outcome.status === 'needs_info') await attempt('add the needs-info label', () => pub.addLabels(['needs-info']));
    const locations = [data.commentUrl];
    if (reproduced && outcome.script && data.config.pr === 'auto') {
      const script = outcome.script;
      await attempt('open the regression-test PR', async () => {
        const pr = await this.openPr({
          baseSha: sha,
          baseBranch: data.ref,
          script,
          markers,
          ...(oracle ? { oracle } : {}),
          summary: outcome.summary,
          evidenceUrl: data.commentUrl,
          ...(outcome.env?.lock ? { lock: outcome.env.lock } : {}),
          ...(candidate && this.candidateCommitOn() ? { candidate } : {}),
        });
        locations.push(pr.url);
        extras.push(`Regression test proposed in ${pr.url}${withCandidate(pr)}.`);
      });
    }
    if (extras.length) await pub.final(`${body}\n\n${extras.join('\n')}`).catch(() => undefined);
    log.info({ jobId, status: outcome.status }, 'run finished');
    return { locations };
  }

  async end(end: RunEnd): Promise<void> {
    const { data } = this.o;
    switch (end.kind) {
      case 'cancelled':
        return this.finalWord(cancelledComment(this.marker, end.by), 'cancelled');
      case 'time_budget':
        return this.finalWord(
          `${this.marker}\n⏱️ **RepGen** stopped: the run passed its time budget of ${end.minutes} min` +
            `${data.config.caps.minutes ? ' (`caps.minutes`)' : ''}. Nothing was reproduced in that time.`,
          'exit_budget',
        );
      case 'bad_ref': {
        const ref = end.ref.replace(/`/g, '');
        return this.finalWord(
          `${this.marker}\n❌ **RepGen** did not run: the ref \`${ref}\` does not exist in this repository. ` +
            'Use `/repgen --ref BRANCH_OR_SHA` with an existing one.',
          'bad_ref',
        );
      }
      case 'failed':
        if (end.retrying) {
          if (await this.ended()) return;
          await this.o.pub
            .progress(
              `${this.marker}\n⚠️ **RepGen** attempt ${end.attempt} of ${end.attempts} failed (${end.reason.slice(0, 300)}); ` +
                'it will be retried automatically.',
            )
            .catch(() => undefined);
          return;
        }
        if (await this.o.registry.claimFinalWord(this.o.jobId))
          await this.o.pub
            .final(finalFailureComment(this.marker, end.reason, end.runs ?? end.attempt, end.crashed ?? 0))
            .catch(() => undefined);
        await this.o.registry.releaseIssue(issueKey(data), this.o.jobId);
        return;
    }
  }

  /** `/repgen pr`: the regression-test PR of the issue's last reproduced run; the URL, or null when there is none. */
  async openLastReproducedPr(): Promise<string | null> {
    const { data, registry, jobId } = this.o;
    const last = await registry.lastReproduced(issueKey(data));
    if (!last) {
      await this.finalWord(
        `${this.marker}\nThere is no reproduced run on this issue any more, so RepGen opened no PR. Run \`/repgen\` first.`,
        'no_reproduction',
      );
      return null;
    }
    await this.o.pub.progress(`${this.marker}\n⏳ **RepGen** is opening a PR with the regression test…`).catch(() => undefined);
    const pr = await this.openPr({
      baseSha: last.sha,
      baseBranch: last.ref,
      script: last.script,
      markers: last.markers,
      ...(last.oracle ? { oracle: last.oracle } : {}),
      summary: last.summary,
      evidenceUrl: last.commentUrl,
      ...(last.candidate && this.candidateCommitOn() ? { candidate: last.candidate } : {}),
    });
    await this.finalWord(
      `${this.marker}\n✅ **RepGen** opened ${pr.url}: it adds the reproduction as a regression test marked \`xfail(strict=True)\`` +
        `${withCandidate(pr)}.`,
      'pr_opened',
    );
    this.o.log.info({ jobId }, 'regression-test PR opened');
    return pr.url;
  }

  /** Whether the PR may carry a candidate commit: candidate fixes and `prCandidateCommit` on in the repository's config. */
  private candidateCommitOn(): boolean {
    return this.o.data.config.suggestFix && this.o.data.config.prCandidateCommit;
  }

  private openPr(p: Omit<OpenReproPrInput, 'owner' | 'repo' | 'issueNumber' | 'issueUrl'>): Promise<OpenedReproPr> {
    const { data } = this.o;
    return openReproPr(this.o.octokit, {
      owner: data.owner,
      repo: data.repo,
      issueNumber: data.issueNumber,
      issueUrl: data.issueUrl,
      ...(this.o.appLogin ? { appLogin: this.o.appLogin } : {}),
      ...p,
    });
  }

  /** Whether this job's final word is out (checked in Redis until it is, then remembered). */
  private async ended(): Promise<boolean> {
    this.finalSeen ||= await this.o.registry.hasFinalWord(this.o.jobId).catch(() => false);
    return this.finalSeen;
  }

  /** Posts `body` as the final word if nobody has yet, and frees the issue. */
  private async finalWord(body: string, status: string): Promise<void> {
    const { registry, jobId, data, pub, log } = this.o;
    if (await registry.claimFinalWord(jobId)) await pub.final(body);
    await registry.releaseIssue(issueKey(data), jobId);
    log.info({ jobId, status }, 'run ended');
  }
}

/** First lines of the exceptions the run showed: what the regression test asserts on. */
function failureMarkers(outcome: ReproOutcome): string[] {
  return outcome.observed
    .flatMap((s) => (s.exception ? [`${s.exception.type}: ${s.exception.message}`.split('\n')[0] ?? ''] : []))
    .filter(Boolean);
}
