// A notebook shows the value of a cell's last bare expression; a script does not. Where the report writes what such an
// expression showed (`module.bn.running_mean, module.bn.running_var` then `# outputs: (tensor([4.]), …)`), the
// script prints it, so the run shows what the report shows.
import { MARK } from './python-helpers.js';

/** A comment that gives what the line above displayed: `# outputs: …`, `# Out: …`, `# prints …`, `# -> …`. */
const OUTPUT_COMMENT = /^\s*#\s*(?:outputs?|out|prints?|printed|returns?|result|gives|shows|displays?|->|=>|>>)\s*:?\s*\S/i;
const KEYWORDS = 'import|from|def|class|if|elif|else|for|while|with|try|except|finally|return|raise|assert|del|pass|break|continue';
const STATEMENT_START = new RegExp(`^(?:${KEYWORDS}|global|nonlocal|print|lambda|async|await|yield)\\b|^[@#]`);

/** A line that is a whole expression statement and has no call at its top: names, attributes, subscripts, tuples of them. */
function isBareValue(line: string): boolean {
  const t = line.replace(/\s+#.*$/, '').trimEnd();
  if (!t || /^\s/.test(line) || STATEMENT_START.test(t)) return false;
  if (/(?<![=!<>])=(?!=)|\+=|-=|\*=|\/=/.test(t)) return false;
  if (!/^[A-Za-z_][\w.]*(?:\[[^\]\n]*\])?(?:\s*,\s*[A-Za-z_][\w.]*(?:\[[^\]\n]*\])?)*\s*,?$/.test(t)) return false;
  return true;
}

/** The value a comment gives (`(tensor([4.]), tensor([5.]))` of `# outputs: (tensor([4.]), tensor([5.]))`). */
function commentValue(comment: string): string {
  return comment
    .replace(/^\s*#\s*/, '')
    .replace(/^(?:outputs?|out|prints?|printed|returns?|result|gives|shows|displays?|->|=>|>>)\s*:?\s*/i, '')
    .trim();
}

/**
 * Prints each bare expression whose displayed value the report gives in the comment after it. The same expression
 * shown again with a different value is the report's contrast (a working case, then the one that fails): the later
 * one is asserted to show the first value, so the script fails while the variants disagree and passes once they agree.
 */
export function showNotebookValues(code: string): { code: string; edits: string[] } {
  const lines = code.split('\n');
  let shown = 0;
  let contrasts = 0;
  const first = new Map<string, string>();
  for (let i = 0; i < lines.length; i += 1) {
    const line = lines[i] ?? '';
    if (!isBareValue(line)) continue;
    let j = i + 1;
    while (j < lines.length && !(lines[j] ?? '').trim()) j += 1;
    const trailing = /\s+#.*$/.exec(line)?.[0] ?? '';
    if (!OUTPUT_COMMENT.test(trailing) && !OUTPUT_COMMENT.test(lines[j] ?? '')) continue;
    const expr = line.replace(/\s+#.*$/, '').trimEnd();
    // A tuple prints as the notebook shows it: `(a, b)`.
    const value = expr.replace(/,\s*$/, '');
    const shownAs = commentValue(OUTPUT_COMMENT.test(trailing) ? trailing : (lines[j] ?? ''));
    const key = value.replace(/\s+/g, '');
    const before = first.get(key);
    const tuple = /,/.test(expr) ? `(${value})` : value;
    if (before !== undefined && before !== shownAs && !/['"\\]/.test(before)) {
      lines[i] =
        `repgen_shown = ${tuple}${trailing}\nprint(repgen_shown)  ${MARK}\n` +
        `assert str(repgen_shown) == '${before}', f"${value.replace(/[{}"]/g, '')} is {repgen_shown}; the report shows ${before} for it above"  ${MARK}`;
      contrasts += 1;
    } else lines[i] = `print(${tuple})${trailing}`;
    if (before === undefined) first.set(key, shownAs);
    shown += 1;
  }
  const printedContrasts = contrastPrinted(lines);
  if (printedContrasts)
    return {
      code: lines.join('\n'),
      edits: [
        ...(shown ? [`printed ${shown} bare expression${shown === 1 ? '' : 's'} whose value the report shows in a comment`] : []),
        `asserted that the value the report prints twice with different results shows the first result the second time ` +
          `(the report contrasts a working case with the one that fails)`,
      ],
    };
  if (!shown) return { code, edits: [] };
  const edits = [
    `printed ${shown} bare expression${shown === 1 ? '' : 's'} whose value the report shows in a comment (a notebook displays it, a script does not)`,
  ];
  if (contrasts)
    edits.push(
      `asserted that the expression the report shows twice with different values shows the first value the second time ` +
        `(the report contrasts a working case with the one that fails)`,
    );
  return { code: lines.join('\n'), edits };
}

/** `print(E)  # tensor(0.9849)`, `print(x)  # prints '3'`: a printed value the report gives in the comment after it. */
const PRINTED = /^print\((.+)\)(\s+#\s*(?:(?:outputs?|prints?|printed|returns?|result|gives|shows|->|=>)\s*:?\s*)?['"]?(.+?)['"]?\s*)$/;
/** A comment that is a value as Python prints it, not words: `tensor(nan)`, `0.98`, `[1, 2]`, `None`. */
const VALUE_TEXT = /^(?:[A-Za-z_][\w.]*\(.*\)|-?(?:\d[\d.]*(?:e[-+]?\d+)?|nan|inf)|\[.*\]|\(.*\)|\{.*\}|True|False|None)$/;

/**
 * The same expression printed twice, the comments giving two different values, and the expression's root name not
 * assigned in between (the same object, used two ways: updated with the whole batch, then one sample at a time): the
 * second print is asserted to show the first value. A name assigned again in between is another computation (the
 * project's value, then a reference library's), which the report may not claim must agree: left alone.
 */
function contrastPrinted(lines: string[]): number {
  const first = new Map<string, { value: string; at: number }>();
  let n = 0;
  for (let i = 0; i < lines.length; i += 1) {
    const m = PRINTED.exec(lines[i] ?? '');
    const expr = m?.[1]?.trim() ?? '';
    const shownAs = m?.[3]?.trim() ?? '';
    if (!m || !VALUE_TEXT.test(shownAs) || /,/.test(expr.replace(/\([^()]*\)|\[[^[\]]*\]/g, ''))) continue;
    const key = expr.replace(/\s+/g, '');
    const before = first.get(key);
    if (!before) {
      first.set(key, { value: shownAs, at: i });
      continue;
    }
    const root = /^[A-Za-z_]\w*/.exec(expr)?.[0] ?? '';
    const assigned = new RegExp(`^\\s*(?:[\\w.]+\\s*,\\s*)*${root}\\s*(?:,[^=]*)?=(?!=)`);
    if (before.value === shownAs || /['"\\]/.test(before.value) || !root || lines.slice(before.at + 1, i).some((l) => assigned.test(l)))
      continue;
    lines[i] =
      `repgen_shown = ${expr}  ${MARK}\nprint(repgen_shown)${m[2] ?? ''}\n` +
      `assert str(repgen_shown) == '${before.value}', ` +
      `f"${expr.replace(/[{}"]/g, '')} is {repgen_shown}; the report shows ${before.value} for it above"  ${MARK}`;
    n += 1;
  }
  return n;
}
