import type { OracleAssertion } from './oracle-assertions.js';
import type { ReportReading } from './types.js';
import { clip } from './text.js';

/**
 * The oracle check of a behavioural reproduction (issue 28), by code: a script reproduces a report that states what
 * should happen (and shows no crash) with an assertion of that expectation, whose expected value comes from the
 * report's own words; an expectation the report never states is no oracle. Pure.
 */

type ReportExpectation = NonNullable<ReportReading['expectations']>[number];

/** Expectation kinds an assertion can state: a value, a printed value, "should raise", "should warn". */
const ORACLE_KINDS = new Set(['value', 'printed', 'raises', 'warns']);

/**
 * The expectations a behavioural reproduction asserts: those of a report that states what should happen and shows
 * no crash (no traceback, no exception but the reporter's own failing assert). Empty for a crash report.
 */
export function behaviouralExpectations(report: Pick<ReportReading, 'expectations' | 'tracebacks' | 'expected'>): ReportExpectation[] {
  if (!isBehavioural(report)) return [];
  return (report.expectations ?? []).filter((e) => ORACLE_KINDS.has(e.kind));
}

/** Kinds an assertion may cite though the prompt does not list them: the report's own sentences and quoted messages. */
const CITABLE_KINDS = new Set(['message', 'stated', 'should_work', 'no_error']);

function isBehavioural(report: Pick<ReportReading, 'tracebacks' | 'expected'>): boolean {
  if (report.tracebacks.length > 0) return false;
  return !report.expected.some((s) => s.exception && s.exception.type !== 'AssertionError');
}

/**
 * The report's sentences an assertion may cite besides its stated values (issue 40 item 4): what it quotes as the
 * message it got, and what it says in words should happen. An assertion that is the report's own sentence is backed.
 */
export function citableExpectations(report: Pick<ReportReading, 'expectations' | 'tracebacks' | 'expected'>): ReportExpectation[] {
  if (!isBehavioural(report)) return [];
  return (report.expectations ?? []).filter((e) => CITABLE_KINDS.has(e.kind));
}

/** Lower case, letters and digits only, single spaces. */
const normalised = (t: string): string =>
  ` ${t
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim()} `;

