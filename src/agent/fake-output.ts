import type { ReportFacts } from '../report/types.js';
import { parseExceptionLine } from '../symptoms/parse-tracebacks.js';
import type { ExceptionInfo, ReportReading } from '../symptoms/types.js';
import { MAX_SCAN_LINE, screenLines } from '../symptoms/text.js';
import { HOLE, NUMBER, norm, scriptLiterals } from './script-literals.js';

/**
 * The fake-output check of tier 1: does a candidate script produce the report's output itself (prints or
 * raises a copy of the reported error, dumps a traceback, prints hard-coded metric values or tensors)
 * instead of letting the code under test produce it?
 *
 * It first splits the report into its CODE and its OUTPUT. Code: the Python blocks, the source lines a
 * traceback quotes under each `File "…", line N, in f` frame, and the `>>>`/`...` input lines of a pasted
 * console session. Output: every other pasted line. The earlier check compared script lines with the raw
 * pasted text, so a faithful script that called the model the way the report's traceback shows
 * (`output = model(image, landmarks)`) was rejected as a fake. Now only the script's STRING LITERALS
 * (joined across implicit and `+` concatenation, f-string and %-format placeholders kept as gaps) and
 * NUMERIC LITERALS are compared with the output, and a line the report's code already has is never a fake.
 * Pure: data in, data out.
 */

/** The report split into its code lines and its output lines. */
export interface ReportSides {
  /** Normalised code lines: Python blocks, traceback-quoted source lines, console input lines. */
  code: Set<string>;
  /** Pasted output lines that are not code (trimmed, non-empty). */
  output: string[];
}

const FRAME_LINE = /^\s*File "(.+?)", line \d+/;
const NOISE_LINE =
  /^\s*(Traceback \(most recent call last\):|During handling of the above exception|The above exception was the direct cause|[~^\s]+$|\.\.\.\s*$)/;

