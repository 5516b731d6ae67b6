// Each commit its own environment: a bisection step at a commit whose declared dependencies differ from the issue's
// ref runs in the env those dependencies give (built once, reused by lock hash as every env is), not in the issue
// ref's env. A commit whose env cannot be built is skipped, as `git bisect run` skips what cannot be built.
import { dirname } from 'node:path';
import type { ScriptExecutor, Workspace } from '../../../exec/types.js';
import { withInterpreter } from '../../../exec/with-interpreter.js';
import type { IssueInput } from '../../types.js';
import { withBuiltWorkspaces } from './built-workspace.js';
import { envFailureSummary, prepareEnv, type EnvPorts, type EnvStageResult } from './index.js';

/** The executor a commit's runs use, and which env it is; or why no run can be made there. */
export type ExecutorAt = { executor: ScriptExecutor; env: string | null } | { skip: string };

/** Runs in a built env: its interpreter, and each checkout swapped for its copy with the extensions compiled. */
export function envExecutor(inner: ScriptExecutor, stage: EnvStageResult & { kind: 'built' }): ScriptExecutor {
  const dir = stage.env.readOnlyPaths[0];
  // `<cache root>/envs/<key>`: the folder a cluster run mounts from the env cache volume.
  const env = dir ? { dir, cacheRoot: dirname(dirname(dir)) } : undefined;
  const executor = withInterpreter(inner, { python: stage.env.python, key: stage.env.lockHash, ...(env ? { env } : {}) });
  const p = stage.project;
  return p ? withBuiltWorkspaces(executor, p.buildCheckout, new Map([[p.checkout, p.result]])) : executor;
}

/**
 * The executor for a checkout at any commit: the env stage run again on that checkout (its spec read from the
 * checkout's own files and the same report), so the builder reuses the env when the lock is the same. `inner` is
 * the executor without an env (the policy already applied); a commit that declares nothing to build runs on it.
 */
export function envExecutorAt(
  issue: IssueInput,
  ports: EnvPorts,
  inner: ScriptExecutor,
): (workspace: Workspace, signal?: AbortSignal) => Promise<ExecutorAt> {
  return async (workspace, signal) => {
    const sig = signal ?? new AbortController().signal;
    const stage = await prepareEnv({ issue, repoDir: workspace.hostPath, checkout: workspace.hostPath }, ports, () => undefined, sig);
    switch (stage.kind) {
      case 'none':
        // A spec that could not be worked out runs on the base interpreter, as the job's own runs do: the step says so.
        return { executor: inner, env: stage.note ? stage.note.replace(/^Environment: /, '').slice(0, 300) : null };
      case 'built':
        return {
          executor: envExecutor(inner, stage),
          env: `lock ${stage.env.lockHash.slice(0, 12)}${stage.env.cached ? ', reused' : ', built'}`,
        };
      case 'failed':
        return { skip: `the environment could not be built at this commit: ${envFailureSummary(stage.failure)}`.slice(0, 300) };
    }
  };
}
