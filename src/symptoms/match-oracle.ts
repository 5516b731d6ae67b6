import { actualIsConstant, oracleAssertions, oracleAt, type OracleAssertion } from './oracle-assertions.js';
import { behaviouralExpectations, citableExpectations, renderOracle, showsObserved, stateOracle } from './check-oracle.js';
import type { MatchVerdict, OracleValues, ReportReading, RunReading } from './types.js';
import { clip, screenLines } from './text.js';

/**
 * A behavioural bug judged by its oracle (issue 28): the run of a script whose assertion states the report's
 * expectation. A failing assertion of the report's expected value, with the actual value printed (and the value the
 * report saw, where it says), is the reproduction; an assertion that holds is the expected behaviour (as at a fix);
 * a failing assertion of a value the report never states is refused, saying so. Pure.
 */
export interface OracleMatch {
  verdict: MatchVerdict;
  score: number;
  reasons: string[];
  oracle?: OracleValues;
}

/** Exceptions an assertion ends a run with: Python's, and pytest's `Failed` (DID NOT RAISE / DID NOT WARN). */
const ASSERTION_TYPES = new Set(['AssertionError', 'Failed']);

/** The script's line the run failed at: the innermost frame of the script (repro.py) in the traceback. */
function failedLine(reading: RunReading, scriptFile: string): number | null {
  const frames = reading.traceback?.frames ?? [];
  const own = frames.filter((f) => f.file === scriptFile || f.file.endsWith(`/${scriptFile}`));
  return own.at(-1)?.line ?? null;
}

