import type { ReproOutcome } from '../pipeline/types.js';
import type { OracleValues } from '../symptoms/types.js';
import { fenceFor, neutralizeMentions, tableCell } from './neutralize.js';

/**
 * The part of the result comment a behavioural reproduction gets (issue 28): the script's assertion of the report's
 * expectation, the expected value with the report's words it comes from, and what the run showed (and what the report
 * saw, where it says). Pure.
 */

/** Inline code for a table cell: one line, no backticks or pipes to break out. */
function code(text: string, max = 200): string {
  const one = text.replace(/\s+/g, ' ').replace(/`/g, "'").replace(/\|/g, '/').trim();
  return `\`${one.length > max ? `${one.slice(0, max - 1)}…` : one}\``;
}

const WHAT: Record<OracleValues['form'], string> = {
  compare: 'value',
  raises: 'exception',
  warns: 'warning',
};

/** The observed side, in words. */
export function oracleObserved(o: OracleValues): string {
  if (o.held) return o.observed ? `the assertion held; the run printed ${code(o.observed)}` : 'the assertion held';
  if (o.form === 'raises') return o.observed ? `no ${o.expected} was raised: ${code(o.observed)}` : `no ${o.expected} was raised`;
  if (o.form === 'warns') return o.observed ? `no warning: ${code(o.observed)}` : 'no warning was emitted';
  return o.observed ? code(o.observed) : "the assertion failed (the report's own assertion prints no value)";
}

/** The "RepGen's run showed" cell of a behavioural run. */
export function oracleShowedRow(o: OracleValues): string {
  return o.held ? `the report's expectation held: ${oracleObserved(o)}` : `the report's expectation failed: ${oracleObserved(o)}`;
}

/** The section: the assertion in a code block, then expected (from the report) and observed (from the run). */
export function oracleSection(outcome: ReproOutcome): string {
  const o = outcome.match?.oracle;
  if (!o || outcome.scriptRan === false) return '';
  const fence = fenceFor(o.assertion);
  const rows = [
    '| | |',
    '|---|---|',
    `| **Expected ${WHAT[o.form]}** (from the report: “${tableCell(o.quote, 300)}”) | ${code(o.expected)} |`,
    ...(o.reportObserved ? [`| **The report saw** | ${code(o.reportObserved)} |`] : []),
    `| **This run** | ${tableCell(oracleObserved(o), 400)} |`,
  ];
  return [
    `**The report's expectation, asserted** (\`repro.py\` line ${o.line}):`,
    '',
    `${fence}python\n${neutralizeMentions(o.assertion)}\n${fence}`,
    '',
    rows.join('\n'),
  ].join('\n');
}
