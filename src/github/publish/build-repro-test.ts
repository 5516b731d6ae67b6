import type { OracleValues } from '../../symptoms/types.js';

/**
 * The regression test `/repgen pr` proposes: pytest, `xfail(strict=True)` while the bug exists, so the
 * test suite turns red the day the bug is fixed and someone removes the marker on purpose. Pure.
 *
 * The correct behaviour it asserts: the reproduction script runs to completion (exit 0) and its output
 * no longer shows the symptom that was reproduced (`markers`, e.g. the exception line). For a behavioural bug
 * that behaviour is the script's assertion of the report's expectation (`oracle`): the test names it and fails with it.
 */
export interface ReproTestInput {
  issueNumber: number;
  issueUrl: string;
  script: string;
  /** Output text that shows the bug (exception `Type: message` lines); absent from a fixed run. */
  markers: readonly string[];
  /** Seconds before the test gives up on the script. @defaultValue 600 */
  timeoutS?: number;
  /**
   * The fix is verified (`fixedBy` names it): a plain test that guards against a regression, no xfail marker.
   * @defaultValue undefined (xfail(strict=True): the bug is still there)
   */
  fixedBy?: string;
  /**
   * A behavioural bug's oracle (issue 28): the script's assertion of the report's expectation. The test names it and
   * fails with it, so the xfail marker sits on that assertion. @defaultValue undefined (a crash: the markers decide)
   */
  oracle?: { assertion: string; expected: string; quote: string };
}

export function reproTestPath(issueNumber: number): string {
  return `tests/repro/test_issue_${issueNumber}.py`;
}

export function buildReproTest(input: ReproTestInput): string {
  // JSON string literals are valid Python string literals, and survive any quote or backslash in the script.
  const script = JSON.stringify(input.script);
  const markers = `[${input.markers.map((m) => JSON.stringify(m.slice(0, 300))).join(', ')}]`;
  const url = JSON.stringify(input.issueUrl);
  const doc = input.fixedBy
    ? `The script below reproduced the bug; RepGen ran it against ${input.fixedBy.replace(/"""|\\/g, '')} and it passed there.
The test passes while the bug stays fixed and fails if it comes back.`
    : `The script below reproduced the bug. While the bug exists the assertions fail and pytest reports XFAIL;
once it is fixed the test passes, strict xfail turns that into a failure, and the marker should be removed.`;
  const marker = input.fixedBy ? '' : `@pytest.mark.xfail(strict=True, reason="bug reported in " + ISSUE_URL)\n`;
  const oracle = input.oracle;
  // A docstring cannot hold a triple quote or a backslash escape of the untrusted text.
  const safe = (t: string, max: number): string =>
    t
      .replace(/"""|\\/g, '')
      .replace(/\s+/g, ' ')
      .trim()
      .slice(0, max);
  // The report's expectation as the script asserts it: named in the docstring, and the test's failure message.
  const oracleDoc = oracle
    ? `\nThe report's expectation, asserted by the script (expected ${safe(oracle.expected, 200)}, from the report: ` +
      `"${safe(oracle.quote, 300)}"):\n\n    ${safe(oracle.assertion, 400)}\n`
    : '';
  const oracleLine = oracle ? `ORACLE = ${JSON.stringify(oracle.assertion)}\n` : '';
  const exitCheck = oracle
    ? `assert result.returncode == 0, "the report's expectation fails: " + ORACLE + "\\n" + output[-4000:]`
    : 'assert result.returncode == 0, output[-4000:]';
  return `"""Regression test for ${input.issueUrl} (written by RepGen from its reproduction).

${doc}
${oracleDoc}"""
import subprocess
import sys
${input.fixedBy ? '' : '\nimport pytest\n'}
ISSUE_URL = ${url}
SCRIPT = ${script}
BUG_MARKERS = ${markers}
${oracleLine}

${marker}def test_issue_${input.issueNumber}(tmp_path):
    result = subprocess.run(
        [sys.executable, "-c", SCRIPT],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=${input.timeoutS ?? 600},
    )
    output = result.stdout + result.stderr
    ${exitCheck}
    for marker in BUG_MARKERS:
        assert marker not in output, marker
`;
}

/**
 * The oracle a reproduced outcome's test fails with: the behavioural run's assertion, when it was one that failed,
 * with what the run showed (kept for a later fix check to show beside the values at the fix).
 */
export function reproTestOracle(outcome: {
  match: { oracle?: OracleValues } | null;
}): (NonNullable<ReproTestInput['oracle']> & { reportObserved?: string; observed: string | null }) | undefined {
  const o = outcome.match?.oracle;
  if (!o || o.held) return undefined;
  return {
    assertion: o.assertion,
    expected: o.expected,
    quote: o.quote,
    ...(o.reportObserved ? { reportObserved: o.reportObserved } : {}),
    observed: o.observed,
  };
}
