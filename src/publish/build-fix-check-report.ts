import type { FixCheck, FixVerdict } from '../workspace/fix-verdict.js';
import { fenceFor, neutralizeMentions, redactSecrets, tableCell } from './neutralize.js';

/**
 * The check run a fix check posts on a pull request: what a maintainer reads to decide whether the PR fixes
 * the issue. Pure: a FixCheck in, the check run's conclusion, title, summary and text out.
 */

/** One check run per (PR head, issue): a PR fixing two issues shows two lines in its checks. */
export function FIX_CHECK_NAME(issueNumber: number): string {
  return `RepGen fix check (#${issueNumber})`;
}

/** Names the issue and the PR; the Re-run button of the check run is recognised by it. */
export function fixCheckExternalId(x: { owner: string; repo: string; issueNumber: number; prNumber: number }): string {
  return `verify:${x.owner}/${x.repo}#${x.issueNumber}@pr${x.prNumber}`.toLowerCase();
}

/** Reads an external id written by {@link fixCheckExternalId}; null for anything else. Pure. */
export function parseFixCheckExternalId(
  id: string | null | undefined,
): { owner: string; repo: string; issueNumber: number; prNumber: number } | null {
  const m = /^verify:([\w.-]+)\/([\w.-]+)#(\d{1,9})@pr(\d{1,9})$/.exec(id ?? '');
  return m?.[1] && m[2] ? { owner: m[1], repo: m[2], issueNumber: Number(m[3]), prNumber: Number(m[4]) } : null;
}

export type CheckConclusion = 'success' | 'failure' | 'neutral';

/** Fixed passes the check; a bug that still shows fails it; anything RepGen cannot decide is neutral (never blocks a merge). */
export const FIX_CONCLUSION: Record<FixVerdict, CheckConclusion> = {
  fixed: 'success',
  still_reproduces: 'failure',
  inconclusive: 'neutral',
};

export interface FixCheckReportInput {
  check: FixCheck;
  issueNumber: number;
  issueUrl: string;
  /** Where the reproduction was confirmed (the issue's RepGen comment). */
  evidenceUrl: string;
  /** Literal secrets (the installation token) redacted from everything. */
  secrets: readonly string[];
  /** The plain regression test to add once fixed (see build-repro-test), shown in the text. */
  regressionTest?: { path: string; content: string; note: string };
}

export interface FixCheckReport {
  conclusion: CheckConclusion;
  title: string;
  summary: string;
  text: string;
}

/** GitHub's limit for each of a check run's summary and text. */
const CHECK_OUTPUT_LIMIT = 65_535;

export function buildFixCheckReport(input: FixCheckReportInput): FixCheckReport {
  const { check, issueNumber } = input;
  const at = check.sha ? check.sha.slice(0, 12) : check.ref;
  const title =
    check.verdict === 'fixed'
      ? `Fixed: the reproduction of #${issueNumber} passes at ${at}`
      : check.verdict === 'still_reproduces'
        ? `Still failing: the bug of #${issueNumber} still shows at ${at}`
        : `Inconclusive: RepGen cannot tell whether #${issueNumber} is fixed at ${at}`;
  const rows = check.runs.map(
    (r) =>
      `| ${r.seed} | ${r.outcome.replace('_', ' ')} | ${r.timedOut ? 'timed out' : (r.exitCode ?? r.signal ?? '—')} | ${tableCell(r.observed, 200)} |`,
  );
  const summary = [
    `RepGen re-ran the confirmed reproduction of ${input.issueUrl} against this pull request's head (${at}). ${neutralizeMentions(check.reason)}.`,
    '',
    'A reproduction exits non-zero while the bug is there and 0 once it is fixed.',
    ...oracleLines(check, at),
    ...(rows.length ? ['', '| seed | run | exit | what it showed |', '|---|---|---|---|', ...rows] : []),
    '',
    `The reproduction and its evidence: ${input.evidenceUrl}`,
  ].join('\n');
  const first = check.runs[0];
  const sections: string[] = [];
  if (first) {
    const output = first.outputExcerpt || '(no output)';
    const fence = fenceFor(output);
    sections.push(`### Output of the run with seed ${first.seed}`, '', `${fence}text`, output, fence);
  }
  if (input.regressionTest) {
    const fence = fenceFor(input.regressionTest.content);
    sections.push(
      '',
      `### Regression test: \`${input.regressionTest.path}\``,
      '',
      neutralizeMentions(input.regressionTest.note),
      '',
      `${fence}python`,
      input.regressionTest.content,
      fence,
    );
  }
  return {
    conclusion: FIX_CONCLUSION[check.verdict],
    title: title.slice(0, 250),
    summary: clip(redactSecrets(summary, input.secrets)),
    text: clip(redactSecrets(sections.join('\n'), input.secrets)),
  };
}

function clip(text: string): string {
  return text.length > CHECK_OUTPUT_LIMIT ? `${text.slice(0, CHECK_OUTPUT_LIMIT - 40)}\n\n_(truncated)_` : text;
}

/** A behavioural reproduction's oracle at both refs: the assertion, its expected value, and what it saw at each (issue 28). */
function oracleLines(check: FixCheck, at: string): string[] {
  const o = check.oracle;
  if (!o) return [];
  const code = (t: string): string => `\`${tableCell(t.replace(/`/g, "'"), 200)}\``;
  const here = o.heldAtFix ? `held${o.atFix ? `: ${code(o.atFix)}` : ''}` : `fails${o.atFix ? `: ${code(o.atFix)}` : ''}`;
  return [
    '',
    `The report's expectation, as the reproduction asserts it: ${code(o.assertion)} — expected ${code(o.expected)} ` +
      `(from the report: “${tableCell(neutralizeMentions(o.quote), 300)}”${o.reportObserved ? `; the report saw ${code(o.reportObserved)}` : ''}).`,
    '',
    '| where | the assertion |',
    '|---|---|',
    `| where it was reproduced | ${o.atBuggy ? `fails: ${code(o.atBuggy)}` : 'fails'} |`,
    `| this head (${at}) | ${here} |`,
  ];
}
