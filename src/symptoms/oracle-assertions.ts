import { logicalLines, splitMinus, splitTop, unwrap, type Line } from './python-lines.js';

/**
 * The assertions of a reproduction script that can state a report's expectation (issue 28): `assert x == 4`,
 * `assert abs(upper - 1.2) < 1e-6, f"…"`, `assert len(f) == 4`, `torch.testing.assert_close(a, b)`,
 * `if x != 4: raise AssertionError(…)`, "should have raised" (`with pytest.raises(E)`, `try … except E … else:
 * raise AssertionError`, a flag set in `except E` and asserted) and "should warn" (`pytest.warns`, an assert on a
 * `warnings.catch_warnings(record=True)` list). Read from the text by a small Python line reader, no parser
 * dependency. Pure.
 */

export type OracleForm = 'compare' | 'raises' | 'warns';

export interface OracleAssertion {
  form: OracleForm;
  /** First and last script line (1-based) of the statement or block: a failure on any of them is this assertion's. */
  start: number;
  end: number;
  /** The statement as written, on one line (comments dropped). */
  text: string;
  /** The expression whose value is checked (`len(f)`, `upper`); for raises/warns, the block's first call. */
  actual: string;
  /** The literal the assertion holds the value to, as written or as a name assigned it resolves to; the class for raises/warns. */
  expected: string;
  /** The comparison (`==`, `<`, `isclose`…), for compare forms. */
  op?: string;
  /** The assertion's message expression (`f"upper is {upper}"`), when it has one. */
  message?: string;
  /** A raises/warns oracle that accepts either an exception or a warning (`assert raised or len(w) > 0`). */
  either?: boolean;
}

const NUMBER = String.raw`[-+]?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?`;
const SCALAR = new RegExp(String.raw`^(?:${NUMBER}|True|False|None|[rbuf]?"(?:[^"\\]|\\.)*"|[rbuf]?'(?:[^'\\]|\\.)*')$`, 'i');
const WRAPPER =
  /^(?:torch\.(?:tensor|Tensor|as_tensor)|np\.(?:array|asarray)|numpy\.(?:array|asarray)|(?:pytest\.)?approx|float|int|tuple|list)\((.*)\)$/s;

/** The literal a side of a comparison is (a number, a tuple or list of them, a string, a wrapped literal), else null. */
export function literalOf(expr: string): string | null {
  const t = unwrap(expr);
  if (SCALAR.test(t)) return t;
  const w = WRAPPER.exec(t);
  if (w?.[1] !== undefined) {
    const args = splitTop(w[1], ',');
    return args[0] && literalOf(args[0]) !== null ? t : null;
  }
  if (/^[[(]/.test(t) && /[\])]$/.test(t)) {
    const items = splitTop(t.slice(1, -1), ',').filter((x) => x !== '');
    return items.length > 0 && items.every((x) => literalOf(x) !== null) ? t : null;
  }
  return null;
}

/** Names assigned a literal before `line` (`expected = (0.5, 1.2)`), the last assignment winning. */
function literalNames(lines: readonly Line[], before: number): Map<string, string> {
  const names = new Map<string, string>();
  for (const l of lines) {
    if (l.start >= before) break;
    const m = /^([A-Za-z_]\w*)\s*=\s*(?!=)(.+)$/.exec(l.text);
    if (!m?.[1] || m[2] === undefined) continue;
    const lit = literalOf(m[2]);
    if (lit !== null) names.set(m[1], lit);
    else names.delete(m[1]);
  }
  return names;
}

const COMPARE_OPS = ['==', '!=', '<=', '>=', ' is not ', ' is ', ' not in ', ' in ', '<', '>'];
const CLOSE_CALLS = new RegExp(
  String.raw`^(?:math\.isclose|torch\.(?:allclose|isclose|equal)|(?:np|numpy)\.(?:allclose|isclose|array_equal))` +
    String.raw`\((.*)\)(?:\.all\(\)|\.item\(\))?$`,
  's',
);
const TEST_CALLS = new RegExp(
  String.raw`^(?:(?:torch|np|numpy)\.testing\.assert_\w+|self\.assert(?:Equal|AlmostEqual|Greater|Less|GreaterEqual|LessEqual)` +
    String.raw`|assert_(?:close|allclose|equal|array_equal|almost_equal))\((.*)\)$`,
  's',
);

interface Compared {
  actual: string;
  expected: string;
  op: string;
}

