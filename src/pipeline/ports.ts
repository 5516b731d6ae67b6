import type { StaticChecker } from '../agent/static-checker.js';
import type { ScriptExecutor, Workspace } from '../exec/types.js';
import type { LlmClient } from '../llm/types.js';
import type { Logger } from '../log.js';
import type { RefRecord } from '../workspace/prepare-workspace.js';
import type { AgentPrompts } from '../agent/index.js';
import type { BisectSource } from '../bisect/types.js';
import type { ContextResult } from '../context/types.js';
import type { EnvPorts } from './stages/env/index.js';
import type { ProbeStore } from '../plan/index.js';
import type { Prompt } from '../prompts/load-prompts.js';
import type { ReproEvidence } from './build-evidence.js';
import type { ReproSettings } from './settings.js';
import type { IssueInput, ProgressFn, SpecSummary, StageName } from './types.js';
import type { FixAdviceFor } from './stages/env/fix-advice.js';
import type { PatchedCopies } from './stages/candidate-fix/scratch-copy.js';

export type { SpecSummary } from './types.js';

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
  /** A regression to bisect once the reproduction is confirmed: GOOD (asked, or where the report says it worked) to the issue's ref. */
  bisect?: BisectSource;
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

/**
 * Where a publisher put the result: file paths, URLs. `gone`: the destination vanished (the issue was deleted).
 * `alreadyEnded`: the run's final word was already out (a second run of the same job), so nothing was posted.
 */
export interface Published {
  locations: string[];
  gone?: boolean;
  alreadyEnded?: boolean;
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
  /** The project's environment: its spec and builder (src/env); null: every run uses the executor's interpreter. @defaultValue null */
  env?: EnvPorts | null;
  /**
   * Stages 1-5 with the ports bound. Only tests replace them (a worker test that scripts an outcome without
   * running Python); every entry point runs the real ones. @defaultValue runReproWithEvidence
   */
  stages?: RunStages;
}

/** Stages 1-5 as reproduceIssue calls them: what the spec and the ports settled on, the run's input and deps. */
export type RunStages = (input: ReproInput, deps: ReproDeps, signal: AbortSignal) => Promise<ReproEvidence>;

export interface ReproInput {
  issue: IssueInput;
  /** A checkout of the repository the issue is about; without one, no context stage. */
  repoDir?: string;
  /**
   * The project as every script run sees it: the checkout at the issue's ref, read-only and importable.
   * `project` says what it is (`owner/name @ sha`, why that ref) for the model's prompt and the evidence.
   */
  workspace?: Workspace & { project?: string; packages?: string[] };
  settings: ReproSettings;
  /** The project's built env (its pins, the distributions its spec asked for): an import of one that fails is the env's. */
  env?: { pins: Record<string, string>; declared: string[] };
  /** Where the reader of an env failure can act: repgen.yml keys, or `repgen reproduce`'s flags. @defaultValue 'repo-config' */
  envAdvice?: FixAdviceFor;
}

/** The project's exports as tier 0 sees them: name → the module to import it from; undefined without a checkout's packages. */
export type ProjectExportsFn = (
  workspace: { hostPath: string; packages?: readonly string[] } | undefined,
) => Promise<Record<string, string> | undefined>;

/** The context builder as the pipeline sees it (src/context's buildContext with its deps bound). */
export type BuildContextFn = (
  input: { repoDir: string; report: { title: string; body: string }; top: number; tokenBudget: number },
  signal?: AbortSignal,
) => Promise<ContextResult>;

export interface ReproDeps {
  executor: ScriptExecutor;
  llm: LlmClient | null;
  progress: ProgressFn;
  log: Logger;
  buildContext?: BuildContextFn;
  /**
   * What the checkout's packages export by name, for tier 0's completion (a name called without its import).
   * @defaultValue src/workspace/project-exports.ts's readProjectExports (reads the checkout; a cassette serves its recorded answer)
   */
  projectExports?: ProjectExportsFn;
  /** Why there is no model, said in the outcome. @defaultValue 'no LLM configured' */
  llmReason?: string;
  /** @defaultValue pyflakes (+ pylint -E) under settings.staticPython */
  checker?: StaticChecker;
  /** @defaultValue loaded from prompts/ when there is a model */
  prompts?: AgentPrompts & { report: Prompt };
  /** Where probe answers outlive the process. @defaultValue a folder store at settings.probeCacheDir, none when null */
  probeStore?: ProbeStore;
  now?: () => number;
  /** Where a candidate fix is applied (a scratch copy of the checkout). @defaultValue createPatchedCopies() under os.tmpdir() */
  patchedCopies?: PatchedCopies;
}
