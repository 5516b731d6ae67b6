/**
 * Extraction and repair: what turns code as pasted into a report (REPL transcripts, notebook cells, output
 * pasted among the code, Python 2, word-processor quotes, broken indentation) into a module Python compiles.
 * Pure text in, text out; every change is described so the comment can say what was done.
 */

import { keras1To2 } from './keras-renames.js';
import { showNotebookValues } from './notebook-values.js';

export interface Repaired {
  code: string;
  /** One sentence per kind of change made, in the order applied. */
  edits: string[];
}

const PROMPT = /^(?:>>>|\.\.\.)(?: |$)|^In \[\d*\]:\s?|^\s+\.\.\.:\s?/;
const OUT_PROMPT = /^Out\[\d*\]:\s?/;

function bracketBalance(s: string): number {
  let depth = 0;
  let quote: string | null = null;
  for (let i = 0; i < s.length; i += 1) {
    const c = s[i];
    if (quote) {
      if (c === '\\') i += 1;
      else if (c === quote) quote = null;
    } else if (c === '"' || c === "'") quote = c;
    else if (c === '#') break;
    else if (c === '(' || c === '[' || c === '{') depth += 1;
    else if (c === ')' || c === ']' || c === '}') depth -= 1;
  }
  return depth;
}

/** `tensor([1., 2.])` as printed → an expression that builds it; null when the repr cannot be rebuilt. */
export function reprToExpression(repr: string): string | null {
  const flat = repr.replace(/\s+/g, ' ').trim();
  const t = /^tensor\((\[[\d.,\s\-+e[\]]*\])((?:, dtype=torch\.\w+)?)(?:, (?:requires_grad=True|device='[^']*'|grad_fn=<\w+>))*\)$/.exec(
    flat,
  );
  if (t) return `torch.tensor(${t[1]?.replace(/(\d)\.(?=[\s,\]])/g, '$1.0')}${t[2] ?? ''})`;
  const scalar = /^tensor\((-?[\d.]+(?:e[+-]?\d+)?)((?:, dtype=torch\.\w+)?)/.exec(flat);
  if (scalar) return `torch.tensor(${scalar[1]}${scalar[2] ?? ''})`;
  const a = /^array\((\[[\d.,\s\-+e[\]]*\])((?:, dtype=\w+)?)\)$/.exec(flat);
  if (a) return `np.array(${a[1]?.replace(/(\d)\.(?=[\s,\]])/g, '$1.0')}${a[2] ? a[2].replace('dtype=', 'dtype=np.') : ''})`;
  return null;
}

/**
 * REPL transcripts (`>>>`, `...`, `In [n]:`): prompts removed, the interpreter's output dropped, and a bare
 * name whose displayed value is the only place it is defined turned into that value.
 */
export function stripReplPrompts(code: string): Repaired {
  const lines = code.split('\n');
  if (!lines.some((l) => (PROMPT.test(l) && !/^\s+\.\.\.:/.test(l) ? /^(?:>>>|In \[)/.test(l) : false))) return { code, edits: [] };
  const out: string[] = [];
  const assigned = new Set<string>();
  const edits = new Set<string>(['removed the interactive prompts (>>>, ..., In [n]:) and the interpreter output between them']);
  for (let i = 0; i < lines.length; i += 1) {
    const line = lines[i] ?? '';
    if (!PROMPT.test(line)) continue;
    const stmt = line.replace(PROMPT, '');
    for (const m of stmt.matchAll(/^\s*([A-Za-z_]\w*)\s*=(?!=)/g)) assigned.add(m[1] ?? '');
    const bare = /^([A-Za-z_]\w*)\s*$/.exec(stmt);
    if (bare?.[1] && !assigned.has(bare[1])) {
      // The output that follows the bare name, up to the next prompt.
      const shown: string[] = [];
      for (let j = i + 1; j < lines.length && !PROMPT.test(lines[j] ?? ''); j += 1) shown.push((lines[j] ?? '').replace(OUT_PROMPT, ''));
      const expr = reprToExpression(shown.join('\n'));
      if (expr) {
        out.push(`${bare[1]} = ${expr}  # added by RepGen`);
        assigned.add(bare[1]);
        edits.add('turned a value the transcript displays into the assignment that makes it');
        continue;
      }
    }
    out.push(stmt);
  }
  return { code: out.join('\n'), edits: [...edits] };
}

/** Notebook magics and shell escapes (`%matplotlib inline`, `!pip install x`): not Python. */
export function stripMagics(code: string): Repaired {
  const lines = code.split('\n');
  const kept = lines.filter((l) => !/^\s*(?:%{1,2}[A-Za-z]|!\s*\w)/.test(l));
  return kept.length === lines.length
    ? { code, edits: [] }
    : { code: kept.join('\n'), edits: ['removed notebook magics and shell escapes (%…, !pip …)'] };
}

const OUTPUT_START = [
  /^Traceback \(most recent call last\):/,
  /^(?:[A-Za-z_][\w.]*\.)?[A-Z]\w*(?:Error|Exception|Warning):\s/,
  /^\s*Epoch\s*\[?\d+\s*\/\s*\d+/i,
  /^\s*\d+\/\d+\s*\[[=>.\s]*\]/,
  /^\s*\d{1,3}%\|/,
  /^(?:tensor\(|array\(|Parameter containing:|torch\.Size\(|<[\w.]+ object at 0x)/,
  /^\s*\[+\s*-?\d[\d.e+-]*(?:,|\s+-?\d)/,
  /^\s*(?:loss|acc|accuracy|val_loss|train loss|epoch)\s*[:=]\s*-?[\d.]/i,
];

/**
 * Output pasted among the code (a printed tensor, an "Epoch 1/10 …" line, a progress bar, a traceback):
 * taken out. A line counts only when it starts at column 0 of a statement and matches an output form.
 */
export function stripPastedOutput(code: string): Repaired {
  const lines = code.split('\n');
  const out: string[] = [];
  let removed = 0;
  let depth = 0;
  for (let i = 0; i < lines.length; i += 1) {
    const line = lines[i] ?? '';
    const startsStatement = depth <= 0;
    if (startsStatement && OUTPUT_START.some((re) => re.test(line)) && !/^\s*\w+\s*=/.test(line)) {
      if (/^Traceback/.test(line)) {
        // Drop through the exception line that ends the traceback.
        let j = i + 1;
        while (j < lines.length && !/^(?:[A-Za-z_][\w.]*\.)?[A-Z]\w*(?:Error|Exception|Interrupt|Exit)\b/.test(lines[j] ?? '')) j += 1;
        removed += j - i + 1;
        i = j;
        continue;
      }
      // A printed value may span lines: drop until its brackets close.
      let bal = bracketBalance(line);
      removed += 1;
      while (bal > 0 && i + 1 < lines.length) {
        i += 1;
        bal += bracketBalance(lines[i] ?? '');
        removed += 1;
      }
      continue;
    }
    depth += bracketBalance(line);
    if (depth < 0) depth = 0;
    out.push(line);
  }
  return removed
    ? {
        code: out.join('\n'),
        edits: [
          `removed ${removed} line${removed === 1 ? '' : 's'} of output pasted among the code (printed values, progress, tracebacks)`,
        ],
      }
    : { code, edits: [] };
}

/** Smart quotes, non-breaking spaces and the ellipsis character, as word processors and web pages leave them. */
export function normalizeCharacters(code: string): Repaired {
  const fixed = code
    .replace(/[\u201c\u201d\u201e\u2033]/g, '"')
    .replace(/[\u2018\u2019\u201a\u2032]/g, "'")
    .replace(/[\u00a0\u2002\u2003\u2009\u200b\ufeff]/g, (c) => (c === '\u200b' || c === '\ufeff' ? '' : ' '))
    .replace(/\u2026/g, '...')
    .replace(/\t/g, '    ');
  const edits: string[] = [];
  if (/[\u201c\u201d\u201e\u2018\u2019\u201a\u2032\u2033]/.test(code)) edits.push('replaced typographic quotes with ASCII quotes');
  if (/\u2026/.test(code)) edits.push('replaced the ellipsis character with `...`');
  return { code: fixed, edits };
}

/** The whole snippet indented (copied out of a class or a function): the common indentation removed. */
export function dedentCommon(code: string): Repaired {
  const lines = code.split('\n');
  const indents = lines.filter((l) => l.trim() && !/^\s*#/.test(l)).map((l) => /^ */.exec(l)?.[0].length ?? 0);
  const min = indents.length ? Math.min(...indents) : 0;
  if (min === 0) return { code, edits: [] };
  return {
    code: lines.map((l) => (l.slice(0, min).trim() ? l : l.slice(min))).join('\n'),
    edits: [`removed the common indentation (${min} spaces) the code was pasted with`],
  };
}

/** Python 2: `print x`, `print "a" % b`, `except E, e:`; rewritten to Python 3. */
export function python2To3(code: string): Repaired {
  let n = 0;
  const lines = code.split('\n').map((line) => {
    const p = /^(\s*)print(?:\s+(?![=(.,)\]:])(.*?)|\s*)$/.exec(line);
    if (p && !/^\s*print\s*\(/.test(line)) {
      n += 1;
      const rest = (p[2] ?? '').trim();
      const comment = /\s+#[^'"]*$/.exec(rest)?.[0] ?? '';
      const body = comment ? rest.slice(0, -comment.length) : rest;
      if (body.startsWith('>>')) return line;
      return body.endsWith(',') ? `${p[1]}print(${body.slice(0, -1)}, end=' ')${comment}` : `${p[1]}print(${body})${comment}`;
    }
    const e = /^(\s*except\s+[\w.]+)\s*,\s*(\w+)\s*:/.exec(line);
    if (e) {
      n += 1;
      return line.replace(/^(\s*except\s+[\w.]+)\s*,\s*(\w+)\s*:/, '$1 as $2:');
    }
    return line;
  });
  return n
    ? { code: lines.join('\n'), edits: [`rewrote ${n} Python 2 statement${n === 1 ? '' : 's'} (print, except E, e) for Python 3`] }
    : { code, edits: [] };
}

/**
 * Indentation as pasted: a line indented deeper than any open block without a `:` before it, or dedented to a
 * level no open block has ("unindent does not match"), is put at the nearest open level. Lines inside
 * brackets or triple-quoted strings are left alone.
 */
export function repairIndentation(code: string): Repaired {
  const lines = code.split('\n');
  const stack: number[] = [0];
  let depth = 0;
  let inTriple: string | null = null;
  let expectIndent = false;
  let continued = false;
  let logicalStart = '';
  let changed = 0;
  const out: string[] = [];
  const BLOCK = /^\s*(?:def|class|if|elif|else|for|while|try|except|finally|with|async\s+(?:def|for|with)|match|case)\b/;
  const endsBlock = (line: string) => /:\s*(?:#.*)?$/.test(line.replace(/(['"]).*?\1/g, '""'));
  for (const raw of lines) {
    let line = raw;
    const trimmed = line.trim();
    if (inTriple || depth > 0 || continued || !trimmed || trimmed.startsWith('#')) {
      out.push(line);
      if (trimmed && !trimmed.startsWith('#')) {
        const wasOpen = inTriple !== null || depth > 0 || continued;
        ({ inTriple, depth, continued } = scanLine(line, inTriple, depth));
        // A logical line that spans lines (a multi-line signature) opens its block on its last line.
        if (wasOpen && !inTriple && depth === 0 && !continued) expectIndent = BLOCK.test(logicalStart) && endsBlock(line);
      }
      continue;
    }
    const indent = /^ */.exec(line)?.[0].length ?? 0;
    let want = indent;
    const top = stack[stack.length - 1] ?? 0;
    if (expectIndent) {
      if (indent > top) stack.push(indent);
      else {
        // A block opener with nothing indented under it: indent this line under it.
        want = top + 4;
        stack.push(want);
      }
    } else if (indent > top) {
      want = top;
    } else if (indent < top) {
      while ((stack[stack.length - 1] ?? 0) > indent) stack.pop();
      want = stack[stack.length - 1] ?? 0;
    }
    if (want !== indent) {
      line = ' '.repeat(want) + line.trimStart();
      changed += 1;
    }
    out.push(line);
    logicalStart = line;
    ({ inTriple, depth, continued } = scanLine(line, inTriple, depth));
    expectIndent = !inTriple && depth === 0 && !continued && BLOCK.test(line) && endsBlock(line);
  }
  return changed
    ? { code: out.join('\n'), edits: [`re-indented ${changed} line${changed === 1 ? '' : 's'} whose indentation matched no open block`] }
    : { code, edits: [] };
}

function scanLine(line: string, inTriple: string | null, depth: number): { inTriple: string | null; depth: number; continued: boolean } {
  let quote: string | null = null;
  for (let i = 0; i < line.length; i += 1) {
    const c = line[i] ?? '';
    const three = line.slice(i, i + 3);
    if (inTriple) {
      if (three === inTriple) {
        inTriple = null;
        i += 2;
      }
      continue;
    }
    if (quote) {
      if (c === '\\') i += 1;
      else if (c === quote) quote = null;
      continue;
    }
    if (three === '"""' || three === "'''") {
      inTriple = three;
      i += 2;
    } else if (c === '"' || c === "'") quote = c;
    else if (c === '#') break;
    else if ('([{'.includes(c)) depth += 1;
    else if (')]}'.includes(c)) depth = Math.max(0, depth - 1);
  }
  return { inTriple, depth, continued: !inTriple && /\\$/.test(line) };
}

/** All repairs in order. `parses` tells whether a version compiles; indentation is touched only when needed. */
export function repairSnippet(code: string, parses: (code: string) => boolean): Repaired {
  const edits: string[] = [];
  let cur = code;
  for (const step of [
    normalizeCharacters,
    stripReplPrompts,
    stripMagics,
    stripPastedOutput,
    dedentCommon,
    python2To3,
    keras1To2,
    showNotebookValues,
  ]) {
    const r = step(cur);
    cur = r.code;
    edits.push(...r.edits);
  }
  // Only lines Python itself rejects are moved (unexpected indent, unindent matching no block), so this runs
  // whatever tree-sitter says: its grammar forgives inconsistent dedents that CPython does not.
  const r = repairIndentation(cur);
  if (r.edits.length && parses(r.code)) {
    cur = r.code;
    edits.push(...r.edits);
  }
  return { code: cur, edits };
}
