import type { EnvironmentProbe } from '../plan/types.js';

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

import type { Symptom } from '../symptoms/types.js';

/**
 * The project's import failure, when one of its packages does not import in the run's interpreter and the report
 * shows no such failure: every script that imports the project would then fail the same way whatever the bug, so
 * the run says the environment failed (exit_env) instead of "not reproduced" (or, worse, a match on the wrong
 * crash). When the report itself shows an import failure, or the same exception, that may be the bug (a broken
 * import in the project), and the run goes on. Null when the project imports.
 */
export function projectImportFailure(
  probe: EnvironmentProbe,
  projectPackages: ReadonlySet<string>,
  expected: readonly Symptom[],
): string | null {
  for (const m of projectPackages) {
    const error = probe.importErrors?.[m];
    if (!error) continue;
    const type = error.split(':')[0] ?? '';
    if (expected.some((s) => s.kind === 'import_error' || (s.exception && s.exception.type === type))) return null;
    return `\`import ${m}\` fails: ${error}`;
  }
  return null;
}
