import type { ReproOutcome } from '../pipeline/types.js';
import { fenceFor, tableCell } from './neutralize.js';

type Candidate = NonNullable<ReproOutcome['candidateFix']>;

/** The verdict table's row (issue 41): does a generated change make the reproduction pass? Empty when the step was off. */
export function candidateFixRow(outcome: ReproOutcome): string {
  const c = outcome.candidateFix;
  if (!c) return '';
  // The sentence on a reproduction written again after a suspect oracle (issue 41 item 2) follows the answer.
  const text = c.reattempt ? `${candidateAnswerText(c)}. ${c.reattempt}` : candidateAnswerText(c);
  return `| **A candidate change makes this reproduction pass** | ${tableCell(text, c.reattempt ? 1000 : 500)} |`;
}

/** The row's words: yes, no (and whether the oracle is suspect), no evidence, not tried; each with its one reason. */
export function candidateAnswerText(c: Candidate): string {
  switch (c.answer) {
    case 'yes':
      return 'yes: it passes with the generated change below and fails without it (fix-sensitive)';
    case 'no':
      return c.result === 'oracle_suspect'
        ? "no: it still fails with a generated change under which an independent check of the report's expectation " +
            'passes; its check may be narrower than the report'
        : `no: ${stripCount(c.summary)}`;
    case 'no_evidence':
      return `no evidence either way: ${stripCount(c.summary)}`;
    default:
      return `not tried: ${c.summary.replace(/^no candidate fix: /, '')}`;
  }
}

function stripCount(summary: string): string {
  return summary.replace(/^\d+ candidate changes?(?:, no evidence either way)?: /, '');
}

/** The diff, folded, generated and not reviewed; its title says whether the reproduction passes with it. */
export function candidateFixSection(outcome: ReproOutcome, maxChars: number): string {
  const c = outcome.candidateFix;
  if (!c?.diff) return '';
  let body = c.diff.replace(/\n$/, '');
  let note = '';
  if (body.length > maxChars) {
    note = `\n\n_Diff truncated: ${body.length - maxChars} of ${body.length} characters left out (evidence.json has all of it)._`;
    body = body.slice(0, maxChars);
  }
  const title =
    c.answer === 'yes'
      ? 'A change that makes this reproduction pass (generated, not reviewed)'
      : 'A change the model proposed (generated, not reviewed; the reproduction does not pass with it)';
  const fence = fenceFor(body);
  return `<details><summary>${title}</summary>\n\n${fence}diff\n${body}\n${fence}${note}\n\n</details>`;
}
