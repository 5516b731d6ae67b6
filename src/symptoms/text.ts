/**
 * Small text helpers shared by the readers and the matcher. Pure.
 */

/**
 * Splits output into lines the way a terminal shows them: `\r\n` and `\n` end a line, and a bare `\r`
 * (progress bars redrawing themselves) keeps only the last redraw, which is what stays on screen.
 */
export function screenLines(text: string): string[] {
  return text.split(/\r?\n/).map((line) => {
    if (!line.includes('\r')) return line;
    const parts = line.split('\r').filter((p) => p.trim() !== '');
    return parts.at(-1) ?? '';
  });
}

/**
 * Longest line the pattern scanners look at. Output and issue text are untrusted: a megabyte-long line would
 * make backtracking patterns quadratic, and no traceback, warning or metric line is that long.
 * @defaultValue 4000
 */
export const MAX_SCAN_LINE = 4000;

/** Word set of a message: letters runs and digit runs, lower-cased (the benchmark judge's tokenisation). */
export function words(text: string): Set<string> {
  return new Set(text.toLowerCase().match(/[a-z_]+|\d+/g) ?? []);
}

/** Word set with every number replaced by `#`: compares messages whose shapes or sizes differ. */
export function maskedWords(text: string): Set<string> {
  return new Set(
    text
      .toLowerCase()
      .replace(/\d+/g, ' # ')
      .match(/[a-z_]+|#/g) ?? [],
  );
}

/** Jaccard overlap of two word sets (1 when both are empty). */
export function jaccard(a: Set<string>, b: Set<string>): number {
  if (a.size === 0 && b.size === 0) return 1;
  let inter = 0;
  for (const w of a) if (b.has(w)) inter += 1;
  return inter / (a.size + b.size - inter);
}

/** A line's shape: every number folded to `#` (the judge's rule for silent bugs), trimmed. */
export function lineShape(line: string): string {
  return line.trim().replace(/\d+(\.\d+)?/g, '#');
}

/** The numbers of a text, in order. */
export function numbersIn(text: string): string[] {
  return text.match(/\d+(?:\.\d+)?/g) ?? [];
}

/** Shortens a long excerpt to `max` characters, keeping its start and end. */
export function clip(text: string, max = 600): string {
  if (text.length <= max) return text;
  const half = Math.floor((max - 5) / 2);
  return `${text.slice(0, half)} […] ${text.slice(-half)}`;
}
