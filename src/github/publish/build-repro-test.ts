/**
 * The regression test `/repgen pr` proposes: pytest, `xfail(strict=True)` while the bug exists, so the
 * test suite turns red the day the bug is fixed and someone removes the marker on purpose. Pure.
 *
 * The correct behaviour it asserts: the reproduction script runs to completion (exit 0) and its output
 * no longer shows the symptom that was reproduced (`markers`, e.g. the exception line).
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
  return `"""Regression test for ${input.issueUrl} (written by RepGen from its reproduction).

${doc}
"""
import subprocess
import sys
${input.fixedBy ? '' : '\nimport pytest\n'}
ISSUE_URL = ${url}
SCRIPT = ${script}
BUG_MARKERS = ${markers}


${marker}def test_issue_${input.issueNumber}(tmp_path):
    result = subprocess.run(
        [sys.executable, "-c", SCRIPT],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=${input.timeoutS ?? 600},
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-4000:]
    for marker in BUG_MARKERS:
        assert marker not in output, marker
`;
}
