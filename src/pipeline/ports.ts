import type { StaticChecker } from '../agent/static-checker.js';
import type { ScriptExecutor, Workspace } from '../exec/types.js';
import type { LlmClient } from '../llm/types.js';
import type { Logger } from '../log.js';
import type { RefRecord } from '../workspace/prepare-workspace.js';
import type { BuildContextFn, ReproDeps, ReproEvidence, ReproInput } from './run-repro.js';
import type { Cap, CapName } from './run-spec.js';
import type { IssueInput, StageName } from './types.js';

/**
 * The ports of `reproduceIssue(spec, ports, signal)` (src/pipeline/reproduce-issue.ts): where a run's issue
 * comes from (stage 0) and where its progress and result go (stage 6). The pipeline knows no GitHub, no
 * Redis and no terminal; each side effect is an adapter, one file each:
 *
 *   IssueSource      GitHub issue + clone (src/github/github-issue-source.ts), a file + a local repository
 *                    (src/intake/file-issue-source.ts)
 *   ResultPublisher  GitHub comment, check run, labels, PR (src/github/publish/github-result-publisher.ts),
 *                    files on disk (src/publish/files-publisher.ts), the terminal (src/cli/terminal-publisher.ts),
 *                    several at once (src/publish/fan-out-publisher.ts)
 */

/** Stage 0's port: the issue, and the project it is about at the ref to reproduce at. */
export interface IssueSource {
  /** Where the issue is from, for logs and notes: `owner/repo#12`, `issue.md`. */
  readonly label: string;
  /** The issue as reported (a GitHub source adds the later human comments). */
  readIssue(signal: AbortSignal): Promise<IssueInput>;
  /**
   * The project at the ref to reproduce at, or null when the run has no repository (then no context stage and
   * no workspace). Called after `readIssue`: the ref may come from the issue (a linked commit, a version).
   */
  checkout(issue: IssueInput, signal: AbortSignal): Promise<ProjectCheckout | null>;
}

/** A project checkout as a source hands it over. */
export interface ProjectCheckout {
  /** Host path the context stage indexes. */
  repoDir: string;
  /** What every script run sees: the checkout read-only on PYTHONPATH. Absent: the repository is only indexed. */
  workspace?: ReproInput['workspace'];
  /** The commit the run used (check run, PR base). */
  sha?: string;
  /** How the ref was chosen; evidence.json and the comment's notes say it. */
  ref?: RefRecord;
  /** A fixing ref: a reproduction is re-run there (`--verify-fix`, a bench case's fix commit). */
  fix?: { ref: string; sha: string; workspace: Workspace };
}

/** What the run settled on, as the result states it: every cap with who set it, and why a setting moved. */
export interface SpecSummary {
  caps: Record<CapName, Cap>;
  executor: string;
  llm: string;
  notes: string[];
}

/** A finished run, as a publisher receives it. */
export interface RunReport {
  /** The source's label (`owner/repo#12`, `issue.md`). */
  source: string;
  issue: IssueInput;
  evidence: ReproEvidence;
  checkout: { sha?: string; ref?: RefRecord } | null;
  spec: SpecSummary;
}

/** Where a publisher put the result: file paths, URLs. `gone`: the destination vanished (the issue was deleted). */
export interface Published {
  locations: string[];
  gone?: boolean;
}

/** A run that ended without a result; the publisher says so where its result would have gone. */
export type RunEnd =
  | { kind: 'cancelled'; by: string }
  /** `retrying`: another attempt follows (the queue retries); `attempt` of `attempts` is the one that failed. */
  | {
      kind: 'failed';
      reason: string;
      attempt: number;
      attempts: number;
      retrying: boolean;
      /** Runs that really started (a queue counts a worker that died mid-run too). @defaultValue attempt */
      runs?: number;
      /** How many of them ended with their worker dying. @defaultValue 0 */
      crashed?: number;
    }
  | { kind: 'time_budget'; minutes: number }
  | { kind: 'bad_ref'; ref: string };

/** Stage 6's port: progress while the run goes, then one result (or one end). */
export interface ResultPublisher {
  /** One call per stage start and finish; a failure here is cosmetic and must not end the run (adapters swallow it). */
  progress(stage: StageName, message: string): Promise<void>;
  /** The result. */
  publish(report: RunReport): Promise<Published>;
  /** The run ended without a result. */
  end(end: RunEnd): Promise<void>;
}

/** Everything `reproduceIssue` talks to. The executor and the model are built from the spec when absent. */
export interface ReproPorts {
  source: IssueSource;
  publisher: ResultPublisher;
  /** @defaultValue createExecutor(spec.executor), closed after the run */
  executor?: ScriptExecutor;
  /** null: no model (tier 0 only). @defaultValue createLlmClient(spec.llm) */
  llm?: LlmClient | null;
  /** null: no context stage. @defaultValue src/context's buildContext with spec.context */
  buildContext?: BuildContextFn | null;
  /** @defaultValue pyflakes (+ pylint -E) under spec.settings.staticPython */
  checker?: StaticChecker;
  /** @defaultValue silentLogger */
  log?: Logger;
  /**
   * Stages 1-5 with the ports bound. Only tests replace them (a worker test that scripts an outcome without
   * running Python); every entry point runs the real ones. @defaultValue runReproWithEvidence
   */
  stages?: RunStages;
}

/** Stages 1-5 as reproduceIssue calls them: what the spec and the ports settled on, the run's input and deps. */
export type RunStages = (input: ReproInput, deps: ReproDeps, signal: AbortSignal) => Promise<ReproEvidence>;