/** A condition that compares a value with a literal (or a name holding one), oriented actual ↔ expected; else null. */
function comparison(cond: string, names: Map<string, string>): Compared | null {
  const c = unwrap(cond);
  const resolve = (side: string): string | null => literalOf(side) ?? names.get(unwrap(side)) ?? null;
  const orient = (a: string, b: string, op: string): Compared | null => {
    // A literal written in the assertion is the expected side; a name holding a literal only when the other side is no literal.
    const da = literalOf(a);
    const db = literalOf(b);
    if (db !== null && da === null) return { actual: unwrap(a), expected: db, op };
    if (da !== null && db === null) return { actual: unwrap(b), expected: da, op };
    if (da !== null || db !== null) return null;
    const la = resolve(a);
    const lb = resolve(b);
    if (lb !== null && la === null) return { actual: unwrap(a), expected: lb, op };
    if (la !== null && lb === null) return { actual: unwrap(b), expected: la, op };
    return null;
  };
  const close = CLOSE_CALLS.exec(c) ?? TEST_CALLS.exec(c);
  if (close?.[1] !== undefined) {
    const [a, b] = splitTop(close[1], ',');
    return a !== undefined && b !== undefined ? orient(a, b.replace(/^\w+\s*=\s*/, ''), 'isclose') : null;
  }
  for (const op of COMPARE_OPS) {
    const parts = splitTop(c, op);
    if (parts.length !== 2) continue;
    const [left = '', right = ''] = parts;
    // `abs(a - 1.2) < 1e-6`: the tolerance is not the expectation, the literal inside the difference is.
    const diff =
      /^(?:abs|torch\.abs|np\.abs|math\.fabs)\((.*)\)(?:\.\w+\(\))*$/s.exec(unwrap(left)) ??
      /^\((.*)\)\.abs\(\)(?:\.\w+\(\))*$/s.exec(unwrap(left));
    if (diff?.[1] !== undefined && (op === '<' || op === '<=')) {
      const terms = splitMinus(diff[1]);
      if (terms.length === 2 && terms[0] !== undefined && terms[1] !== undefined) return orient(terms[0], terms[1], 'isclose');
    }
    if (op === '!=' || op === ' is not ') return orient(left, right, op.trim());
    return orient(left, right, op.trim());
  }
  return null;
}

/** The message of `raise AssertionError(msg)`, or '' when it has none; null when the line is no such raise. */
function raisedAssertion(text: string): string | null {
  const m = /^raise\s+AssertionError\b(?:\((.*)\))?\s*$/s.exec(text);
  if (!m) return /^assert\s+(?:False|0)\b/.test(text) ? (splitTop(text.replace(/^assert\s+/, ''), ',')[1] ?? '') : null;
  return m[1] ?? '';
}

/** Negates a condition written for `if … : raise AssertionError` into the condition that must hold. */
function negate(cond: string): string | null {
  const c = unwrap(cond);
  if (/^not\s+/.test(c)) return c.replace(/^not\s+/, '');
  for (const [from, to] of [
    ['!=', '=='],
    ['==', '!='],
    [' is not ', ' is '],
    ['>=', '<'],
    ['<=', '>'],
    ['>', '<='],
    ['<', '>='],
  ] as const) {
    const parts = splitTop(c, from);
    if (parts.length === 2) return `${parts[0]} ${to.trim()} ${parts[1]}`;
  }
  return null;
}

/** The block of statements under `lines[i]` (deeper indent), as indexes. */
function blockAfter(lines: readonly Line[], i: number): number[] {
  const head = lines[i];
  const out: number[] = [];
  if (!head) return out;
  for (let k = i + 1; k < lines.length && (lines[k]?.indent ?? 0) > head.indent; k += 1) out.push(k);
  return out;
}

