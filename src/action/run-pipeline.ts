import { readOperatorEnv } from '../config/operator-env.js';
import type { ScriptExecutor } from '../exec/types.js';
import type { LlmClient } from '../llm/types.js';
import type { Logger } from '../log.js';
import type { ResultPublisher } from '../pipeline/ports.js';
import { reproduceIssue } from '../pipeline/reproduce-issue.js';
import type { BuildContextFn, ReproEvidence } from '../pipeline/run-repro.js';
import { llmChoice, resolveRunSpec, type RunSpec } from '../pipeline/run-spec.js';
import type { ReproSettings } from '../pipeline/settings.js';
import type { IssueInput, ProgressFn } from '../pipeline/types.js';
import { filesPublisher, type ReproFiles } from '../publish/files-publisher.js';
import type { PreparedWorkspace } from '../workspace/prepare-workspace.js';
import type { RunAsk } from './gate-event.js';

/**
 * The action's run: reproduceIssue, as for `repgen reproduce` and the worker, with the issue the step read and
 * the workflow's checkout (at the asked ref) as the source, and evidence files in `outDir` as the result: the
 * step then publishes them on the issue (comment, check run, labels, PR) and as its outputs.
 */
export interface ActionPipelineRequest {
  jobId: string;
  issue: IssueInput;
  prepared: PreparedWorkspace;
  /** The commit the checkout is at. */
  sha: string;
  ask: RunAsk;
  /** Where repro.py, evidence.json and comment.md go. */
  outDir: string;
  /** Redacted from the files. */
  secrets: readonly string[];
  label: string;
}

export interface ActionPipelineWiring {
  /** The operator's environment (operatorEnv(): the step's env with the inputs laid over it). */
  env: NodeJS.ProcessEnv;
  log: Logger;
  /** Tests inject these; a real run builds them from `env` and the repository's config. */
  executor?: ScriptExecutor;
  llm?: LlmClient | null;
  buildContext?: BuildContextFn;
}

export async function runActionPipeline(
  request: ActionPipelineRequest,
  wiring: ActionPipelineWiring,
  progress: ProgressFn,
  signal: AbortSignal,
): Promise<{ evidence: ReproEvidence; files: ReproFiles }> {
  const spec = actionSpec(wiring.env, request.ask, request.jobId);
  for (const note of spec.notes) wiring.log.info({ note }, 'run spec');
  const { workspace, ref } = request.prepared;
  const files = filesPublisher(request.outDir, request.secrets);
  const publisher: ResultPublisher = {
    progress: async (stage, message) => {
      await progress(stage, message);
    },
    publish: (report) => files.publish(report),
    end: async () => undefined,
  };
  const result = await reproduceIssue(
    spec,
    {
      source: {
        label: request.label,
        readIssue: async () => request.issue,
        checkout: async () => ({ repoDir: workspace.hostPath, workspace, sha: request.sha, ref }),
      },
      publisher,
      log: wiring.log,
      ...(wiring.executor ? { executor: wiring.executor } : {}),
      ...(wiring.llm !== undefined ? { llm: wiring.llm } : {}),
      ...(wiring.buildContext ? { buildContext: wiring.buildContext } : {}),
    },
    signal,
  );
  const written = files.written();
  if (!written) throw new Error('the evidence files were not written');
  return { evidence: result.evidence, files: written };
}

/**
 * The run spec (src/pipeline/run-spec.ts): the workflow's settings (REPGEN_* and the cap inputs) are the
 * ceilings; a present `.github/repgen.yml` may lower its caps, never raise them. An absent file changes nothing.
 */
export function actionSpec(
  env: NodeJS.ProcessEnv,
  ask: Pick<RunAsk, 'config' | 'configFromFile' | 'gpu' | 'llm'>,
  jobId?: string,
): RunSpec {
  return resolveRunSpec(readOperatorEnv(env), ask.configFromFile ? ask.config : null, {
    gpu: ask.gpu,
    ...(jobId ? { jobId } : {}),
    ...llmChoice(ask.llm),
  });
}

/** The settings of {@link actionSpec} (kept for the action's tests). */
export function actionSettings(env: NodeJS.ProcessEnv, ask: Pick<RunAsk, 'config' | 'configFromFile'>): ReproSettings {
  return resolveRunSpec(readOperatorEnv(env), ask.configFromFile ? ask.config : null, {}).settings;
}
