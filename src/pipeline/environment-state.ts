import { readEnvImportFailure, type EnvImportFailure } from '../env/prove/import-failure.js';
import type { EnvironmentProbe } from '../plan/types.js';
import type { Symptom } from '../symptoms/types.js';
import { fixAdvice, type FixAdviceFor } from './stages/env/fix-advice.js';

/**
 * The one source of truth for "is the run's environment sound": a module the run needs that is installed (the
 * project's own package on PYTHONPATH, or a dependency) but fails to import makes every run here fail before the
 * bug's code, so the verdict is an environment failure and the Environment line says so, never "importable". Pure.
 */
export interface FailedImport {
  module: string;
  /** `Type: message` as the probe caught it. */
  error: string;
  /** One of the project's own packages (else a dependency). */
  project: boolean;
}

export interface EnvironmentState {
  failed: FailedImport[];
  /** The outcome's `project` line: what the checkout is and whether it imports. */
  projectLine: string | null;
  /** The sentence the verdict gives, null when nothing failed to import. */
  failure: string | null;
}

export function environmentState(
  probe: Pick<EnvironmentProbe, 'importErrors'> | null,
  workspace: { project?: string; packages?: readonly string[] } | null | undefined,
): EnvironmentState {
  const own = new Set(workspace?.packages ?? []);
  const failed = Object.entries(probe?.importErrors ?? {}).map(([module, error]) => ({ module, error, project: own.has(module) }));
  const project = workspace ? (workspace.project ?? 'the repository') : null;
  const ownFailed = failed.filter((f) => f.project);
  const projectLine = !project
    ? null
    : ownFailed.length
      ? `${project}: fails to import here (${ownFailed.map((f) => `${f.module}: ${f.error}`).join('; ')}); the checkout is on PYTHONPATH, read-only`
      : `${project}: importable as installed (the checkout is on PYTHONPATH, read-only); import it as the report does`;
  const failure = failed.length
    ? failed
        .map(
          (f) =>
            `${f.project ? 'the project' : 'the dependency'} \`${f.module}\` is installed but fails to import (${f.error.split('\n')[0]})`,
        )
        .join('; ')
    : null;
  return { failed, projectLine, failure };
}

/** What the environment was built from, for telling the env's import failures from the script's own. */
export interface EnvImportInput {
  /** The probe's import errors: a project package listed there does not import at all. */
  probe: Pick<EnvironmentProbe, 'importErrors'> | null;
  /** Output of the run that decided the outcome when it did not reproduce (its traceback), else null. */
  runOutput: string | null;
  projectPackages: ReadonlySet<string>;
  /** The built env's pins and the distributions its spec asked for; null when runs use the base interpreter. */
  env: { pins: Record<string, string>; declared: readonly string[] } | null;
  /** Where runs see the checkout (`/workspace`). */
  workspaceMount: string;
  /** What the report shows: an import failure there may be the bug itself. */
  expected: readonly Symptom[];
  /** The distribution of a top-level module (the spec's import-name mapping: `absl` → `absl-py`). */
  distributionOf?: (module: string) => string | null;
  /** Where the reader can act: repgen.yml keys (the App), or the CLI's flags. @defaultValue 'repo-config' */
  advice?: FixAdviceFor;
}

/** An import failure that is the environment's, with the sentence the outcome gives. */
export interface EnvImportVerdict extends EnvImportFailure {
  sentence: string;
}

/**
 * The one source of truth for "a run failed at an import the environment should have made work" (issue 27, item
 * 5): the project's own package does not import (the probe), or a run stopped at an import of the project, of a
 * declared or pinned dependency, or one made inside the project's or an installed package's code
 * (src/env/prove/import-failure.ts reads the traceback). Either is an environment failure (exit_env) naming the module
 * and the repgen.yml key that fixes it, never a reproduction or a mismatch. When the report itself shows an import
 * failure (or, for the project's import, the same exception), that may be the bug, and it is not called the
 * environment's. The script's own import of a module nobody declared is left to the agent. Pure.
 */
export function envImportFailure(input: EnvImportInput): EnvImportVerdict | null {
  if (input.expected.some((s) => s.kind === 'import_error')) return null;
  const ctx = {
    pins: input.env?.pins ?? {},
    declared: [...(input.env?.declared ?? [])],
    projectPackages: [...input.projectPackages],
    workspaceMount: input.workspaceMount,
    ...(input.distributionOf ? { distributionOf: input.distributionOf } : {}),
  };
  const fix = (key: string): string => fixAdvice(key, input.advice);
  for (const m of input.projectPackages) {
    const error = input.probe?.importErrors?.[m];
    if (!error) continue;
    const type = error.split(':')[0] ?? '';
    if (input.expected.some((s) => s.exception?.type === type)) return null;
    const read = readEnvImportFailure(error, ctx);
    const missing = /^ModuleNotFoundError: No module named '([^']+)'/.exec(error)?.[1];
    const found: EnvImportFailure = read ?? {
      module: missing ?? m,
      why: missing ? `the project (${m}) imports ${missing}, which the environment lacks` : `the project (${m}) does not import`,
      // The project raises on import (torchvision's ops against another torch): versions the config pins fix it.
      configKey: 'environment.packages',
    };
    const lead = 'The project does not import in this environment, so no run could show the bug';
    return { ...found, sentence: `${lead}: \`import ${m}\` fails: ${error} (${found.why}).${fix(found.configKey)}` };
  }
  if (!input.runOutput) return null;
  const found = readEnvImportFailure(input.runOutput, ctx);
  if (!found) return null;
  const line = lastImportLine(input.runOutput);
  const lead = 'The run stopped at an import the environment should provide, so it could not show the bug';
  return { ...found, sentence: `${lead}: ${found.why}${line ? ` (\`${line}\`)` : ''}.${fix(found.configKey)}` };
}

function lastImportLine(output: string): string | null {
  const lines = output.split('\n').filter((l) => /^(?:ModuleNotFoundError|ImportError): /.test(l));
  return lines.at(-1)?.slice(0, 300) ?? null;
}
