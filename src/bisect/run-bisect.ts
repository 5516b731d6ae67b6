import type { RunLimitsSettings } from '../agent/run-candidate.js';
import { CancelledError } from '../errors.js';
import type { ScriptExecutor, Workspace } from '../exec/types.js';
import type { ReportReading } from '../symptoms/types.js';
import { verifyFix } from '../workspace/verify-fix.js';
import {
  filesInImportedPackages,
  nextBisectStep,
  pullRequestOf,
  shortRef,
  stepVerdict,
  tracebackFilesIn,
  type BisectCommit,
  type StepRecord,
} from './plan-bisect.js';
import type { BisectResult, BisectSource, BisectStep } from './types.js';

export interface BisectInput {
  /** The confirmed reproduction (repro.py). */
  script: string;
  report: ReportReading;
  /** Top-level modules the script imports (for the check that the blamed diff touches them). */
  imports: string[];
  /**
   * Seeded runs per step. 1 when the confirmation reproduced in every run; more for a flaky bug, where the
   * symptom in any run makes the step bad and only all runs passing make it good.
   */
  runsPerStep: number;
  /** Steps at most, GOOD's check included. @defaultValue 20 */
  maxSteps: number;
  /** Wall-clock ceiling of the whole bisection. */
  maxMs: number;
  settings: RunLimitsSettings;
}

export interface BisectDeps {
  executor: ScriptExecutor;
  source: BisectSource;
  /**
   * The executor for a commit's checkout, in that commit's own environment (`env` names it for the step), or why
   * none can be had there (the env does not build): the step is then skipped. Absent, every step uses `executor`.
   */
  executorAt?: (workspace: Workspace, signal?: AbortSignal) => Promise<{ executor: ScriptExecutor; env: string | null } | { skip: string }>;
  /** "bisecting: 7 commits left, ~3 steps", for the CLI line and the issue comment. */
  progress?: (message: string) => void;
  now?: () => number;
}

/**
 * Bisects a confirmed regression between GOOD (where the report says it worked) and the issue's ref:
 * first the reproduction must pass at GOOD, then each step runs it at the commit nearest the middle of the
 * suspects. Checkouts are the cached per-SHA ones; each step is one executor run per seed.
 */
