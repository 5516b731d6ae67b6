// What the report's traceback says about the snippet: the statement it failed at (what comes after it never ran,
// so a name used only there blocks nothing), and whether it failed inside code the report does not show.
import type { Analysis } from './scope.js';

const norm = (s: string) => s.replace(/#.*$/, '').replace(/\s+/g, '');

/**
 * Index of the module-level statement the report's traceback ends in (its last `<module>` line found in the code),
 * or null when the traceback names none of the code's statements.
 */
export function reportedStatement(a: Analysis, tracebackModuleLines: readonly string[]): number | null {
  for (const line of [...tracebackModuleLines].reverse()) {
    const t = norm(line);
    if (t.length < 4) continue;
    const lines = a.source.split('\n');
    const row = lines.findIndex((l) => norm(l) === t);
    if (row < 0) continue;
    const i = a.statements.findIndex((st) => st.startPosition.row <= row && row <= st.endPosition.row);
    if (i >= 0) return i;
  }
  return null;
}

/** A traceback frame outside any installed package: the reporter's own code. */
const FRAME = /^\s*File "([^"]+)", line \d+, in (\S+)/gm;
const LIBRARY = /site-packages|dist-packages|[\\/]lib[\\/]python\d|<frozen|[\\/]torch[\\/]|[\\/]numpy[\\/]/;

/**
 * Functions of the reporter's own code that the report's traceback runs through and the snippet does not define
 * (`forward` of a model the report never shows): a stand-in for that code could not show what failed in it.
 */
export function unseenFramesOf(a: Analysis, reportText: string): string[] {
  const defined = new Set<string>();
  for (const m of a.source.matchAll(/^\s*def\s+(\w+)/gm)) defined.add(m[1] ?? '');
  const out: string[] = [];
  for (const m of reportText.matchAll(FRAME)) {
    const [, file = '', fn = ''] = m;
    if (LIBRARY.test(file) || fn === '<module>' || fn.startsWith('<') || defined.has(fn) || out.includes(fn)) continue;
    out.push(fn);
  }
  return out;
}

/** Classes a stand-in model scores when the code states none: more than any class id a report's data holds. */
const STAND_IN_CLASSES = 1000;

/**
 * Output width of a stand-in for a model the report calls but never shows: the class count the code states, a wide
 * score vector when a classification loss or argmax reads it (no class id of the data falls outside it), else the
 * given width (1 for a `(N, 1)` target).
 */
export function standInWidth(body: string, fallback: number): number {
  const stated = /\b(?:num_classes|n_classes|nb_classes|classes)\s*=\s*(\d{1,5})\b/.exec(body);
  if (stated) return Number(stated[1]);
  if (/CrossEntropy|NLLLoss|cross_entropy|nll_loss|\.argmax\(|\.max\(\s*(?:1|dim\s*=\s*1)/.test(body)) return STAND_IN_CLASSES;
  return fallback;
}