/** Which lines of the report are its code and which its output. Pure. */
export function reportSides(reading: ReportReading, facts: ReportFacts): ReportSides {
  const code = new Set<string>();
  const addCode = (l: string) => {
    const n = norm(l.replace(/#.*$/, ''));
    if (n.length) code.add(n);
    const whole = norm(l);
    if (whole.length) code.add(whole);
  };
  for (const block of facts.pythonBlocks) for (const l of block.split('\n')) addCode(l.replace(/^\s*(?:>>>|\.\.\.)\s?/, ''));
  for (const tb of reading.tracebacks) for (const f of tb.frames) if (f.code) addCode(f.code);
  for (const l of facts.tracebackModuleLines) addCode(l);
  const output: string[] = [];
  const lines = screenLines(reading.outputText);
  for (let k = 0; k < lines.length; k += 1) {
    const raw = lines[k] ?? '';
    if (raw.length > MAX_SCAN_LINE) continue;
    const l = raw.replace(/^\s*>\s?(?=\S)/, (m) => (/^\s*>>>/.test(raw) ? m : ''));
    if (!l.trim()) continue;
    const consoleInput = /^\s*(>>>|\.\.\.)\s/.exec(l);
    if (consoleInput) {
      addCode(l.slice(consoleInput[0].length));
      continue;
    }
    if (FRAME_LINE.test(l)) {
      // The next line of a frame quotes the source, unless it is itself a frame, an exception or blank.
      const next = lines[k + 1] ?? '';
      if (next.trim() && !FRAME_LINE.test(next) && !parseExceptionLine(next.trim()) && /^\s/.test(next)) {
        addCode(next);
        k += 1;
      }
      continue;
    }
    if (NOISE_LINE.test(l)) continue;
    if (code.has(norm(l))) continue;
    output.push(l.trim());
  }
  return { code, output };
}

/** Every exception the report shows: its expected symptoms, its tracebacks and their chains, its error lines. */
function reportedExceptions(reading: ReportReading): ExceptionInfo[] {
  const all: ExceptionInfo[] = [];
  for (const s of reading.expected) if (s.exception) all.push(s.exception);
  for (const t of reading.tracebacks) all.push(t.exception, ...(t.chain ?? []));
  for (const l of reading.errorLines) {
    const e = parseExceptionLine(l.trim());
    if (e) all.push(e);
  }
  const seen = new Set<string>();
  return all.filter((e) => {
    const key = `${e.type}\u0000${e.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/**
 * Whether the string template `t` (gaps as HOLE) writes `target`: its fixed parts appear in `target` in
 * order and cover at least `min` characters of it, or `t` holds the target's first 60 characters whole.
 */
function writes(t: string, target: string, min: number): boolean {
  const text = norm(t);
  const want = norm(target);
  if (!want) return false;
  if (!text.includes(HOLE))
    return (
      text.includes(want.slice(0, 60)) ||
      (want.length >= 16 && text.length >= min && want.includes(text) && text.length >= want.length * 0.6)
    );
  const parts = text
    .split(HOLE)
    .map((p) => p.trim())
    .filter((p) => p.length >= 3);
  let from = 0;
  let covered = 0;
  for (const p of parts) {
    const at = want.indexOf(p, from);
    if (at === -1) continue;
    covered += p.length;
    from = at + p.length;
  }
  return covered >= Math.max(min, want.length * 0.6);
}

/** Whether a template's fixed text (not its gaps) holds one of the line's numbers with a fraction or 2+ digits. */
function fixedValues(template: string, line: string): boolean {
  const fixed = norm(template).split(HOLE).join(' ');
  return [...line.matchAll(/(?<![\w.])\d+\.\d+|(?<![\w.])\d{2,}(?![\w.])/g)].some((m) =>
    new RegExp(`(?<![\\w.])${m[0].replace('.', '\\.')}(?![\\w.])`).test(fixed),
  );
}

/** Significant digits of a numeric literal as written ("92.100" → 5, "0.0010" → 2). */
function significantDigits(raw: string): number {
  const mantissa = raw.toLowerCase().split('e')[0] ?? '';
  const digits = mantissa.replace(/[^\d]/g, '').replace(/^0+/, '');
  return mantissa.includes('.') ? digits.length : digits.replace(/0+$/, '').length;
}

/** The reported values a script must not hard-code: numbers of the output with a fraction and 4+ significant digits. */
function reportedValues(output: string[]): { raw: string; value: number }[] {
  const out = new Map<string, number>();
  for (const l of output) {
    for (const m of l.matchAll(/(?<![\w.])-?\d+\.\d+(?:[eE][+-]?\d+)?(?![\w.])/g)) {
      if (significantDigits(m[0]) >= 4) out.set(m[0].replace(/^-/, ''), Number(m[0].replace(/^-/, '')));
    }
  }
  return [...out].map(([raw, value]) => ({ raw, value }));
}

/** A literal that writes a reported value: equal to it, or equal to it rounded to the literal's own precision. */
function sameValue(literal: string, reported: { raw: string; value: number }): boolean {
  const v = Number(literal);
  if (!Number.isFinite(v) || significantDigits(literal) < 4) return false;
  if (v === reported.value) return true;
  const decimals = (literal.split('.')[1] ?? '').replace(/e.*$/i, '').length;
  return decimals > 0 && (reported.raw.split('.')[1] ?? '').length > decimals && reported.value.toFixed(decimals) === v.toFixed(decimals);
}

/** Tensors and lists the output prints (`tensor([2, 0, 0, 0])`, `[2, 8, 9, 10]`): 3+ numbers, 2+ distinct. */
function reportedLists(output: string[]): string[][] {
  const lists: string[][] = [];
  for (const l of output) {
    for (const m of l.matchAll(/\[([-\d.,\s]+)\]/g)) {
      const items = (m[1] ?? '')
        .split(',')
        .map((x) => x.trim().replace(/\.$/, ''))
        .filter(Boolean);
      if (items.length >= 3 && new Set(items).size >= 2 && items.every((x) => /^-?\d+(\.\d+)?$/.test(x))) lists.push(items);
    }
  }
  return lists;
}

/** A line that checks a value rather than prints it: an assertion or a comparison. */
function isCheck(codeLine: string): boolean {
  return /^\s*assert\b|==|!=|<=|>=|(?<![-=])[<>](?!=)|\b(?:isclose|allclose|assert\w*|approx)\s*\(/.test(codeLine);
}

/**
 * The reasons a script fakes the report's output, empty when it does not. A line of the script that is
 * one of the report's code lines is never counted: the reporter's calls (and their strings) are the bug.
 */
export function fakeOutputReasons(script: string, reading: ReportReading, facts: ReportFacts): string[] {
  const sides = reportSides(reading, facts);
  const lit = scriptLiterals(script);
  const scriptLines = script.replace(/\r\n/g, '\n').split('\n');
  const isReportLine = (line: number): boolean =>
    sides.code.has(norm(scriptLines[line - 1] ?? '')) || sides.code.has(norm((scriptLines[line - 1] ?? '').replace(/#.*$/, '')));
  const strings = lit.strings.filter((s) => !s.statement && !s.compared && !isReportLine(s.line));
  const reportCode = [...sides.code].join('\n');
  const reasons: string[] = [];

  for (const e of reportedExceptions(reading)) {
    const message = (e.message.split('\n')[0] ?? '').trim();
    if (!message) continue;
    const full = `${e.type}: ${message}`;
    // A long message the reporter's own code writes may be written again; a short one is too common to exempt.
    const own = norm(message).length >= 16 && reportCode.includes(norm(message).slice(0, 60));
    const hit = own
      ? undefined
      : strings.find(
          (s) => (norm(message).length >= 16 && writes(s.text, message, 16)) || writes(s.text, full, Math.max(16, full.length * 0.8)),
        );
    if (hit) {
      const raiser = /^\s*raise\s+(?:[\w.]+\.)?(\w+)/.exec(
        scriptLines
          .slice(0, hit.line)
          .reverse()
          .find((l) => /\S/.test(l) && !/^\s*[fFrRbBuU]{0,2}["']/.test(l)) ?? '',
      );
      reasons.push(
        raiser
          ? `line ${hit.line}: the script raises ${raiser[1]} itself, with the reported message "${clipText(message)}"`
          : `line ${hit.line} writes the reported message "${clipText(message)}" itself`,
      );
      continue;
    }
    // Short messages (KeyError: 'fc') are only a fake when raised verbatim with the reported class.
    const raise = new RegExp(`^\\s*raise\\s+(?:[\\w.]+\\.)?${e.type.replace(/\W/g, '')}\\s*\\(`);
    const raised = strings.find(
      (s) =>
        raise.test(scriptLines[s.line - 1] ?? '') && norm(s.text).replace(/^['"]|['"]$/g, '') === norm(message).replace(/^['"]|['"]$/g, ''),
    );
    if (raised) reasons.push(`line ${raised.line} raises ${e.type}("${clipText(message)}") itself`);
  }

  const tb = strings.find((s) => /traceback \(most recent call last\)/.test(norm(s.text)));
  if (tb) reasons.push(`line ${tb.line} writes a traceback by hand`);

  // An output line written from a string: whole, or as a template whose fixed text carries its values.
  const outputLine = sides.output
    .filter((l) => {
      const n = norm(l);
      return (n.length >= 12 && /\d/.test(n)) || n.length >= 24;
    })
    .find((l) =>
      strings.some((s) => (s.text.includes(HOLE) ? writes(s.text, l, 12) && fixedValues(s.text, l) : norm(s.text).includes(norm(l)))),
    );
  if (outputLine) reasons.push(`the script prints the reported output line "${clipText(outputLine)}" from a string literal`);

  const values = reportedValues(sides.output);
  const hard = lit.numbers.find(
    (n) => !isReportLine(n.line) && !isCheck(lit.codeLines[n.line - 1] ?? '') && values.some((v) => sameValue(n.raw, v)),
  );
  if (hard) reasons.push(`line ${hard.line} hard-codes the reported value ${hard.raw} instead of computing it`);
  const inString = strings.find((s) => values.some((v) => [...s.text.matchAll(NUMBER)].some((m) => sameValue(m[0], v))));
  if (inString && !hard) reasons.push(`line ${inString.line} writes a reported value in a string instead of computing it`);

  const code = lit.codeLines;
  for (const items of reportedLists(sides.output)) {
    const re = new RegExp(`\\[\\s*${items.map((x) => x.replace(/[.-]/g, '\\$&') + '\\.?').join('\\s*,\\s*')}\\s*,?\\s*\\]`);
    const at = code.findIndex((c, k) => re.test(c) && !isReportLine(k + 1) && !isCheck(c));
    if (at !== -1) {
      reasons.push(`line ${at + 1} builds the reported output [${items.join(', ')}] by hand`);
      break;
    }
  }
  return [...new Set(reasons)];
}

function clipText(s: string): string {
  return s.length > 80 ? `${s.slice(0, 77)}…` : s;
}