export async function runBisect(input: BisectInput, deps: BisectDeps, signal?: AbortSignal): Promise<BisectResult> {
  const now = deps.now ?? Date.now;
  const start = now();
  const { source } = deps;
  const steps: BisectStep[] = [];
  // The commits first: a range too long to search moves GOOD to where the searched commits start (git-bisect-source.ts).
  const commits = await source.commits(signal);
  const base = { good: source.good, bad: { ref: source.bad.ref, sha: source.bad.sha }, steps };
  const finish = (r: Omit<BisectResult, 'good' | 'bad' | 'steps' | 'wallMs'>): BisectResult => ({ ...base, ...r, wallMs: now() - start });

  const expectedSteps = commits.length ? Math.ceil(Math.log2(commits.length)) : 0;
  const counts = { commitsInRange: commits.length, expectedSteps };
  if (!commits.length) {
    return finish({
      status: 'no_commits',
      reason:
        `${shortRef(source.good.ref)} is not an ancestor of ${shortRef(source.bad.ref)} along the first parents, ` +
        'so there is nothing between them to bisect',
      firstBad: null,
      candidates: [],
      ...counts,
    });
  }

  // A bad step's failing output and where its run saw the checkout: the first bad commit's is read for traceback frames.
  const badOutput = new Map<string, { output: string; roots: string[] }>();
  const step = async (commit: BisectCommit): Promise<StepRecord> => {
    if (signal?.aborted) throw new CancelledError('the bisection was cancelled');
    const t0 = now();
    let record: StepRecord = { verdict: 'skip', why: 'no run was made' };
    let runs = 0;
    let env: string | null = null;
    let workspace: Awaited<ReturnType<BisectSource['workspaceAt']>> | null = null;
    try {
      workspace = await source.workspaceAt(commit.sha, signal);
    } catch (err) {
      if (err instanceof CancelledError || signal?.aborted) throw err;
      record = { verdict: 'skip', why: `the commit could not be checked out: ${messageOf(err)}`.slice(0, 300) };
    }
    const at = workspace && deps.executorAt ? await envAt(deps.executorAt, workspace, signal) : null;
    if (at && 'skip' in at) record = { verdict: 'skip', why: at.skip };
    else if (workspace) {
      env = at?.env ?? null;
      try {
        const check = await verifyFix(
          {
            script: input.script,
            report: input.report,
            ref: commit.sha,
            sha: commit.sha,
            workspace,
            runs: input.runsPerStep,
            settings: input.settings,
          },
          { executor: at?.executor ?? deps.executor },
          signal,
        );
        runs = check.runs.length;
        const failing = check.runs.find((r) => r.outcome === 'reproduces');
        if (failing)
          badOutput.set(commit.sha, { output: failing.outputExcerpt, roots: [workspace.mountPath ?? '/workspace', workspace.hostPath] });
        record = stepVerdict(
          check.runs.map((r) => r.outcome),
          check.runs.map((r) => r.observed),
        );
      } catch (err) {
        if (err instanceof CancelledError || signal?.aborted) throw err;
        record = { verdict: 'skip', why: `the run could not be made: ${messageOf(err)}`.slice(0, 300) };
      }
    }
    const durationMs = now() - t0;
    steps.push({
      sha: commit.sha,
      subject: commit.subject,
      verdict: record.verdict,
      why: record.why,
      runs,
      durationMs,
      ...(env ? { env } : {}),
    });
    return record;
  };

  // GOOD first: a reproduction that fails there too is no regression between the two refs.
  deps.progress?.(`bisecting: checking that the reproduction passes at ${shortRef(source.good.ref)}`);
  const atGood = await step({ sha: source.good.sha, subject: `${shortRef(source.good.ref)} (GOOD)` });
  if (atGood.verdict === 'bad')
    return finish({
      status: 'not_regression',
      reason: `the reproduction fails at ${shortRef(source.good.ref)} too (${atGood.why}): no regression between the two refs`,
      firstBad: null,
      candidates: [],
      ...counts,
    });
  if (atGood.verdict === 'skip')
    return finish({
      status: 'good_unusable',
      reason: `the reproduction could not be judged at ${shortRef(source.good.ref)}: ${atGood.why}`,
      firstBad: null,
      candidates: [],
      ...counts,
    });

  const records = new Map<string, StepRecord>();
  const bySha = new Map(commits.map((c) => [c.sha, c]));
  for (;;) {
    const next = nextBisectStep(commits, records);
    if (next.kind === 'found') {
      const commit = bySha.get(next.sha)!;
      const changed = (await source.changedFiles(commit.sha, signal).catch(() => [] as string[])).slice(0, 50);
      const touches = filesInImportedPackages(changed, input.imports);
      const bad = badOutput.get(commit.sha);
      const changedSet = new Set(changed);
      const inTraceback = (bad ? tracebackFilesIn(bad.output, bad.roots) : []).filter((f) => changedSet.has(f));
      return finish({
        status: 'found',
        reason: `first bad commit ${commit.sha.slice(0, 12)}; ${
          inTraceback.length
            ? `it changes ${inTraceback.slice(0, 3).join(', ')}, where the failing run's traceback passes`
            : touches.length
              ? `it changes ${touches.slice(0, 3).join(', ')}, inside what the reproduction imports`
              : 'but none of the files it changes lies inside a package the reproduction imports, so check it by hand'
        }`,
        firstBad: {
          sha: commit.sha,
          subject: commit.subject,
          pr: pullRequestOf(commit.subject),
          changedFiles: changed,
          touchesImported: touches,
          inTraceback,
        },
        candidates: [],
        ...counts,
      });
    }
    if (next.kind === 'ambiguous') {
      return finish({
        status: 'ambiguous',
        reason: `skipped commits hide the first bad one: it is one of ${next.candidates.length} commits`,
        firstBad: null,
        candidates: next.candidates.map((sha) => ({ sha, subject: bySha.get(sha)?.subject ?? '' })),
        ...counts,
      });
    }
    if (steps.length >= input.maxSteps || now() - start >= input.maxMs) {
      const suspects = suspectsOf(commits, records);
      const ceiling = steps.length >= input.maxSteps ? `the step ceiling (${input.maxSteps})` : 'the time ceiling';
      return finish({
        status: 'ceiling',
        reason: `${ceiling} ended the bisection with ${suspects.length} commits still suspect`,
        firstBad: null,
        candidates: suspects,
        ...counts,
      });
    }
    deps.progress?.(`bisecting: ${next.left} commits left, ~${next.steps} step${next.steps === 1 ? '' : 's'}`);
    records.set(next.sha, await step(bySha.get(next.sha)!));
  }
}

/** The commits still suspect: after the newest good one, up to the oldest bad one. */
function suspectsOf(commits: readonly BisectCommit[], records: ReadonlyMap<string, StepRecord>): BisectCommit[] {
  const bad = commits.findIndex((c, i) => i === commits.length - 1 || records.get(c.sha)?.verdict === 'bad');
  let good = -1;
  for (let i = bad - 1; i >= 0 && good < 0; i--) if (records.get(commits[i]!.sha)?.verdict === 'good') good = i;
  return commits.slice(good + 1, bad + 1);
}

/** A commit's executor; an env stage that throws (not a failed build, which it says itself) skips the step too. */
async function envAt(
  executorAt: NonNullable<BisectDeps['executorAt']>,
  workspace: Workspace,
  signal?: AbortSignal,
): Promise<{ executor: ScriptExecutor; env: string | null } | { skip: string }> {
  try {
    return await executorAt(workspace, signal);
  } catch (err) {
    if (err instanceof CancelledError || signal?.aborted) throw err;
    return { skip: `the environment could not be prepared at this commit: ${messageOf(err)}`.slice(0, 300) };
  }
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
