/**
 * The script's string and numeric literals, as the fake-output check compares them with the report's output:
 * adjacent and `+`-joined literals as one string, f-string and %-format placeholders kept as gaps. Pure.
 */

/** One string expression of the script: adjacent literals joined, placeholders as `\u0000`. */
export interface ScriptString {
  text: string;
  /** 1-based line of its first literal. */
  line: number;
  /** Nothing else on its line(s): a docstring or a bare string statement, which prints nothing. */
  statement: boolean;
  /** Compared with in a condition (`"…" in str(e)`), not printed or raised. */
  compared: boolean;
}

export interface ScriptLiterals {
  strings: ScriptString[];
  /** Numeric literals with the line they are on (f-string expressions included). */
  numbers: { raw: string; line: number }[];
  /** The code with strings and comments blanked, line by line (for context checks). */
  codeLines: string[];
}

/** A placeholder's gap in a string template. */
export const HOLE = '\u0000';
export const norm = (s: string): string => s.replace(/\s+/g, ' ').trim().toLowerCase();

function decodeEscapes(body: string, raw: boolean): string {
  if (raw) return body;
  return body.replace(/\\(x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|N\{[^}]*\}|[0-7]{1,3}|\n|.)/g, (_, e: string) => {
    switch (e[0]) {
      case 'n':
        return '\n';
      case 't':
        return '\t';
      case 'r':
        return '\r';
      case '\n':
        return '';
      case 'x':
      case 'u':
        return String.fromCharCode(parseInt(e.slice(1), 16));
      case 'N':
        return HOLE;
      default:
        return /^[0-7]+$/.test(e) ? String.fromCharCode(parseInt(e, 8)) : e;
    }
  });
}

