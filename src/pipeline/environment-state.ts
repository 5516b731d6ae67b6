// Whether the environment, rather than the bug, decides a run: the project's own package does not import. Pure.
import type { EnvironmentProbe } from '../plan/index.js';
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