/** The text of a string literal (`'right side'` → right side), or null when the literal is no string. */
function stringOf(literal: string): string | null {
  const m = /^[rbuf]?(["'])(.*)\1$/s.exec(literal.trim());
  return m?.[2] !== undefined && /[A-Za-z]/.test(m[2]) ? m[2] : null;
}

/** A sentence accepts either mechanism: "fail or at least warn", "an error or a warning". */
const EITHER = /\bwarn/i;
const FAILS = /\b(?:fail|error|raise|throw|exception|reject)/i;

const NUM = /(?<![\w.])[-+]?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?(?![\w])/gi;

/** The numbers of a literal or a report's value (`torch.tensor([4.], dtype=…)` → 4; `(0.500, 1.200)` → 0.500, 1.200). */
export function valueNumbers(text: string): string[] {
  // Only a wrapper's first argument is the value: `dtype=torch.float32` holds no expected number.
  const wrapped = /^[\w.]+\((.*)\)$/s.exec(text.trim());
  let body = wrapped?.[1] ?? text;
  if (wrapped) {
    let depth = 0;
    for (let k = 0; k < body.length; k += 1) {
      const c = body[k] ?? '';
      if ('([{'.includes(c)) depth += 1;
      else if (')]}'.includes(c)) depth -= 1;
      else if (c === ',' && depth === 0) {
        body = body.slice(0, k);
        break;
      }
    }
  }
  return body.match(NUM) ?? [];
}

/** Whether a number the run printed is the report's, to the precision the report wrote it with (1.10 ↔ 1.1, 1.0999). */
export function sameNumber(report: string, run: string): boolean {
  const r = Number(report);
  const x = Number(run);
  if (!Number.isFinite(r) || !Number.isFinite(x)) return report === run;
  const decimals = /\.(\d+)/.exec(report.replace(/e.*$/i, ''))?.[1]?.length ?? 0;
  if (/e/i.test(report) || decimals === 0) return Math.abs(x - r) <= 1e-9 * Math.max(1, Math.abs(r));
  return Math.abs(x - r) <= 0.5 * 10 ** -decimals + 1e-12;
}

const exactNumber = (a: string, b: string): boolean => {
  const x = Number(a);
  const y = Number(b);
  return Number.isFinite(x) && Number.isFinite(y) ? Math.abs(x - y) <= 1e-9 * Math.max(1, Math.abs(x), Math.abs(y)) : a === b;
};

const WORD_VALUES = /^(?:True|False|None)$/i;

/** Whether an assertion's literal states the value `source` (all its numbers, or the same True/False/None/string). */
function states(literal: string, source: string): boolean {
  const nums = valueNumbers(literal);
  if (nums.length > 0) {
    const have = valueNumbers(source);
    return nums.every((n) => have.some((h) => exactNumber(n, h)));
  }
  const word = literal.trim().replace(/^(?:[rbuf]?)(["'])(.*)\1$/s, '$2');
  if (WORD_VALUES.test(word)) return new RegExp(`\\b${word}\\b`, 'i').test(source);
  return word.length >= 3 && source.toLowerCase().includes(word.toLowerCase());
}

export type OracleStatement =
  | {
      ok: true;
      expectation: ReportExpectation;
      reportObserved?: string;
      /** The sentence cited accepts more than the assertion does (a warning or an error; the assertion, one of them). */
      narrower?: string;
    }
  | { ok: false; reason: string };

function stated(e: ReportExpectation): string {
  const v = e.kind === 'printed' ? e.observed : e.expected;
  return `${v ?? e.kind} ("${clip(e.quote, 120)}")`;
}

/** Exception classes an expected one may be asserted as (`pytest.raises(Exception)` accepts any report class). */
const GENERIC_CLASSES = new Set(['Exception', 'BaseException', 'Warning', 'UserWarning']);

/**
 * Whether an assertion states one of the report's expectations: its expected value (every number of it) is one the
 * report gives as expected or shows printed, never only the value the reporter saw; a raise or warning assertion
 * needs a report that says it should raise or warn (of a compatible class). Pure.
 */
export function stateOracle(
  o: OracleAssertion,
  expectations: readonly ReportExpectation[],
  citable: readonly ReportExpectation[] = [],
): OracleStatement {
  const values = expectations.filter((e) => e.kind === 'value' || e.kind === 'printed');
  if (o.form === 'raises' || o.form === 'warns') {
    // "fail or at least warn": a sentence that accepts both backs either assertion.
    const want = [...expectations, ...citable.filter((e) => e.kind === 'stated')].filter(
      (e) =>
        e.kind === o.form ||
        (o.form === 'warns' && (e.kind === 'raises' || e.kind === 'stated') && EITHER.test(e.quote)) ||
        (o.form === 'raises' &&
          (e.kind === 'warns' || e.kind === 'stated') &&
          FAILS.test(e.quote) &&
          /\bshould|\bexpect|instead/i.test(e.quote)),
    );
    if (!want.length)
      return {
        ok: false,
        reason: `the script asserts that the call ${o.form === 'raises' ? 'raises' : 'warns'}, which the report never says it should`,
      };
    const cls = o.expected.split('.').pop() ?? o.expected;
    const named = want.find((e) => !e.expected || e.expected === cls || GENERIC_CLASSES.has(cls) || e.kind !== o.form);
    if (!named) return { ok: false, reason: `the script expects ${cls}; the report expects ${want.map((e) => e.expected).join(' or ')}` };
    const both = EITHER.test(named.quote) && FAILS.test(named.quote);
    const narrower =
      both && !o.either
        ? `\`${clip(o.text, 120)}\` accepts only ${o.form === 'warns' ? 'a warning' : 'an exception'}, but the sentence it cites ` +
          `accepts an exception or a warning ("${clip(named.quote, 160)}"): a fix may do the other. Assert either ` +
          `(catch the exception and record warnings, then \`assert raised or len(w) > 0\`)`
        : undefined;
    return { ok: true, expectation: named, ...(narrower ? { narrower } : {}) };
  }
  const text = stringOf(o.expected);
  if (o.op === '!=' || o.op === 'is not' || o.op === 'not in') {
    // The words the report says it got (the bug) must be gone: `assert "left side" not in str(e)` is its own sentence.
    const said = text
      ? [...expectations, ...citable].find((e) =>
          normalised(`${e.observed ?? ''} ${e.kind === 'message' ? e.quote : ''}`).includes(normalised(text)),
        )
      : undefined;
    if (said && normalised(text ?? '').trim().length >= 3) return { ok: true, expectation: said };
  }
  if (o.op === '!=' || o.op === 'is not' || o.op === 'not in')
    return {
      ok: false,
      reason: `\`${clip(o.text, 160)}\` says what ${o.actual} must not be; assert the value the report expects instead`,
    };
  const fromExpected = values.find((e) => e.kind === 'value' && e.expected !== undefined && states(o.expected, e.expected));
  if (fromExpected)
    return { ok: true, expectation: fromExpected, ...(fromExpected.observed ? { reportObserved: fromExpected.observed } : {}) };
  const seen = values.find((e) => e.kind === 'value' && e.observed !== undefined && states(o.expected, e.observed));
  if (seen)
    return {
      ok: false,
      reason: `\`${clip(o.text, 160)}\` holds ${o.actual} to ${o.expected}, the value the reporter saw (the bug), not the one they expected (${e2s(seen)})`,
    };
  const printed = values.find((e) => e.kind === 'printed' && e.observed !== undefined && states(o.expected, e.observed));
  if (printed) return { ok: true, expectation: printed };
  // The report's own sentence: a string the assertion expects that the report writes, or numbers of a sentence that
  // says what should happen in words ("the prediction is far from 110": an assertion near 110).
  const own = [...expectations, ...citable].find((e) =>
    text
      ? normalised(text).trim().length >= 3 && normalised(e.quote).includes(normalised(text))
      : e.kind === 'stated' && states(o.expected, e.quote),
  );
  if (own) return { ok: true, expectation: own };
  const offer = values.slice(0, 3).map(stated).join('; ');
  return {
    ok: false,
    reason:
      `\`${clip(o.text, 160)}\` holds ${o.actual} to ${o.expected}, which the report never states` +
      (offer ? ` (the report states: ${offer})` : ' (the report states no value to expect)'),
  };
}

function e2s(e: ReportExpectation): string {
  return `${e.expected ?? '?'} in "${clip(e.quote, 120)}"`;
}

/** Whether the run's output shows the value the report says it saw: each of its numbers, to the report's precision. */
export function showsObserved(reportObserved: string, output: string): boolean {
  const want = valueNumbers(reportObserved);
  if (!want.length) return output.toLowerCase().includes(reportObserved.trim().toLowerCase());
  const have = output.match(NUM) ?? [];
  return want.every((w) => have.some((h) => sameNumber(w, h)));
}

/** What the prompt shows the model as `{{oracle}}`: each expectation with its values and the report's words. Pure. */
export function renderOracle(expectations: readonly ReportExpectation[]): string {
  const lines = expectations.map((e) => {
    const words = `"${clip(e.quote, 200)}"`;
    switch (e.kind) {
      case 'value':
        return `- value${e.subject ? ` of ${e.subject}` : ''}: expected ${e.expected ?? 'not stated'}, observed ${e.observed ?? 'not stated'} — ${words}`;
      case 'printed':
        return `- printed by the report's code: ${e.observed ?? ''} — ${words}`;
      case 'raises':
        return `- should raise${e.expected ? ` ${e.expected}` : ''} — ${words}`;
      case 'stated':
        return `- in the report's words — ${words}`;
      case 'should_work':
        return `- should run without raising — ${words}`;
      case 'message':
        return `- the message it got — ${words}`;
      default:
        return `- should warn — ${words}`;
    }
  });
  return lines.join('\n');
}

/** The report's expectations for the prompt's `{{oracle}}`, or why there are none to assert. */
export function oracleSection(reading: ReportReading): string {
  const exps = behaviouralExpectations(reading);
  if (exps.length) return renderOracle(exps);
  // A reported Python warning is the symptom (read-report.ts): it shows as an exception once made an error.
  const warned = reading.expected.find((s) => s.exception && /Warning$/.test(s.exception.type));
  if (warned?.exception)
    return (
      `(none to assert: the report shows a warning, ${warned.exception.type}; reproduce it raised: make only that warning an ` +
      `error before the call, \`warnings.filterwarnings("error", message="<the start of its message>", ` +
      `category=${warned.exception.type})\`, so the library's own warning raises it and other warnings stay warnings)`
    );
  // The report's sentences read only so that an assertion may cite them (`stated`) are no expectation of a crash report.
  return (reading.expectations ?? []).some((e) => e.kind !== 'stated')
    ? '(none to assert: the report shows a crash; reproduce that crash)'
    : '(none stated in the report)';
}
