// Stage 1: the repository's context bundles for the model. A builder that fails is said and the run goes on without it.
import type { ContextResult } from '../../../context/types.js';
import { CancelledError } from '../../../errors.js';
import type { Logger } from '../../../log.js';
import type { ReproEvidence } from '../../build-evidence.js';
import type { BuildContextFn } from '../../ports.js';
import type { IssueInput, ProgressFn } from '../../types.js';

export interface ContextStageResult {
  bundles: ContextResult['bundles'];
  /** evidence.json's `context`; null when the stage was skipped. */
  record: ReproEvidence['context'];
  notes: string[];
}

export async function runContextStage(
  input: { repoDir: string | undefined; issue: IssueInput; top: number; tokenBudget: number },
  deps: { buildContext?: BuildContextFn; progress: ProgressFn; log: Logger },
  signal?: AbortSignal,
): Promise<ContextStageResult> {
  if (!input.repoDir || !deps.buildContext) {
    await deps.progress('context', input.repoDir ? 'skipped: no context builder wired' : 'skipped: no repository given');
    return { bundles: [], record: null, notes: [] };
  }
  await deps.progress('context', `indexing ${input.repoDir}`);
  try {
    const ctx = await deps.buildContext(
      {
        repoDir: input.repoDir,
        report: { title: input.issue.title, body: input.issue.body },
        top: input.top,
        tokenBudget: input.tokenBudget,
      },
      signal,
    );
    await deps.progress('context', `${ctx.bundles.length} bundle(s); semantic: ${ctx.semantic}`);
    return {
      bundles: ctx.bundles,
      record: {
        bundles: ctx.bundles.length,
        semantic: ctx.semantic,
        trainingLoops: ctx.trainingLoops.length,
        error: null,
        ranks: ctx.bundles.map((b) => b.rank),
      },
      notes: [],
    };
  } catch (err) {
    if (signal?.aborted) throw new CancelledError('the reproduction was cancelled');
    if (err instanceof CancelledError) throw err;
    const message = err instanceof Error ? err.message : String(err);
    deps.log.warn({ error: message }, 'context building failed; continuing without it');
    await deps.progress('context', 'failed; continuing without repository context');
    return {
      bundles: [],
      record: { bundles: 0, semantic: 'off', trainingLoops: 0, error: message, ranks: [] },
      notes: [`context building failed (${message}); continued without repository context`],
    };
  }
}