/** Output lines printed before the traceback, less warnings and their source echo: what the script printed. */
function printedLines(output: string): string[] {
  const at = output.indexOf('Traceback (most recent call last)');
  const head = at >= 0 ? output.slice(0, at) : output;
  return screenLines(head)
    .map((l) => l.trimEnd())
    .filter((l) => l.trim() !== '' && !/\w*Warning: /.test(l) && !/^\s+warnings\.warn\(/.test(l) && !/^\s/.test(l));
}

const norm = (s: string): string => s.replace(/\s+/g, '');

/** Whether the script prints the assertion's actual value (a `print(` of its root name) before asserting it. */
function printsActual(script: string, o: OracleAssertion): boolean {
  const root = /^[A-Za-z_]\w*/.exec(o.actual.replace(/^(?:len|abs|float|int|tuple|list|str)\(/, ''))?.[0];
  if (!root) return false;
  const before = script.split('\n').slice(0, o.start - 1);
  return before.some((l) => /^\s*print\(/.test(l) && new RegExp(`\\b${root}\\b`).test(l));
}

function values(
  o: OracleAssertion,
  quote: string,
  reportObserved: string | undefined,
  observed: string | null,
  held: boolean,
): OracleValues {
  return {
    form: o.form,
    assertion: clip(o.text, 400),
    line: o.start,
    expected: clip(o.expected, 200),
    quote: clip(quote, 400),
    ...(reportObserved ? { reportObserved: clip(reportObserved, 200) } : {}),
    observed: observed === null ? null : clip(observed, 400),
    held,
  };
}

/** What to tell a script that did not assert the report's expectation, naming it. */
export function oracleHint(report: ReportReading): string | null {
  const exps = behaviouralExpectations(report);
  if (!exps.length) return null;
  return (
    `The report states what should happen and shows no crash: assert it, with the expected value from the report and a ` +
    `message that prints the actual value, so the script fails while the bug is there. The report's expectations:\n${renderOracle(exps)}`
  );
}

/**
 * Judges a run by the script's oracle, or returns null when the oracle does not decide (a crash report, a run that
 * crashed some other way, a script that asserts nothing of the report and exits 0): the pattern matcher then does.
 */
export function matchOracle(
  report: ReportReading,
  reading: RunReading,
  input: { script: string; output: string; scriptFile?: string; againstProject?: boolean },
): OracleMatch | null {
  const exps = behaviouralExpectations(report);
  const citable = citableExpectations(report);
  if (!exps.length && !citable.length) return null;
  const oracles = oracleAssertions(input.script);
  const reportCode = new Set(report.codeBlocks.flatMap((b) => b.code.split('\n').map((l) => norm(l.replace(/#.*$/, '')))));
  const own = (o: OracleAssertion): boolean => reportCode.has(norm(o.text));
  const exception = reading.exception;
  const line = failedLine(reading, input.scriptFile ?? 'repro.py');
  const printed = printedLines(input.output);
  if (exception && ASSERTION_TYPES.has(exception.type) && line !== null) {
    const o = oracleAt(oracles, line);
    // Against the project a script that prints the reported line must then fail (run-candidate.ts); where the report
    // states no value to assert, an assertion with none is that failure, and the printed line decides (matchPattern).
    if (!o && input.againstProject && !exps.length && report.expected.some((e) => e.kind === 'wrong_values' && !e.exception)) return null;
    if (!o) {
      return {
        verdict: 'not_reproduced',
        score: 0,
        reasons: [
          `the run failed at an assertion (line ${line}) that states no value the report gives; ${oracleHint(report) ?? ''}`.trim(),
        ],
      };
    }
    const st = stateOracle(o, exps, citable);
    if (!st.ok)
      return { verdict: 'not_reproduced', score: 0, reasons: [`the run failed at an assertion the report does not back: ${st.reason}`] };
    if (o.form === 'compare' && actualIsConstant(input.script, o))
      return {
        verdict: 'not_reproduced',
        score: 0,
        reasons: [`\`${clip(o.text, 160)}\` checks a constant the script sets itself, not a value the code computes`],
      };
    const message = exception.message.split('\n')[0]?.trim() ?? '';
    const observed = message || printed.at(-1) || null;
    const reportObserved = st.ok ? st.reportObserved : undefined;
    const oracle = values(o, st.expectation.quote, reportObserved, observed, false);
    const head =
      `the report's expectation fails as reported: \`${clip(o.text, 160)}\` ` +
      `(expected ${o.expected}, from the report: "${clip(st.expectation.quote, 160)}")`;
    if (st.narrower)
      return { verdict: 'partial', score: 0.7, reasons: [head, `but it is narrower than the report: ${st.narrower}`], oracle };
    const showsValue = o.form !== 'compare' || message !== '' || (printsActual(input.script, o) && printed.length > 0) || own(o);
    if (!showsValue)
      return {
        verdict: 'partial',
        score: 0.6,
        reasons: [
          head,
          `but the run never prints the actual value of ${o.actual}: give the assertion a message that prints it ` +
            `(\`assert …, f"${o.actual} is {…}, the report expects ${o.expected}"\`)`,
        ],
        oracle,
      };
    if (reportObserved && !showsObserved(reportObserved, input.output))
      return {
        verdict: 'partial',
        score: 0.6,
        reasons: [head, `but the run shows ${observed ? `"${clip(observed, 120)}"` : 'no value'}, where the report saw ${reportObserved}`],
        oracle,
      };
    const saw = reportObserved
      ? `; the run shows ${reportObserved}, as the report saw`
      : observed
        ? `; the run shows: ${clip(observed, 160)}`
        : '';
    const note = own(o) && o.form === 'compare' && !message ? " (the report's own assertion, which prints no value)" : '';
    return { verdict: 'reproduced', score: 0.95, reasons: [`${head}${saw}${note}`], oracle };
  }
  if (exception) return null;
  // No failure: an assertion of the report's expectation that held shows the expected behaviour (as at a fix).
  const held = oracles.map((o) => ({ o, st: stateOracle(o, exps, citable) })).find((x) => x.st.ok);
  if (!held || !held.st.ok) return null;
  const observed = printed.at(-1) ?? null;
  return {
    verdict: 'not_reproduced',
    score: 0,
    reasons: [
      `the report's expectation holds in this run: \`${clip(held.o.text, 160)}\` passed (expected ${held.o.expected}), ` +
        'so the run shows the expected behaviour, not the bug',
    ],
    oracle: values(held.o, held.st.expectation.quote, held.st.reportObserved, observed, true),
  };
}
