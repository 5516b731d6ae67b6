// The report's own import lines, for the env's import proof (issue 39): Keras 2 code's `from keras.layers.core import
// Dense` imports nothing on Keras 3, though `import keras` does; only the line itself tells. Read statically and kept as
// data (a module path and the names taken from it), never as code: the proof imports them with importlib, so a hostile
// line (`import os; os.system(…)`) is at most a module name that fails the identifier check. Pure.

import type { ImportStatement } from '../types.js';

/** One import line: `from module import names…`, or `import module` (no names); the type lives in types.ts. */
export type { ImportStatement };

const DOTTED = /^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*$/;
const IDENT = /^[A-Za-z_]\w*$/;
/** A line the proof reads at most: more is a paste, not a script's imports. */
const MAX_STATEMENTS = 200;

/** The import lines of `code` (prompt markers stripped), each once, in order; star and relative imports left out. */
export function reportImportStatements(code: string): ImportStatement[] {
  const out: ImportStatement[] = [];
  const seen = new Set<string>();
  const add = (s: ImportStatement): void => {
    const key = `${s.module}:${s.names.join(',')}`;
    if (out.length >= MAX_STATEMENTS || seen.has(key)) return;
    out.push(s);
    seen.add(key);
  };
  const lines = code.split(/\r?\n/).map((l) => l.replace(/^\s*(?:>>>|\.\.\.)\s?/, ''));
  for (let i = 0; i < lines.length; i++) {
    let line = (lines[i] ?? '').replace(/#.*$/, '').trim();
    // `from x import (a,\n b)`: the parenthesised list may span lines.
    if (/^from\s.*\(\s*[^)]*$/.test(line))
      while (i + 1 < lines.length && !line.includes(')')) line += ` ${(lines[++i] ?? '').replace(/#.*$/, '').trim()}`;
    const from = /^from\s+(\S+)\s+import\s+\(?([^()]*?)\)?\s*$/.exec(line);
    if (from) {
      const module = from[1] as string;
      const names = (from[2] as string)
        .split(',')
        .map(
          (n) =>
            n
              .trim()
              .split(/\s+as\s+/)[0]
              ?.trim() ?? '',
        )
        .filter(Boolean);
      if (!DOTTED.test(module) || names.includes('*') || !names.length || !names.every((n) => IDENT.test(n))) {
        if (DOTTED.test(module) && names.includes('*')) add({ module, names: [] });
        continue;
      }
      add({ module, names });
      continue;
    }
    const imp = /^import\s+(.+)$/.exec(line);
    if (!imp) continue;
    for (const part of (imp[1] as string).split(',')) {
      const module =
        part
          .trim()
          .split(/\s+as\s+/)[0]
          ?.trim() ?? '';
      if (DOTTED.test(module)) add({ module, names: [] });
    }
  }
  return out;
}
