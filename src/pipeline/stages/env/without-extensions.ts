// A project whose C/C++ extensions did not compile (issue 39, torchvision's optional `_C`): the env is used with the
// checkout as it is only when the import proof passes without them; otherwise the compile failure ends the stage as
// before (exit_env with the compiler's log). Pure.
import type { EnvBuildFailure, EnvSpec } from '../../../env/types.js';

type Failed = { kind: 'failed'; spec: EnvSpec; failure: EnvBuildFailure };

/** A stage no import proof vouched for: one whose extensions did not compile is that build failure. */
export function unprovedStage<S extends { kind: string; spec?: EnvSpec; extensionFailure?: EnvBuildFailure }>(stage: S): S | Failed {
  if (stage.kind === 'built' && stage.extensionFailure && stage.spec)
    return { kind: 'failed', spec: stage.spec, failure: stage.extensionFailure };
  return stage;
}

/** The first line of the compile failure, for the notes and the Environment line. */
export function extensionFailureLine(failure: EnvBuildFailure): string {
  return (failure.message.split('\n').find((l) => l.trim()) ?? '').trim().slice(0, 300);
}

/** A proved stage without its extensions: the comment says they did not build and what the runs use instead. */
export function withoutExtensionsNote<S extends { spec: EnvSpec; extensionFailure?: EnvBuildFailure }>(stage: S): S {
  const f = stage.extensionFailure;
  if (!f) return stage;
  const note =
    `the project's C/C++ extensions did not build (${extensionFailureLine(f)}); the project and the report's imports ` +
    'import without them, so the runs use the checkout as it is, and code that needs the extensions fails';
  return { ...stage, spec: { ...stage.spec, notes: [...stage.spec.notes, note] } };
}
