// A report that prints one value and says in words what it should be and what it is ("this should be 0.5 but it
// is 0"): the script asserts the report's expected value on what its last print shows, so it fails while the bug is
// there and passes once fixed (issue 28 item 2). The value and both numbers come from the report; nothing is guessed.
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
