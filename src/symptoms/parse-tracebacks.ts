import { unwrapFrameworkMessage } from './framework-output.js';
import type { ExceptionInfo, Frame, Traceback } from './types.js';
import { MAX_SCAN_LINE, screenLines } from './text.js';

/**
 * Python traceback parsing. Pure: text in, tracebacks out. Works on a run's interleaved output and on
 * tracebacks pasted into issues (indented, quoted with `> `, Windows paths, truncated).
 */

const TRACEBACK_HEADER = /Traceback \(most recent call last\):\s*$/;
const FRAME = /^\s*File "(.+?)", line (\d+)(?:, in (.+?))?\s*$/;
const CHAIN_MARKERS = [
  'During handling of the above exception, another exception occurred:',
  'The above exception was the direct cause of the following exception:',
];
/** `pkg.mod.ClassName: message`; the class segment starts with a capital (after leading underscores). */
const EXCEPTION_LINE = /^((?:[A-Za-z_]\w*\.)*(_*[A-Z]\w*))(?::(?:\s(.*)|$)|$)/;
const BARE_EXCEPTION_SUFFIX = /(Error|Exception|Interrupt|Exit|Warning|Iteration)$/;
/** The benchmark judge's rule (shared/bench/judge.py `EXC`), kept identical on purpose. */
const JUDGE_EXC = /^(?:[A-Za-z_][\w.]*\.)?([A-Za-z_]\w*(?:Error|Exception|Warning|Interrupt|Exit))\b:?\s*(.*)$/;

/** Reads `Type: message` into the short class name (what the judge compares) and the dotted one. */
export function parseExceptionLine(line: string): ExceptionInfo | null {
  if (line.length > MAX_SCAN_LINE) return null;
  const m = EXCEPTION_LINE.exec(line.trim());
  if (!m) return null;
  const qualified = m[1] ?? '';
  const short = m[2] ?? '';
  const hasColon = line.trim().length > qualified.length && line.trim()[qualified.length] === ':';
  // A bare word is an exception only when it is named like one (KeyboardInterrupt, StopIteration).
  if (!hasColon && !BARE_EXCEPTION_SUFFIX.test(short)) return null;
  const info: ExceptionInfo = { type: short, message: (m[3] ?? '').trim() };
  if (qualified !== short) info.qualifiedType = qualified;
  return info;
}

/**
 * Whether a frame's file belongs to a library (site-packages, the standard library, torch itself, frozen
 * modules) rather than to the user's own script.
 */
export function isLibraryFile(file: string): boolean {
  const f = file.replace(/\\/g, '/');
  if (/^<(string|stdin|ipython-input|module)/.test(f)) return false;
  if (f.startsWith('<')) return true;
  return (
    /(^|\/)(site|dist)-packages\//.test(f) ||
    /\/lib(64)?\/python\d[\d.]*\//.test(f) ||
    /\/python\d+\/lib\//i.test(f) ||
    /(^|\/)torch\/(nn|optim|autograd|utils|_tensor|functional|_ops|cuda)/.test(f)
  );
}

function stripPrefix(line: string, prefix: string): string {
  return prefix && line.startsWith(prefix) ? line.slice(prefix.length) : line.replace(/^>\s?/, '');
}

