import { MARK, TQDM_FALLBACK, TRAIN_TEST_SPLIT_FALLBACK, marked } from './python-helpers.js';

/** Packages with a small, faithful stand-in, and the import lines it replaces. */
const STAND_INS: { module: string; line: RegExp; fallback: string; what: string }[] = [
  {
    module: 'tqdm',
    line: /^[ \t]*(?:from tqdm(?:\.auto|\.notebook|\.std)? import tqdm|import tqdm)[ \t]*(?:#.*)?$/gm,
    fallback: TQDM_FALLBACK,
    what: '`tqdm` (a progress bar) is not installed here: iterating without the bar',
  },
  {
    module: 'sklearn',
    line: /^[ \t]*from sklearn\.model_selection import train_test_split[ \t]*(?:#.*)?$/gm,
    fallback: TRAIN_TEST_SPLIT_FALLBACK,
    what: '`scikit-learn` is not installed here: a small `train_test_split` stand-in takes its place',
  },
];

/**
 * For packages the runner lacks but whose use in the script has a small faithful stand-in (tqdm's progress bar,
 * scikit-learn's train_test_split): the import becomes a guarded one with the stand-in. Returns the script
 * unchanged, and no edits, when nothing applies. A module stays "missing" only if one of its other imports remains.
 */
export function substituteMissingModules(
  script: string,
  missing: readonly string[],
): { script: string; edits: string[]; substituted: string[] } {
  let out = script;
  const edits: string[] = [];
  const substituted: string[] = [];
  for (const s of STAND_INS) {
    if (!missing.includes(s.module)) continue;
    let replaced = false;
    out = out.replace(s.line, (line) => {
      // Already a guarded import tier 0 wrote (indented in its try block): leave it.
      if (line.endsWith(MARK) && /^\s+/.test(line)) return line;
      replaced = true;
      const indent = /^[ \t]*/.exec(line)?.[0] ?? '';
      return marked(s.fallback)
        .map((l) => (l.trim() ? indent + l : l))
        .join('\n');
    });
    if (replaced) edits.push(s.what);
    // No longer needed when every import of the module left is one of the guarded ones.
    const imports = out.split('\n').filter((l) => new RegExp(`^\\s*(?:from|import)\\s+${s.module}\\b`).test(l));
    if (imports.length && imports.every((l) => l.endsWith(MARK) && /^\s+/.test(l))) substituted.push(s.module);
  }
  return { script: out, edits, substituted };
}
