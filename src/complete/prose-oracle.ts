// A report that prints one value and says in words what it should be and what it is ("this should be 0.5 but it
// is 0"): the script asserts the report's expected value on what its last print shows, so it fails while the bug is
// there and passes once fixed (issue 28 item 2). A report that says the call should raise ("should reject template
// with repeated axes") and shows no traceback: the script's last call must raise. The value, the class and the words
// come from the report; nothing is guessed.
import { readExpectations } from '../symptoms/read-expectations.js';
import { MARK } from './python-helpers.js';

const NUM = /^-?\d+(?:\.\d+)?(?:e-?\d+)?$/i;

/** The one expression a `print(...)` shows: its single argument, or the single `{…}` field of its f-string. */
function printedExpression(line: string): { expr: string; rewrite: (name: string) => string } | null {
  const m = /^print\((.*)\)\s*(?:#.*)?$/.exec(line.trim());
  if (!m?.[1]) return null;
  const arg = m[1].trim();
  const f = /^f(["'])(.*)\1$/.exec(arg);
  if (f) {
    const fields = [...(f[2] ?? '').matchAll(/\{([^{}]+)\}/g)];
    if (fields.length !== 1) return null;
    const field = fields[0]?.[1] ?? '';
    const [expr = '', ...spec] = field.split(/(?=[:!])/);
    if (!expr.trim() || /[,=]\s*$/.test(expr)) return null;
    return { expr: expr.trim(), rewrite: (name) => line.replace(`{${field}}`, `{${name}${spec.join('')}}`) };
  }
  if (/^["']|,/.test(arg) && !/^\(.*\)$/.test(arg)) return null;
  return { expr: arg, rewrite: (name) => line.replace(arg, name) };
}

/**
 * Asserts the report's stated value on what the snippet's last top-level print shows, when the report states
 * exactly one numeric value expectation with both its expected and its observed value. Pure.
 */
export function assertStatedValue(code: string, reportText: string | undefined): { code: string; edits: string[] } {
  if (!reportText || /Traceback \(most recent call last\)/.test(reportText)) return { code, edits: [] };
  const values = readExpectations(reportText).filter((e) => e.kind === 'value');
  const only = values.length === 1 ? values[0] : undefined;
  if (!only?.expected || !only.observed || !NUM.test(only.expected) || !NUM.test(only.observed) || only.expected === only.observed)
    return { code, edits: [] };
  const lines = code.split('\n');
  const at = lines.findLastIndex((l) => /^\S/.test(l) && !/^#/.test(l));
  const shown = at >= 0 ? printedExpression(lines[at] ?? '') : null;
  if (!shown || /repgen_/.test(shown.expr)) return { code, edits: [] };
  const quote = only.quote.replace(/["'{}\\]/g, '');
  lines.splice(
    at,
    1,
    `repgen_value = ${shown.expr}  ${MARK}`,
    shown.rewrite('repgen_value'),
    `assert abs(float(repgen_value) - ${only.expected}) < 1e-6, f"${shown.expr.replace(/["{}\\]/g, '')} is {float(repgen_value)}; ` +
      `the report expects ${only.expected} (${quote})"  ${MARK}`,
  );
  return {
    code: lines.join('\n'),
    edits: [`asserted the report's expected value ${only.expected} on what the last line prints ("${only.quote}")`],
  };
}

const BUILTIN_ERRORS =
  /^(?:ValueError|TypeError|RuntimeError|IndexError|KeyError|AssertionError|NotImplementedError|AttributeError|ZeroDivisionError)$/;

/**
 * Wraps the snippet's last top-level statement, a one-line call, so that the script fails unless it raises, when the
 * report has exactly one "should raise" expectation and no traceback (the call runs without error: that is the bug).
 * A builtin class the report names is the one caught; any other (`EinopsError`) is caught as Exception. Pure.
 */
export function assertStatedRaise(code: string, reportText: string | undefined): { code: string; edits: string[] } {
  if (!reportText || /Traceback \(most recent call last\)/.test(reportText)) return { code, edits: [] };
  const raises = readExpectations(reportText).filter((e) => e.kind === 'raises');
  const only = raises.length === 1 ? raises[0] : undefined;
  if (!only) return { code, edits: [] };
  const lines = code.split('\n');
  const top = (l: string) => /^\S/.test(l) && !/^#/.test(l);
  // The last call, or assignment of a call, at the top level; prints of its result after it move into the else branch.
  let at = lines.findLastIndex(top);
  const after: string[] = [];
  while (at >= 0 && /^print\(/.test(lines[at] ?? '') && depthAfter(lines[at] ?? '') === 0) {
    after.unshift((lines[at] ?? '').trimEnd());
    at = lines.slice(0, at).findLastIndex(top);
  }
  const stmt = (lines[at] ?? '').replace(/\s+#.*$/, '').trimEnd();
  const assigned = /^([A-Za-z_]\w*)\s*=\s*(?!=)(.+)$/.exec(stmt);
  const callText = assigned ? (assigned[2] ?? '') : stmt;
  // One line, balanced, a call at its top, not a keyword statement.
  if (at < 0 || depthAfter(stmt) !== 0 || !/^[A-Za-z_][\w.]*\(.*\)$/.test(callText) || /^(?:print|assert|raise|return)\b/.test(callText))
    return { code, edits: [] };
  const cls = only.expected && BUILTIN_ERRORS.test(only.expected) ? only.expected : 'Exception';
  const words = only.quote.replace(/["'{}\\]/g, '').slice(0, 160);
  const call = callText.replace(/["{}\\]/g, '').slice(0, 120);
  const name = assigned?.[1] ?? 'repgen_value';
  lines.splice(
    at,
    lines.length - at,
    `try:  ${MARK}`,
    `    ${name} = ${callText}`,
    `except ${cls}:  ${MARK}`,
    `    print("raised, as the report expects")  ${MARK}`,
    `else:  ${MARK}`,
    ...after.map((l) => `    ${l}`),
    `    raise AssertionError(f"${call} returned {${name}!r} without raising; the report expects it to raise (${words})")  ${MARK}`,
    '',
  );
  return {
    code: lines.join('\n'),
    edits: [`asserted that the last call raises, as the report says it should ("${only.quote.slice(0, 160)}")`],
  };
}

/** Bracket depth at the end of a line (negative once it closes more than it opens). */
function depthAfter(line: string): number {
  let d = 0;
  for (const c of line) {
    if ('([{'.includes(c)) d += 1;
    else if (')]}'.includes(c)) d -= 1;
    if (d < 0) return d;
  }
  return d;
}
