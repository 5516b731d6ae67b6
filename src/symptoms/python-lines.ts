/**
 * A small reader of Python source lines for the oracle check (oracle-assertions.ts): logical lines (comments dropped,
 * bracketed and continued lines joined, strings kept) and top-level splits. Not a parser; enough for assertions. Pure.
 */

export interface Line {
  start: number;
  end: number;
  indent: number;
  text: string;
}

/** Python's logical lines: comments dropped, bracketed and backslash-continued lines joined, strings kept. */
export function logicalLines(script: string): Line[] {
  const raw = script.replace(/\r\n/g, '\n').split('\n');
  const out: Line[] = [];
  let buf = '';
  let start = 0;
  let depth = 0;
  let triple: string | null = null;
  for (let i = 0; i < raw.length; i += 1) {
    const line = raw[i] ?? '';
    if (!buf) start = i + 1;
    let kept = '';
    let quote: string | null = null;
    for (let k = 0; k < line.length; k += 1) {
      const c = line[k] ?? '';
      if (triple) {
        if (line.startsWith(triple, k)) {
          kept += triple;
          k += 2;
          triple = null;
        } else kept += c;
        continue;
      }
      if (quote) {
        kept += c;
        if (c === '\\') {
          kept += line[k + 1] ?? '';
          k += 1;
        } else if (c === quote) quote = null;
        continue;
      }
      if (line.startsWith('"""', k) || line.startsWith("'''", k)) {
        triple = line.slice(k, k + 3);
        kept += triple;
        k += 2;
      } else if (c === '"' || c === "'") {
        quote = c;
        kept += c;
      } else if (c === '#') break;
      else {
        if ('([{'.includes(c)) depth += 1;
        if (')]}'.includes(c)) depth = Math.max(0, depth - 1);
        kept += c;
      }
    }
    const continued = /\\\s*$/.test(kept);
    buf += buf ? ` ${kept.trim().replace(/\\\s*$/, '')}` : kept.replace(/\\\s*$/, '');
    if (depth > 0 || triple || continued) continue;
    if (buf.trim()) out.push({ start, end: i + 1, indent: /^\s*/.exec(buf)?.[0].replace(/\t/g, '    ').length ?? 0, text: buf.trim() });
    buf = '';
  }
  if (buf.trim()) out.push({ start, end: raw.length, indent: /^\s*/.exec(buf)?.[0].length ?? 0, text: buf.trim() });
  return out;
}

/**
 * Walks `text` from `from` outside strings, calling `at(k, depth)` at each character that is not inside one (brackets
 * tracked); `at` returns how many characters to skip past k, or `true` to stop. Returns where it stopped, else -1.
 */
function walkTop(text: string, from: number, at: (k: number, depth: number) => number | true | void): number {
  let depth = 0;
  let quote: string | null = null;
  for (let k = from; k < text.length; k += 1) {
    const c = text[k] ?? '';
    if (quote) {
      if (c === '\\') k += 1;
      else if (c === quote) quote = null;
      continue;
    }
    if (c === '"' || c === "'") quote = c;
    else if ('([{'.includes(c)) depth += 1;
    else if (')]}'.includes(c)) depth -= 1;
    else {
      const r = at(k, depth);
      if (r === true) return k;
      if (typeof r === 'number') k += r;
    }
  }
  return -1;
}

/** Splits at top-level occurrences of `sep` (outside brackets and strings). */
export function splitTop(text: string, sep: string): string[] {
  const parts: string[] = [];
  let last = 0;
  walkTop(text, 0, (k, depth) => {
    if (depth !== 0 || !text.startsWith(sep, k)) return;
    parts.push(text.slice(last, k));
    last = k + sep.length;
    return sep.length - 1;
  });
  parts.push(text.slice(last));
  return parts.map((p) => p.trim());
}

/** `a - b` split at its top-level binary minus (not a sign, not an exponent's), else the whole as one part. */
export function splitMinus(text: string): string[] {
  const k = walkTop(text, 1, (i, depth) => {
    if (text[i] !== '-' || depth !== 0) return;
    const before = text.slice(0, i).trimEnd();
    return !(!before || /[-+*/(,=<>]$/.test(before) || /\d[eE]$/.test(text.slice(0, i))) || undefined;
  });
  return k < 0 ? [text.trim()] : [text.slice(0, k).trim(), text.slice(k + 1).trim()];
}

/** The text without one pair of enclosing parentheses, when they enclose all of it. */
export function unwrap(text: string): string {
  let t = text.trim();
  // `(a == b)` loses its parentheses; `(a) + (b)` and a tuple `(0.5, 1.2)` keep theirs.
  while (t.startsWith('(') && t.endsWith(')') && balanced(t.slice(1, -1)) && splitTop(t.slice(1, -1), ',').length === 1)
    t = t.slice(1, -1).trim();
  return t;
}

function balanced(text: string): boolean {
  let depth = 0;
  for (const c of text.replace(/(["'])(?:\\.|(?!\1).)*\1/g, '""')) {
    if ('([{'.includes(c)) depth += 1;
    if (')]}'.includes(c)) depth -= 1;
    if (depth < 0) return false;
  }
  return depth === 0;
}