/** Parses every traceback in a text, in order. A chained traceback lists the exceptions before it in `chain`. */
export function parseTracebacks(text: string): Traceback[] {
  const lines = screenLines(text);
  const out: Traceback[] = [];
  // The chain so far: exceptions of tracebacks joined by "During handling…" / "The above exception…".
  let chain: ExceptionInfo[] = [];
  let prevEnd = -1;
  let i = 0;
  while (i < lines.length) {
    const header = lines[i] ?? '';
    const h = header.length <= MAX_SCAN_LINE ? TRACEBACK_HEADER.exec(header) : null;
    if (!h) {
      i += 1;
      continue;
    }
    const between = prevEnd >= 0 ? lines.slice(prevEnd, i).filter((l) => l.trim() !== '') : [];
    const chained = between.length === 1 && CHAIN_MARKERS.some((m) => (between[0] ?? '').includes(m));
    // Keep whatever quoted/indented the header (`> `, four spaces) and strip it from the lines below.
    const prefix = /^[\s>]*/.exec(header.slice(0, h.index))?.[0] ?? '';
    const frames: Frame[] = [];
    let j = i + 1;
    let exception: ExceptionInfo | null = null;
    for (; j < lines.length; j += 1) {
      const raw = stripPrefix(lines[j] ?? '', prefix);
      if (raw.length > MAX_SCAN_LINE) continue;
      if (TRACEBACK_HEADER.test(raw)) break;
      const fm = FRAME.exec(raw);
      if (fm) {
        const frame: Frame = { file: fm[1] ?? '', line: Number(fm[2]), function: fm[3] ?? '' };
        const next = stripPrefix(lines[j + 1] ?? '', prefix);
        if (/^\s+\S/.test(next) && !FRAME.test(next) && !/^\s*[\^~]+\s*$/.test(next)) {
          frame.code = next.trim();
          j += 1;
        }
        frames.push(frame);
        continue;
      }
      if (raw.trim() === '' || /^\s*[\^~]+\s*$/.test(raw) || /^\s*\[Previous line repeated/.test(raw) || /^\s+\.\.\.\s*$/.test(raw))
        continue;
      if (/^\s+/.test(raw) && frames.length === 0) continue;
      exception = parseExceptionLine(raw);
      if (exception) break;
      // Indented code of a frame that had no `File` line match, or stray output: skip a few, then give up.
      if (j - i > 400) break;
    }
    if (!exception) {
      i = j;
      continue;
    }
    // Multi-line messages: indented lines, and lines following one that ends with ':'.
    const messageLines = [exception.message];
    let k = j + 1;
    // TorchScript writes the class alone (`RuntimeError: `) and the message on the next line, then a source excerpt
    // ending `<--- HERE`: the message starts on the first line after the class.
    if (!exception.message.trim() && /:\s*$/.test(stripPrefix(lines[j] ?? '', prefix))) {
      while (k < lines.length && stripPrefix(lines[k] ?? '', prefix).trim() === '' && k - j < 3) k += 1;
      const next = stripPrefix(lines[k] ?? '', prefix);
      if (next.trim() !== '' && !TRACEBACK_HEADER.test(next) && !FRAME.test(next)) {
        messageLines[0] = next.trim();
        k += 1;
      }
    }
    for (; k < lines.length && messageLines.length < 40; k += 1) {
      const raw = stripPrefix(lines[k] ?? '', prefix);
      if (raw.trim() === '' || TRACEBACK_HEADER.test(raw) || CHAIN_MARKERS.some((m) => raw.includes(m))) break;
      const prev = messageLines.at(-1) ?? '';
      if (/^[\s\t]+\S/.test(raw) || prev.trimEnd().endsWith(':')) messageLines.push(raw.trimEnd());
      else break;
    }
    exception.message = unwrapFrameworkMessage(messageLines.join('\n').trim(), lines.slice(k));
    const userFrame = [...frames].reverse().find((f) => !isLibraryFile(f.file)) ?? null;
    const tb: Traceback = { exception, frames, userFrame };
    if (chained && chain.length > 0) tb.chain = [...chain];
    out.push(tb);
    chain = chained ? [...chain, exception] : [exception];
    prevEnd = k;
    i = k;
  }
  return out;
}

const LOOSE_FRAME = /^\s*(?:\.\.\.\s*)?(?:File ")?([^"]*?\.py)", line (\d+)(?:, in (.+?))?\s*$/;

/**
 * Tracebacks pasted without their `Traceback (most recent call last):` header, often cut at the front
 * (`.../site-packages/keras/…/name_scope.py", line 61, in __exit__`): frames followed by an exception line.
 * Reports only; a run's output always has the header.
 */
export function parseTracebackFragments(text: string): Traceback[] {
  const lines = text.split(/\r?\n/);
  const out: string[] = [];
  let inside = false;
  for (const line of lines) {
    if (line.length > MAX_SCAN_LINE) {
      out.push('');
      continue;
    }
    if (TRACEBACK_HEADER.test(line)) {
      // Real tracebacks are parseTracebacks' job; blank this one out.
      inside = true;
      out.push('');
      continue;
    }
    const m = LOOSE_FRAME.exec(line);
    if (m) {
      if (!inside) out.push('Traceback (most recent call last):');
      inside = true;
      out.push(`  File "${m[1]}", line ${m[2]}${m[3] ? `, in ${m[3]}` : ''}`);
      continue;
    }
    if (inside && parseExceptionLine(line)) inside = false;
    out.push(line);
  }
  return parseTracebacks(out.join('\n')).filter((tb) => tb.frames.length > 0);
}

/** The last exception-looking line of a text, by the benchmark judge's own rule (used to stay as strict as it). */
export function lastExceptionLine(text: string): ExceptionInfo | null {
  const lines = text
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l !== '' && l.length <= MAX_SCAN_LINE);
  for (let i = lines.length - 1; i >= 0; i -= 1) {
    const m = JUDGE_EXC.exec(lines[i] ?? '');
    if (m) return { type: m[1] ?? '', message: (m[2] ?? '').trim() };
  }
  return null;
}

const WARNING_WITH_LOCATION = /^(.*?):(\d+): ((?:[A-Za-z_]\w*\.)*[A-Z]\w*Warning): (.*)$/;
const WARNING_BARE = /^\s*((?:[A-Za-z_]\w*\.)*[A-Z]\w*Warning): (.+)$/;

