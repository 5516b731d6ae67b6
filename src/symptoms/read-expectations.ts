import { z } from 'zod';
import { MAX_SCAN_LINE, clip } from './text.js';
import type { Symptom } from './types.js';
import { classifyException } from './classify.js';

/**
 * Reads what a report says should happen and what happened instead, with no model (issue 28): value statements in
 * prose ("returns 3 features, expected 4", "shows 1.10 instead of 1.20", "lr_scale=1.0 instead of 0.0238"),
 * "should raise / should warn / runs without error" statements, error messages quoted without an exception class
 * (compiler and C++ messages, first lines cut short) and warning lines. Each expectation keeps the span of the report
 * it was read from, so a reproduction's oracle can be checked against the report's own words. Pure.
 */

/**
 * `should_work`: "should still be script-able", "should not raise" — the call must run (issue 40). `message`: a message
 * the report quotes as what it got (its `category` the class, when a code comment names one: `# KeyError`).
 * `stated`: a sentence that says what should happen, in words only: what an oracle may quote, never a symptom alone.
 */
export const ExpectationKind = z.enum(['value', 'raises', 'warns', 'no_error', 'message', 'warning', 'printed', 'should_work', 'stated']);
export type ExpectationKind = z.infer<typeof ExpectationKind>;

export const Expectation = z.object({
  kind: ExpectationKind,
  /** The report's words this was read from, verbatim. */
  quote: z.string(),
  /** What the value is of (`features`, `lr_scale`), when the report names it. */
  subject: z.string().optional(),
  /** The value or behaviour the reporter expected. */
  expected: z.string().optional(),
  /** The value or behaviour the reporter saw. */
  observed: z.string().optional(),
  /** A warning's class (`UserWarning`), when the line names one. */
  category: z.string().optional(),
});
export type Expectation = z.infer<typeof Expectation>;