/** %-format and str.format placeholders become gaps; `{{`/`}}` stay literal braces. */
function holesForFormats(text: string): string {
  return text
    .replace(/%(?:\([^)]*\))?[-+ #0]*(?:\*|\d+)?(?:\.(?:\*|\d+))?[diouxXeEfFgGcrsa%]/g, (m) => (m === '%%' ? '%' : HOLE))
    .replace(/\{\{|\}\}|\{[^{}]*\}/g, (m) => (m === '{{' ? '{' : m === '}}' ? '}' : HOLE));
}

/** Splits an f-string body into its text (expressions as gaps) and its expressions. */
function splitFString(body: string): { text: string; expressions: string[] } {
  let text = '';
  const expressions: string[] = [];
  for (let i = 0; i < body.length; i += 1) {
    const c = body[i];
    if (c === '{' && body[i + 1] === '{') {
      text += '{';
      i += 1;
    } else if (c === '}' && body[i + 1] === '}') {
      text += '}';
      i += 1;
    } else if (c === '{') {
      let depth = 1;
      let j = i + 1;
      for (; j < body.length && depth > 0; j += 1) {
        if (body[j] === '{') depth += 1;
        else if (body[j] === '}') depth -= 1;
      }
      expressions.push(body.slice(i + 1, j - 1).replace(/[!:][^!:]*$/, ''));
      text += HOLE;
      i = j - 1;
    } else text += c;
  }
  return { text, expressions };
}

/**
 * Tokenises just enough Python to list its string and numeric literals: comments skipped, string prefixes
 * (r, b, f, u and pairs), triple quotes and escapes handled. Not a parser; a script that does not tokenise
 * still gets its literals read up to where it breaks.
 */
export function scriptLiterals(script: string): ScriptLiterals {
  const src = script.replace(/\r\n/g, '\n');
  const pieces: { text: string; line: number; start: number; end: number }[] = [];
  const numbers: ScriptLiterals['numbers'] = [];
  const blank = src.split('');
  let line = 1;
  let i = 0;
  while (i < src.length) {
    const c = src[i] ?? '';
    if (c === '\n') {
      line += 1;
      i += 1;
      continue;
    }
    if (c === '#') {
      const end = src.indexOf('\n', i);
      const stop = end === -1 ? src.length : end;
      for (let k = i; k < stop; k += 1) blank[k] = ' ';
      i = stop;
      continue;
    }
    const prefix = /^(?:[rRbBuUfF]|[rR][bBfF]|[bBfF][rR])?(?='|")/.exec(src.slice(i, i + 3));
    if (!prefix || (i > 0 && /\w/.test(src[i - 1] ?? ''))) {
      i += 1;
      continue;
    }
    const p = prefix[0].toLowerCase();
    const q = i + p.length;
    const quote = src.startsWith((src[q] ?? '"').repeat(3), q) ? (src[q] ?? '"').repeat(3) : (src[q] ?? '"');
    let j = q + quote.length;
    let body = '';
    for (; j < src.length; j += 1) {
      if (src[j] === '\\') {
        body += src.slice(j, j + 2);
        j += 1;
        continue;
      }
      if (src.startsWith(quote, j)) break;
      if (quote.length === 1 && src[j] === '\n') break;
      body += src[j];
    }
    const end = Math.min(j + quote.length, src.length);
    const startLine = line;
    for (let k = i; k < end; k += 1) {
      if (src[k] === '\n') line += 1;
      else blank[k] = ' ';
    }
    let text: string;
    if (p.includes('f')) {
      const f = splitFString(body);
      text = decodeEscapes(f.text, p.includes('r'));
      for (const e of f.expressions) for (const m of e.matchAll(NUMBER)) numbers.push({ raw: m[0].replace(/_/g, ''), line: startLine });
    } else text = holesForFormats(decodeEscapes(body, p.includes('r')));
    pieces.push({ text, line: startLine, start: i, end });
    i = end;
  }
  const codeLines = blank.join('').split('\n');
  codeLines.forEach((code, k) => {
    for (const m of code.matchAll(NUMBER)) numbers.push({ raw: m[0].replace(/_/g, ''), line: k + 1 });
  });

  // Join literals that Python joins: only whitespace, newlines, `\`, `+` or parentheses between them.
  const groups: { text: string; line: number; start: number; end: number }[] = [];
  for (const piece of pieces) {
    const last = groups.at(-1);
    if (last && /^[\s+\\()]*$/.test(src.slice(last.end, piece.start))) {
      last.text += piece.text;
      last.end = piece.end;
    } else groups.push({ ...piece });
  }
  const strings = groups.map((g): ScriptString => {
    const lineStart = src.lastIndexOf('\n', g.start - 1) + 1;
    const lineEnd = src.indexOf('\n', g.end);
    const before = src.slice(lineStart, g.start);
    const after = src.slice(g.end, lineEnd === -1 ? src.length : lineEnd).replace(/#.*$/, '');
    return {
      text: g.text,
      line: g.line,
      statement: before.trim() === '' && after.trim() === '' && startsStatement(src, g.start),
      compared: isComparedString(before, after),
    };
  });
  return { strings, numbers, codeLines };
}

/**
 * Whether a string at `start` (alone on its lines) begins a statement: a docstring or bare string, which
 * prints nothing. Not when the code before it continues an expression (`print(`, `x =`, `,`, `+`) or
 * a dict entry (`"k":`); a `:` that ends a block header (`def f():`) does begin one.
 */
function startsStatement(src: string, start: number): boolean {
  const before = src
    .slice(0, start)
    .replace(/#[^\n]*$/gm, '')
    .trimEnd();
  if (!before) return true;
  const last = before.at(-1) ?? '';
  if (last === ':')
    return /^\s*(?:async\s+)?(?:def|class|if|elif|else|for|while|with|try|except|finally)\b[^\n]*:$/m.test(
      before.slice(before.lastIndexOf('\n') + 1),
    );
  return !/[([{,=+\-*/%\\<>|&^~@]/.test(last) && !/\b(?:return|yield|raise|print|assert|in|not|and|or|if|else|lambda|await)$/.test(before);
}

/** A numeric literal of Python source (underscores allowed). */
export const NUMBER = /(?<![\w.])(?:\d[\d_]*\.\d*|\.\d+|\d[\d_]*)(?:[eE][+-]?\d+)?(?![\w.])/g;

/** A string a condition compares with (`"shapes cannot" in str(e)`, `msg == "…"`), which prints nothing. */
function isComparedString(before: string, after: string): boolean {
  const a = after.trimStart();
  const b = before.trimEnd();
  return (
    /^(?:not\s+in|in)\b|^[=!]=/.test(a) ||
    /(?:[=!]=|\bin|\bnot in|\.(?:startswith|endswith|find|index|count)\(|\bre\.(?:search|match|fullmatch|findall)\()$/.test(b)
  );
}