/** Python warnings (`file.py:12: UserWarning: …`, `FutureWarning: …`), as `Category: message`, de-duplicated. */
export function parseWarnings(text: string): string[] {
  const seen = new Set<string>();
  for (const line of screenLines(text)) {
    if (line.length > MAX_SCAN_LINE || !line.includes('Warning: ')) continue;
    // tqdm bars and warnings share a line when stderr is not a terminal.
    const at = line.search(/(\S+:\d+: )?(?:[A-Za-z_]\w*\.)*[A-Z]\w*Warning: /);
    if (at < 0) continue;
    const rest = line.slice(at);
    const m = WARNING_WITH_LOCATION.exec(rest) ?? null;
    if (m) {
      seen.add(`${m[3]}: ${(m[4] ?? '').trim()}`);
      continue;
    }
    const b = WARNING_BARE.exec(rest);
    if (b) seen.add(`${b[1]}: ${(b[2] ?? '').trim()}`);
  }
  return [...seen];
}

/** The first non-blank line below line `i` (within two blank lines), unless it is a frame or a new traceback. */
function messageBelow(lines: readonly string[], i: number): string {
  for (let k = i + 1; k < lines.length && k - i <= 3; k += 1) {
    const t = (lines[k] ?? '').replace(/^\s*>\s?/, '').trim();
    if (t === '') continue;
    return t.length > MAX_SCAN_LINE || FRAME.test(t) || LOOSE_FRAME.test(t) || TRACEBACK_HEADER.test(t) ? '' : t;
  }
  return '';
}

const ERROR_IN_TEXT = /(?:^|[\s`'"(>*])((?:[A-Za-z_]\w*\.)*_*[A-Z]\w*(?:Error|Exception))(?::[ \t]*([^\n]*))?/g;

/**
 * Lines such as `RuntimeError: …` anywhere in a text, including inline code in prose. Returned as
 * `Type: message` (module prefix kept as written), de-duplicated, in order.
 */
export function findErrorLines(text: string): string[] {
  const seen = new Set<string>();
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i += 1) {
    const line = lines[i] ?? '';
    if (line.length > MAX_SCAN_LINE) continue;
    for (const m of line.matchAll(ERROR_IN_TEXT)) {
      // Inline code (`` `ValueError: …` ``) ends at its closing backtick; a pasted line keeps the backticks its
      // message quotes names with (torchmetrics: "Expected argument `num_outputs` to match …").
      const raw = m[2] ?? '';
      let msg = (m[0].startsWith('`') ? (raw.split('`')[0] ?? '') : raw).trim();
      // The class alone on its line with a colon (TorchScript's `RuntimeError:`): the message is the next line.
      if (!msg && /^[\s>]*(?:[A-Za-z_]\w*\.)*_*[A-Z]\w*(?:Error|Exception):\s*$/.test(line)) msg = messageBelow(lines, i);
      // A bare class name in prose ("raises a ValueError") is a mention, not an error line.
      if (!msg) continue;
      seen.add(`${m[1]}: ${msg}`);
    }
  }
  return [...seen];
}

/**
 * Every frame a text shows, in order, header or not and whether or not its exception line survived (a report's
 * traceback cut before its last line still names the functions it passed through). Reports only.
 */
export function framesIn(text: string): Frame[] {
  const out: Frame[] = [];
  for (const line of text.split(/\r?\n/)) {
    if (line.length > MAX_SCAN_LINE) continue;
    const m = LOOSE_FRAME.exec(line.replace(/^\s*>\s?/, ''));
    if (m) out.push({ file: m[1] ?? '', line: Number(m[2]), function: m[3] ?? '' });
  }
  return out;
}

/** A line of a compiler's source excerpt under its message (`~~~~ <--- HERE`, `^^^^`): never the reported output. */
export function isSourceMarker(line: string): boolean {
  return /<-{2,}\s*HERE\s*$/.test(line) || /^\s*[~^]{3,}\s*$/.test(line);
}

/** Python's warning line (`…/mapping_func.py:72: UserWarning: You are trying…`), as `warnings` prints it. */
const WARNING_HEADER = /^\s*\S.*:\d+: (?:[A-Za-z_]\w*\.)*\w*Warning: /;

/**
 * Lines without the source line Python echoes under each warning (`  warnings.warn(`): indented, right after a warning
 * line. It is the library's code, not what the run printed. Pure.
 */
export function withoutWarningEcho(lines: readonly string[]): string[] {
  return lines.filter((l, i) => !(i > 0 && /^\s+\S/.test(l) && WARNING_HEADER.test(lines[i - 1] ?? '')));
}