const NUM = String.raw`-?\d+(?:\.\d+)?(?:e-?\d+)?`;
const VALUE = String.raw`(?:${NUM}|\([^()\n]{1,80}\)|\[[^[\]\n]{1,80}\]|True|False|None)`;
const VERB = String.raw`(?:returns?|returned|gives?|gave|shows?|showed|shown(?:\s+with)?|prints?|printed|outputs?|yields?|is|was|are|got|get|gets|has|have)`;
/** "returns 3 features, expected 4", "gives 3 but I expected 4". */
const VERB_EXPECTED = new RegExp(
  String.raw`\b${VERB}\s+(${VALUE})(?:\s+([A-Za-z_]\w*))?\s*[,;]?\s*(?:but|while|whereas)?\s*(?:I\s+|we\s+)?(?:expected|expecting|should\s+be)\s+(${VALUE})`,
  'gi',
);
/** "this should be 0.5 but it is 0", "expected 4 but got 3": the expected value first, then what was seen. */
const EXPECTED_BUT = new RegExp(
  String.raw`\b(?:should\s+(?:be|return|give)|expected(?:\s+(?:output|result|value))?(?:\s+is)?)\s*:?\s+(${VALUE})\s*[,;]?\s*` +
    String.raw`(?:but|while|whereas|however)\s+(?:it|this|that|I|we|the\s+result)?\s*(?:'s\s+|${VERB}\s+)(${VALUE})`,
  'gi',
);
/** "lr_scale=1.0 instead of 0.0238", "shows 1.10 instead of 1.20". */
const INSTEAD_OF = new RegExp(
  String.raw`(?:\b([A-Za-z_][\w.]*)\s*(?:=|:|is|of)\s*|\b${VERB}\s+)?(${VALUE})\s*,?\s+instead\s+of\s+` +
    String.raw`(?:the\s+expected\s+|the\s+)?(?:([A-Za-z_][\w.]*)\s*=\s*)?(${VALUE})`,
  'gi',
);
/** "expected (0.500, 1.200)", "expected output: 4", "should be 1.2". */
const EXPECTED_ALONE = new RegExp(
  String.raw`\b(?:expected(?:\s+(?:output|result|value))?|should\s+(?:be|return|give))\s*:?\s+(${VALUE})`,
  'gi',
);
const SHOULD_RAISE = new RegExp(
  [
    String.raw`\b(?:should|must|expected\s+(?:it\s+)?to|ought\s+to|would\s+expect\s+(?:it\s+)?to)\s+(?:have\s+)?` +
      String.raw`(?:raised?|throw[sn]?|error(?:ed)?\s+out|fail(?:ed)?|reject(?:ed)?)\b(?:\s+an?\s+([A-Z]\w*(?:Error|Exception)))?`,
    String.raw`\bexpected\s+an?\s+(?:error|exception|([A-Z]\w*(?:Error|Exception)))\b`,
  ].join('|'),
  'gi',
);
const SHOULD_WARN = new RegExp(
  [
    String.raw`\b(?:should|must|expected\s+(?:it\s+)?to)\s+(?:have\s+)?(?:warn(?:ed)?|emit(?:ted)?\s+a\s+warning|log(?:ged)?\s+a\s+warning)\b`,
    String.raw`\bat\s+least\s+a\s+warning\b`,
  ].join('|'),
  'gi',
);
const NO_ERROR = new RegExp(
  [
    String.raw`\b(?:runs?|ran|executes?|executed|works?|worked|completes?|completed|passes|passed)\s+(?:fine\s+|successfully\s+)?` +
      String.raw`(?:without|with\s+no)\s+(?:any\s+)?(?:errors?|exceptions?|warnings?|complaints?)\b`,
    String.raw`\bsilently\s+(?:ignored|dropped|accepted|ignores|drops|accepts)\b`,
    String.raw`\bno\s+(?:error|exception|warning)\s+(?:is\s+)?(?:raised|thrown|shown|emitted)\b`,
  ].join('|'),
  'gi',
);
/** The thing a "should work" sentence is about: its word, and the call that does it (a regex source over the script's code). */
const WORKS_CALLS: Array<[RegExp, string]> = [
  [/script-?able|jit-?able|torchscript/i, String.raw`jit\.script|\bscript\(`],
  [/traceable/i, String.raw`jit\.trace|\btrace\(`],
  [/exportable|convertible/i, String.raw`export|convert|onnx`],
  [/compilable/i, String.raw`\bcompile\(`],
  [/serializable|picklable/i, String.raw`\bsave\(|dump|pickle`],
];
const WORKS_WORD = String.raw`(?:(?:torch)?script-?able|jit-?able|exportable|traceable|compilable|convertible|serializable|picklable)`;
const SHOULD_WORK = new RegExp(
  [
    String.raw`\b(?:should|must|ought\s+to|(?:is\s+)?expected\s+to|would\s+expect\s+(?:it\s+|this\s+)?to)\s+(?:still\s+|also\s+|just\s+)?` +
      String.raw`(?:be\s+(?:still\s+)?(?:${WORKS_WORD}|supported)|work(?:s|ing)?\b|` +
      String.raw`run(?:\s+(?:fine|successfully|without\s+(?:any\s+)?(?:errors?|exceptions?|issues?|problems?)))|` +
      String.raw`succeed|not\s+(?:raise|throw|fail|error|crash)(?:\s+an?\s+(?:error|exception))?)`,
    String.raw`\bexpect(?:ed|ing)?\b[^.\n]{0,160}?\b(?:is|are|be|remains?|stays?)\s+(?:still\s+)?${WORKS_WORD}`,
  ].join('|'),
  'gi',
);
/**
 * "`ops.reshape(x, -1)` wasn't working on torch", "X doesn't work with Y", "stopped working", "is broken": the report
 * says in words that a call fails. The negative of "should work": read as one only when the report says nothing else
 * about what went wrong (no traceback, quoted message, value or printed output), see {@link notWorkingExpectations}.
 */
