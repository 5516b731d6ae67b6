import type { ReproOutcome } from '../pipeline/types.js';
import { tableCell } from './neutralize.js';

const MARK = { fixed: '✅ fixed', still_reproduces: '❌ still reproduces', inconclusive: '➖ inconclusive' } as const;

/**
 * The fix check's result when one ran (`--verify-fix REF`, a pull request): the reproduction re-run at the fixing
 * ref, and what it showed there. A maintainer reads it beside the verdict; it used to be only in evidence.json.
 */
export function fixCheckSection(outcome: ReproOutcome): string {
  const f = outcome.fixCheck;
  if (!f) return '';
  const at = `\`${tableCell(f.ref, 80)}\`${f.sha ? ` (${f.sha.slice(0, 12)})` : ''}`;
  return `**Fix check** at ${at}: ${MARK[f.verdict]} — ${tableCell(f.reason, 400)}.`;
}