function firstCall(lines: readonly Line[], idx: readonly number[]): string {
  for (const k of idx) {
    const t = lines[k]?.text ?? '';
    if (/\w\s*\(/.test(t) && !/^(?:raise|assert|print)\b/.test(t)) return t.slice(0, 200);
  }
  return '';
}

const RAISES_CM = /^with\s+(?:pytest\.)?(?:raises|warns)\s*\(\s*([\w.]+)|^with\s+self\.assert(?:Raises|Warns)\s*\(\s*([\w.]+)/;

/** Raises/warns oracles: context managers, try/except/else, an except flag asserted later, catch_warnings records. */
function blockOracles(lines: readonly Line[]): OracleAssertion[] {
  const out: OracleAssertion[] = [];
  const flags = new Map<string, string>();
  const records = new Set<string>();
  for (let i = 0; i < lines.length; i += 1) {
    const l = lines[i] as Line;
    const cm = RAISES_CM.exec(l.text);
    if (cm) {
      const body = blockAfter(lines, i);
      const end = lines[body.at(-1) ?? i]?.end ?? l.end;
      const form: OracleForm = /warns|Warns/.test(l.text) ? 'warns' : 'raises';
      out.push({
        form,
        start: l.start,
        end,
        text: l.text.replace(/:\s*$/, ''),
        actual: firstCall(lines, body),
        expected: cm[1] ?? cm[2] ?? '',
      });
      continue;
    }
    const rec = /^with\s+warnings\.catch_warnings\s*\(\s*record\s*=\s*True\s*\)\s+as\s+(\w+)/.exec(l.text);
    if (rec?.[1]) records.add(rec[1]);
    if (l.text !== 'try:') continue;
    const tryBody = blockAfter(lines, i);
    let k = (tryBody.at(-1) ?? i) + 1;
    const handlers: { cls: string; body: number[] }[] = [];
    let elseBody: number[] = [];
    while (k < lines.length && lines[k]?.indent === l.indent) {
      const t = lines[k]?.text ?? '';
      const ex = /^except\s*\(?\s*([\w.]+)?/.exec(t);
      if (ex) handlers.push({ cls: ex[1] ?? 'Exception', body: blockAfter(lines, k) });
      else if (t === 'else:') elseBody = blockAfter(lines, k);
      else if (t !== 'finally:') break;
      const body = blockAfter(lines, k);
      k = (body.at(-1) ?? k) + 1;
    }
    const cls = handlers[0]?.cls;
    if (!cls) continue;
    const actual = firstCall(lines, tryBody);
    const failing = [...tryBody.slice(1), ...elseBody].find((j) => raisedAssertion(lines[j]?.text ?? '') !== null);
    if (failing !== undefined) {
      const f = lines[failing] as Line;
      out.push({ form: 'raises', start: l.start, end: f.end, text: f.text, actual, expected: cls, message: raisedAssertion(f.text) ?? '' });
    }
    for (const h of handlers)
      for (const j of h.body) {
        const set = /^(\w+)\s*=\s*True$/.exec(lines[j]?.text ?? '');
        if (set?.[1]) flags.set(set[1], h.cls);
      }
  }
  // `assert raised, "…"` after `except ValueError: raised = True`; `assert len(w) > 0` on a catch_warnings record.
  for (const l of lines) {
    const m = /^assert\s+(.*)$/s.exec(l.text);
    if (!m?.[1]) continue;
    const [cond = '', message] = splitTop(m[1], ',');
    const flag = flags.get(unwrap(cond));
    // `assert raised or len(w) > 0`: an exception or a warning, as "fail or at least warn" asks.
    const parts = splitTop(unwrap(cond), ' or ').map(unwrap);
    const eitherFlag = parts.map((p) => flags.get(p)).find((f) => f !== undefined);
    const eitherRecord = parts.some((p) => [...records].some((r) => new RegExp(`\\b${r}\\b`).test(p)));
    const either = parts.length > 1 && eitherFlag !== undefined && eitherRecord;
    const expected = either ? eitherFlag : flag;
    if (expected)
      out.push({
        form: 'raises',
        start: l.start,
        end: l.end,
        text: l.text,
        actual: unwrap(cond),
        expected,
        ...(either ? { either: true } : {}),
        ...(message ? { message } : {}),
      });
    else if ([...records].some((r) => new RegExp(`\\b${r}\\b`).test(cond)))
      out.push({
        form: 'warns',
        start: l.start,
        end: l.end,
        text: l.text,
        actual: unwrap(cond),
        expected: 'Warning',
        ...(message ? { message } : {}),
      });
  }
  return out;
}

/** Every assertion of the script that compares a value with a literal, or checks a raise or a warning. Pure. */
export function oracleAssertions(script: string): OracleAssertion[] {
  const lines = logicalLines(script);
  const out = blockOracles(lines);
  const taken = (n: number) => out.some((o) => n >= o.start && n <= o.end && o.form !== 'compare');
  for (let i = 0; i < lines.length; i += 1) {
    const l = lines[i] as Line;
    if (taken(l.start)) continue;
    let cond: string | null = null;
    let message: string | undefined;
    let end = l.end;
    const a = /^assert\s+(.*)$/s.exec(l.text);
    if (a?.[1]) {
      const [c = '', m] = splitTop(a[1], ',');
      cond = c;
      message = m;
    } else if (TEST_CALLS.test(l.text)) cond = l.text;
    else {
      // `if x != 4: raise AssertionError(…)`, on one line or with the raise as the block's only statement.
      const f = /^if\s+(.*?):\s*(.*)$/s.exec(l.text);
      if (f?.[1]) {
        const body = f[2] ? [f[2]] : blockAfter(lines, i).map((k) => lines[k]?.text ?? '');
        const raised = body.length === 1 ? raisedAssertion(body[0] ?? '') : null;
        if (raised !== null) {
          cond = negate(f[1]);
          message = raised || undefined;
          if (!f[2]) end = lines[i + 1]?.end ?? end;
        }
      }
    }
    if (!cond) continue;
    const cmp = comparison(cond, literalNames(lines, l.start));
    if (!cmp) continue;
    out.push({
      form: 'compare',
      start: l.start,
      end,
      text: l.text,
      actual: cmp.actual,
      expected: cmp.expected,
      op: cmp.op,
      ...(message ? { message } : {}),
    });
  }
  return out.sort((x, y) => x.start - y.start);
}

/** Whether a script line (1-based) belongs to an oracle assertion. */
export function oracleAt(oracles: readonly OracleAssertion[], line: number): OracleAssertion | null {
  return oracles.find((o) => line >= o.start && line <= o.end) ?? null;
}

/** Whether the assertion's actual side is only a constant the script set itself (`upper = 1.1`), not a value it computed. */
export function actualIsConstant(script: string, oracle: OracleAssertion): boolean {
  if (literalOf(oracle.actual) !== null) return true;
  const lines = logicalLines(script);
  const names = literalNames(lines, oracle.start);
  return names.has(oracle.actual);
}
