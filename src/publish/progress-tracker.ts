import type { ProgressFn, StageName } from '../pipeline/types.js';
import { buildProgressComment, type StageProgress } from './build-result-comment.js';

const ORDER: readonly StageName[] = ['intake', 'context', 'report', 'plan', 'agent', 'confirm', 'publish'];

export interface ProgressTracker {
  /** Pass as `deps.progress` to runRepro. */
  progress: ProgressFn;
  stages(): StageProgress[];
  /** The progress comment as it stands. */
  markdown(): string;
}

/**
 * Turns the pipeline's progress calls into stage states (a stage runs until the next one starts) and
 * hands the re-rendered progress comment to `onChange` — what the App edits on the issue. Pure apart
 * from the callback.
 */
export function createProgressTracker(
  onChange: (markdown: string, stages: StageProgress[]) => void | Promise<void> = () => undefined,
  options: { secrets?: readonly string[] } = {},
): ProgressTracker {
  const states = new Map<StageName, StageProgress>(ORDER.map((stage) => [stage, { stage, state: 'pending' }]));
  const list = (): StageProgress[] => ORDER.map((s) => states.get(s) ?? { stage: s, state: 'pending' });
  const markdown = (): string => buildProgressComment(list(), { secrets: options.secrets });
  return {
    stages: list,
    markdown,
    async progress(stage, message) {
      const at = ORDER.indexOf(stage);
      for (const earlier of ORDER.slice(0, at)) {
        const s = states.get(earlier);
        if (s && (s.state === 'running' || s.state === 'pending'))
          states.set(earlier, { ...s, state: s.state === 'running' ? 'done' : 'skipped' });
      }
      const state = /^skipped\b/.test(message)
        ? 'skipped'
        : /^(failed|rejected)\b/.test(message)
          ? 'failed'
          : stage === 'publish'
            ? 'done'
            : 'running';
      states.set(stage, { stage, state, note: message.split('\n')[0] });
      await onChange(markdown(), list());
    },
  };
}
