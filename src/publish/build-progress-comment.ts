import type { StageName } from '../pipeline/types.js';
import { redactSecrets, tableCell } from './neutralize.js';

export type StageState = 'pending' | 'running' | 'done' | 'failed' | 'skipped';

export interface StageProgress {
  stage: StageName;
  state: StageState;
  /** One line on what the stage did or is doing ("attempt 3/15, tier 1, bundle 1"). */
  note?: string;
}

const MARK: Record<StageState, string> = { pending: '⬜', running: '⏳', done: '✅', failed: '❌', skipped: '➖' };

/** The progress comment: one line per stage, edited in place as the job moves on. */
export function buildProgressComment(
  stages: readonly StageProgress[],
  options: { title?: string; secrets?: readonly string[] } = {},
): string {
  const lines = [`### ${options.title ?? 'RepGen is reproducing this issue'}`, ''];
  for (const s of stages) lines.push(`- ${MARK[s.state]} **${s.stage}**${s.note ? ` — ${tableCell(s.note, 200)}` : ''}`);
  lines.push('', '<sub>This comment is updated as each stage finishes.</sub>');
  return redactSecrets(`${lines.join('\n')}\n`, options.secrets ?? []);
}