const NOT_WORKING = new RegExp(
  [
    String.raw`\b(?:does|did|is|was|are|were|wo)(?:n['’]t|\s+not)\s+(?:work(?:s|ing)?|run(?:ning)?)\b`,
    String.raw`\bno\s+longer\s+(?:works?|working|runs?|running)\b`,
    String.raw`\bstopped\s+(?:working|running)\b`,
    String.raw`\b(?:is|was|are|were|seems?)\s+(?:to\s+be\s+)?broken\b`,
  ].join('|'),
  'gi',
);
/** Python words that are no call a report names (`if (…)`, `print(…)` aside, a call's name is an identifier). */
const NOT_A_CALL = new Set(['if', 'for', 'while', 'with', 'return', 'and', 'or', 'not', 'in', 'is', 'print', 'e', 'i', 'eg', 'ie']);

/** The call a "doesn't work" sentence is about: the last `name(` before the phrase, else a backticked name; as a regex over a frame. */
function notWorkingCall(before: string): string | undefined {
  const calls = [...before.matchAll(/([A-Za-z_]\w*)\(/g)].map((m) => m[1] ?? '').filter((n) => !NOT_A_CALL.has(n.toLowerCase()));
  const named = calls.at(-1) ?? [...before.matchAll(/`(?:[A-Za-z_][\w]*\.)*([A-Za-z_]\w*)`/g)].map((m) => m[1] ?? '').at(-1);
  return named && named.length >= 2 ? String.raw`\b${named}\b` : undefined;
}

/**
 * "X doesn't work" sentences of a report's prose as `should_work` expectations (issue 40 item 2: a run that raises
 * inside the call the sentence names is the report's expectation failing); a sentence that names no call is none. The
 * caller reads them only when the report shows nothing else (src/symptoms/read-report.ts). Pure.
 */
export function notWorkingExpectations(prose: string): Expectation[] {
  const out: Expectation[] = [];
  for (const m of prose.slice(0, 200_000).matchAll(NOT_WORKING)) {
    const at = m.index ?? 0;
    const quote = sentenceAround(prose, at, m[0].length);
    const start = prose.lastIndexOf(quote.slice(0, 40), at);
    const call = notWorkingCall(prose.slice(start >= 0 ? start : Math.max(0, at - 400), at));
    // "It does not work well, please help" names nothing a run could be held to.
    if (call) add(out, { kind: 'should_work', quote, subject: call });
  }
  return out;
}

/** A sentence that states what should happen or what is wrong, in words: what an oracle may cite. */
const STATED =
  /\b(?:should(?:n't|\s+not)?|expect(?:ed|s|ing)?|supposed\s+to|instead\s+of|rather\s+than|actually|wrong(?:ly)?|incorrect(?:ly)?|but\s+it)\b/i;
/** Words that introduce what the reporter got: "gives", "breaks with", "this produces", "error:", "I get". */
const LEAD_IN = [
  String.raw`(?:gives?|gave|giving|breaks?\s+with|fails?\s+with|failed\s+with|errors?\s+(?:out\s+)?with|produces?|produced|throws?|raises?`,
  String.raw`|returns?\s+(?:the\s+)?(?:error|message)|(?:I|we)\s+(?:get|got|see|saw)|(?:I'm|I\s+am|we're)\s+getting`,
  String.raw`|error(?:\s+message)?\s*:|message\s*:|output\s*:|says?)`,
].join('');
/** A quote after a lead-in in prose: `gives "Ellipsis found in left side…"`. */
const LEAD_QUOTE = new RegExp(String.raw`\b${LEAD_IN}[^"“\`\n]{0,60}?["“\`]([^"”\`\n]{12,400})["”\`]`, 'gi');
/** A prose line that ends by introducing the block below it ("I get the following error:"). */
const LEAD_LINE = new RegExp(String.raw`\b${LEAD_IN}(?:[^.\n]{0,80})?[:.]?\s*$|:\s*$`, 'i');
/** A lead-in that says the block below is an error ("I get this error:", "fails with:"), not just any output. */
const ERROR_LEAD = /\b(?:errors?|exceptions?|fail(?:s|ed|ing|ure)?|breaks?|crash(?:es|ed)?|complains?|traceback|throws?|raises?)\b/i;
/** A code comment after a call saying what it got: `f(x)  # gives "…"`, `# KeyError`, `# error: …`. */
const COMMENT_RESULT = new RegExp(
  String.raw`^\s*(?!except\b|raise\b|import\b|from\b|print\()[^#\s].*?\s#\s*(?:(${LEAD_IN}|->|=>|raises?|error)\s*:?\s*)?(.{3,400})$`,
  'i',
);

const WARNING_LINE = /^\s*(?:\S+:\d+:\s*)?((?:[A-Z]\w*)?Warning):\s+(.+)$/;
const LOGGING_WARNING = /^\s*(?:\[?\d[\d\-:,. T]*\]?\s*)?(?:WARNING|WARN)(?::[\w.]+(?=:))*(?:\s*[:\]-]\s*|\s+)(.+)$/;
const ERROR_WORDS = new RegExp(
  String.raw`\b(?:` +
    [
      String.raw`returned|returns\s+a\s+value|expected\s+.{1,60}\s+but|but\s+(?:got|found|this)|cannot|can't|could\s+not|not\s+supported|unsupported`,
      String.raw`must\s+be|is\s+not|failed\s+to|mismatch|undefined|illegal|invalid|unknown\s+(?:type|builtin|op)|not\s+(?:found|defined)`,
    ].join('|') +
    String.raw`)\b`,
  'i',
);
const CODE_START =
  /^\s*(?:import |from \S+ import|def |class |return\b|if |for |while |with |print\(|@|#|>>>|\.\.\.|[A-Za-z_][\w.[\]]*\s*(?:=|\+=|\())/;
/** `assert len(y) == 6 # fails`: the reporter's own oracle, marked as the failing line. */
const FAILING_ASSERT = new RegExp(
  String.raw`^\s*assert\s+(.+?)\s*==\s*(${VALUE})\s*,?[^#]*#\s*(?:fails?|failing|error|breaks?|false|wrong)\b`,
  'i',
);
/** `# outputs: (tensor([4.]), tensor([5.]))`: what a line printed, written as a comment in the code. */
const OUTPUT_COMMENT = /^\s*#\s*(?:outputs?|prints?|returns?|result|gives?|->|=>)\s*:?\s*(\S.{0,300})$/i;
/** `print(metric.compute())  # tensor(nan)`: what that print showed, as a value Python prints (never words: `# works`). */
const PRINT_COMMENT =
  /^\s*print\(.+\)\s+#\s*(?:(?:outputs?|prints?|printed|returns?|result|gives?|shows|->|=>)\s*:?\s*)?['"]?(.{1,300}?)['"]?\s*$/i;
const PRINTED_VALUE = /^(?:[A-Za-z_][\w.]*\(.*\)|-?(?:\d[\d.]*(?:e[-+]?\d+)?|nan|inf)|\[.*\]|\(.*\)|\{.*\}|True|False|None)$/;
const FENCE = /^\s*(```|~~~)\s*([\w+-]*)/;

function add(out: Expectation[], e: Expectation): void {
  if (!out.some((x) => x.kind === e.kind && x.expected === e.expected && x.observed === e.observed && x.quote === e.quote)) out.push(e);
}

function sentenceAround(text: string, index: number, length: number): string {
  const dot = text.lastIndexOf('. ', index);
  // No sentence end before it: the sentence starts at the line (a missing '. ' is not one two characters in).
  const start = Math.max(text.lastIndexOf('\n', index) + 1, dot >= 0 ? dot + 2 : 0);
  const endDot = text.indexOf('. ', index + length);
  const endLine = text.indexOf('\n', index + length);
  const ends = [endDot === -1 ? text.length : endDot + 1, endLine === -1 ? text.length : endLine];
  return clip(text.slice(start, Math.min(...ends)).trim(), 400);
}

function proseExpectations(prose: string, out: Expectation[]): void {
  for (const m of prose.matchAll(VERB_EXPECTED))
    add(out, { kind: 'value', quote: m[0].trim(), observed: m[1], expected: m[3], ...(m[2] ? { subject: m[2] } : {}) });
  for (const m of prose.matchAll(EXPECTED_BUT)) add(out, { kind: 'value', quote: m[0].trim(), expected: m[1], observed: m[2] });
  for (const m of prose.matchAll(INSTEAD_OF)) {
    const subject = m[1] && !/^(?:is|was|are|the|it|this|value)$/i.test(m[1]) ? m[1] : m[3];
    add(out, { kind: 'value', quote: m[0].trim(), observed: m[2], expected: m[4], ...(subject ? { subject } : {}) });
  }
  for (const m of prose.matchAll(EXPECTED_ALONE)) {
    const value = m[1] ?? '';
    if (out.some((x) => x.kind === 'value' && x.expected === value)) continue;
    add(out, { kind: 'value', quote: sentenceAround(prose, m.index ?? 0, m[0].length), expected: value });
  }
  for (const m of prose.matchAll(SHOULD_RAISE)) {
    const cls = m[1] ?? m[2];
    add(out, { kind: 'raises', quote: sentenceAround(prose, m.index ?? 0, m[0].length), ...(cls ? { expected: cls } : {}) });
  }
  for (const m of prose.matchAll(SHOULD_WARN)) add(out, { kind: 'warns', quote: sentenceAround(prose, m.index ?? 0, m[0].length) });
  for (const m of prose.matchAll(NO_ERROR))
    add(out, { kind: 'no_error', quote: sentenceAround(prose, m.index ?? 0, m[0].length), observed: m[0].trim() });
  for (const m of prose.matchAll(SHOULD_WORK)) {
    const call = WORKS_CALLS.find(([word]) => word.test(m[0]))?.[1];
    add(out, { kind: 'should_work', quote: sentenceAround(prose, m.index ?? 0, m[0].length), ...(call ? { subject: call } : {}) });
  }
  for (const m of prose.matchAll(LEAD_QUOTE)) {
    const quoted = unquote(m[1] ?? '');
    if (quoted.split(/\s+/).length >= 3 && !CODE_START.test(quoted) && !/^\w*(?:Error|Exception|Warning)\b/.test(quoted))
      add(out, { kind: 'message', quote: quoted, observed: quoted });
  }
  for (const line of prose.split('\n')) {
    if (line.length > 2000) continue;
    for (const sentence of line.split(/(?<=[.!?])\s+/))
      if (STATED.test(sentence) && sentence.trim().split(/\s+/).length >= 4) add(out, { kind: 'stated', quote: sentence.trim() });
  }
}

/** A quoted message without its quotes and the ellipsis a reporter cut it with. */
function unquote(text: string): string {
  return text
    .trim()
    .replace(/^["'“‘`]+|["'”’`]+$/g, '')
    .replace(/\s*(?:…|\.\.\.)\s*$/, '')
    .trim();
}

function warningLines(lines: string[], out: Expectation[]): void {
  for (const raw of lines) {
    const line = raw.slice(0, MAX_SCAN_LINE);
    const w = WARNING_LINE.exec(line);
    if (w?.[1] && w[2]) {
      add(out, { kind: 'warning', quote: line.trim(), category: w[1], observed: w[2].trim() });
      continue;
    }
    const l = LOGGING_WARNING.exec(line);
    if (l?.[1]) add(out, { kind: 'warning', quote: line.trim(), observed: l[1].trim() });
  }
}

/**
 * Error messages in a non-code block or a quote, with no `SomeError:` prefix: a compiler's message, a first line cut
 * short. The source excerpt under a `File "…", line N` (TorchScript's, ending `<--- HERE`) is code, not a message.
 * `introduced`: the report presents the block as what it got ("I get:"), so its first message line counts whatever its words.
 */
function classlessMessages(lines: string[], out: Expectation[], introduced = false): void {
  // The indentation of the `File "…", line N` line whose source excerpt follows (deeper lines), or -1 outside one.
  let excerpt = -1;
  let taken = false;
  for (const raw of lines) {
    const line = raw.replace(/^\s*>\s?/, '').slice(0, MAX_SCAN_LINE);
    const t = line.trim();
    const indent = line.length - line.trimStart().length;
    if (/^(?:File |Traceback )/.test(t)) {
      excerpt = /^File /.test(t) ? indent : -1;
      continue;
    }
    if (excerpt >= 0 && (t === '' || indent > excerpt)) continue;
    excerpt = -1;
    if (t.length < 20 || CODE_START.test(t) || /^\w*(?:Error|Exception|Warning)\b/.test(t) || /<-{2,}\s*HERE/.test(t)) continue;
    if (t.split(/\s+/).length < 5) continue;
    const wordy = t.split(/\s+/).filter((w) => /^[A-Za-z][\w'’-]*[.,:;]?$/.test(w)).length >= 0.6 * t.split(/\s+/).length;
    if (!ERROR_WORDS.test(t) && !(introduced && !taken && wordy && /^[A-Za-z]/.test(t))) continue;
    taken = true;
    add(out, { kind: 'message', quote: t, observed: t });
  }
}

function codeExpectations(lines: string[], out: Expectation[]): void {
  for (const raw of lines) {
    const line = raw.slice(0, MAX_SCAN_LINE);
    const a = FAILING_ASSERT.exec(line);
    if (a?.[1] && a[2]) add(out, { kind: 'value', quote: line.trim(), subject: a[1].trim(), expected: a[2] });
    const o = OUTPUT_COMMENT.exec(line);
    if (o?.[1]) add(out, { kind: 'printed', quote: line.trim(), observed: o[1].trim() });
    const p = PRINT_COMMENT.exec(line);
    if (p?.[1] && PRINTED_VALUE.test(p[1].trim())) add(out, { kind: 'printed', quote: line.trim(), observed: p[1].trim() });
    else commentResult(line, out);
  }
}

/** What a code comment after a call says it got: an exception class (`# KeyError`) or a quoted message (`# gives "…"`). */
function commentResult(line: string, out: Expectation[]): void {
  const c = COMMENT_RESULT.exec(line);
  if (!c?.[2]) return;
  const said = unquote(c[2]);
  const cls = /^((?:[A-Za-z_]\w*\.)*([A-Z]\w*(?:Error|Exception)))\b(?:\s*:\s*|\s+)?(.*)$/.exec(said);
  if (cls?.[2]) {
    const message = unquote(cls[3] ?? '');
    add(out, { kind: 'message', quote: line.trim(), category: cls[2], observed: message });
    return;
  }
  // Without a class, only a quote after a lead-in is a message: `x = f()  # the old value` says nothing it got.
  if (c[1] && /^["'“‘`]/.test(c[2].trim()) && said.split(/\s+/).length >= 3)
    add(out, { kind: 'message', quote: line.trim(), observed: said });
}

/** The expectations a markdown report states. Pure; tolerates empty and huge bodies. */
export function readExpectations(markdown: string): Expectation[] {
  const out: Expectation[] = [];
  const proseLines: string[] = [];
  const outputLines: string[] = [];
  const quoteLines: string[] = [];
  let fence: { lang: string; introduced: boolean } | null = null;
  let block: string[] = [];
  let lastProse = '';
  const closeBlock = (lang: string, introduced: boolean) => {
    const isPython = /^(?:python|py|python3|ipython\d?|jupyter)$/i.test(lang);
    const looksLikeCode =
      block.filter((l) => l.trim() !== '' && CODE_START.test(l.trim())).length > block.filter((l) => l.trim() !== '').length / 2;
    // A block the prose introduces as what it got ("I get this error:") is output, even when its source excerpt looks like code.
    const shownAsOutput = introduced && !isPython && !block.some((l) => /^\s*(?:import |from \S+ import )/.test(l));
    if (shownAsOutput) classlessMessages(block, out, true);
    if (shownAsOutput || (!isPython && !looksLikeCode)) for (const l of block) outputLines.push(l);
    else warningLines(block, out); // a REPL session pasted as python can still hold warning output
    codeExpectations(block, out);
    block = [];
  };
  // Expectations are stated in the report's words, not deep in a pasted log: the first 400k characters hold them.
  for (const raw of markdown.slice(0, 400_000).replace(/\r\n/g, '\n').split('\n')) {
    const f = FENCE.exec(raw);
    if (f) {
      if (fence) {
        closeBlock(fence.lang, fence.introduced);
        fence = null;
      } else fence = { lang: f[2] ?? '', introduced: LEAD_LINE.test(lastProse) && ERROR_LEAD.test(lastProse) && !/```/.test(lastProse) };
      continue;
    }
    if (raw.trim() !== '' && !fence) lastProse = raw.length > 2000 ? '' : raw;
    if (fence) block.push(raw);
    else if (/^(?: {4}|\t)\S/.test(raw)) codeExpectations([raw], out);
    else if (/^\s*>/.test(raw)) quoteLines.push(raw);
    else proseLines.push(raw);
  }
  if (fence) closeBlock(fence.lang, fence.introduced);
  const prose = [...proseLines, ...quoteLines.map((l) => l.replace(/^\s*>\s?/, ''))].join('\n').slice(0, 200_000);
  proseExpectations(prose, out);
  warningLines([...outputLines, ...quoteLines], out);
  classlessMessages([...outputLines, ...quoteLines], out);
  for (const m of prose.matchAll(/["“`]([^"”`\n]{25,400})["”`]/g)) if (m[1] && !CODE_START.test(m[1])) classlessMessages([m[1]], out);
  return out.filter((e) => e.kind !== 'message' || !out.some((x) => x.kind === 'warning' && x.quote.includes(e.quote)));
}

/**
 * The symptoms a run must show for a report that states only expectations (no traceback, no pasted output): the
 * reporter's own failing assert as the AssertionError it raises, anything else as a wrong behaviour whose evidence is
 * the report's words. Without these such a report used to end needs_info although it has code and says what is wrong.
 */
export function expectationSymptoms(expectations: readonly Expectation[]): Symptom[] {
  return expectations
    .filter((e) => e.kind !== 'stated')
    .map((e): Symptom => {
      if (e.kind === 'value' && /^assert\b/.test(e.quote))
        return {
          kind: 'wrong_values',
          category: 'silent',
          evidence: `the report's assertion fails: ${e.quote.replace(/\s*#.*$/, '')}`,
          exception: { type: 'AssertionError', message: '' },
        };
      if (e.kind === 'message' && e.category) {
        const exception = { type: e.category, message: e.observed ?? '' };
        return { kind: classifyException(exception), category: 'crash', evidence: clip(e.quote, 1200), exception };
      }
      if (e.kind === 'message')
        return { kind: 'other_crash', category: 'crash', evidence: clip(e.quote, 1200), quoted: clip(e.observed ?? e.quote, 1200) };
      if (e.kind === 'should_work')
        return { kind: 'other_crash', category: 'crash', evidence: clip(e.quote, 600), raisedIn: e.subject ?? '' };
      return { kind: 'wrong_values', category: 'silent', evidence: clip(e.quote, 600) };
    });
}
