// A model's patch is data (issue 41 item 4): read here as text, bounded, and refused whole when any part of it is
// something other than line edits of existing text files (a rename, a mode change, a binary patch, a deletion, a
// link). Nothing here touches a file; the scratch copy applies what this returns. Pure.

/**
 * One hunk: where it starts on each side (as its header says), how many lines each side has (counted from its lines,
 * whatever its header says) and its lines, each with its sign (' ', '-', '+').
 */
export interface Hunk {
  oldStart: number;
  oldLines: number;
  newStart: number;
  newLines: number;
  /** The text after the second `@@` (git's function context), trimmed; '' when none. */
  section: string;
  lines: { sign: ' ' | '-' | '+'; text: string }[];
}

/** The edits of one file; `created`: the diff makes it (`--- /dev/null`). */
export interface FilePatch {
  path: string;
  created: boolean;
  hunks: Hunk[];
}

/** Bounds of a patch: a candidate fix is minimal, and a bigger answer is refused, never cut. */
export interface DiffLimits {
  /** @defaultValue 20000 */
  maxChars: number;
  /** @defaultValue 5 */
  maxFiles: number;
  /** @defaultValue 30 */
  maxHunks: number;
  /** Lines added or removed in all. @defaultValue 200 */
  maxChangedLines: number;
}

export const DEFAULT_DIFF_LIMITS: DiffLimits = { maxChars: 20_000, maxFiles: 5, maxHunks: 30, maxChangedLines: 200 };

export type ParsedDiff = { ok: true; files: FilePatch[]; changedLines: number } | { ok: false; why: string };

/** The highest start line a hunk header may name: no file a candidate patches is longer. */
const MAX_LINE = 10_000_000;
const HUNK = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@(.*)$/;
/** Extended header lines that change something other than text (git's), each refused. */
const REFUSED_HEADERS: [RegExp, string][] = [
  [/^rename (from|to) /, 'renames a file'],
  [/^copy (from|to) /, 'copies a file'],
  [/^(old|new) mode /, "changes a file's mode"],
  [/^deleted file mode /, 'deletes a file'],
  [/^new file mode (?!100644)/, 'makes a link or an executable'],
  [/^similarity index /, 'renames or copies a file'],
  [/^GIT binary patch/, 'carries a binary patch'],
  [/^Binary files /, 'changes a binary file'],
];

/** The path a `---`/`+++` line names: without git's a/ b/ prefix and a trailing tab-separated date; null for /dev/null. */
function headerPath(line: string): string | null {
  let p = line.slice(4).split('\t')[0]!.trim();
  if (p.startsWith('"')) return `\0quoted`; // a C-quoted name (control characters, non-UTF-8): refused by the path policy
  if (p === '/dev/null') return null;
  if (p.startsWith('a/') || p.startsWith('b/')) p = p.slice(2);
  return p;
}

/** Reads a unified diff (`git diff` or `diff -u` form) into file patches, or says why it is refused. Pure. */
export function parseUnifiedDiff(text: string, limits: DiffLimits = DEFAULT_DIFF_LIMITS): ParsedDiff {
  if (text.length > limits.maxChars)
    return { ok: false, why: `the diff is ${text.length} characters, over the ${limits.maxChars} a candidate may have` };
  if (text.includes('\0')) return { ok: false, why: 'the diff holds a NUL byte' };
  const lines = text.replace(/\r\n/g, '\n').split('\n');
  if (lines.at(-1) === '') lines.pop();
  const files: FilePatch[] = [];
  let hunks = 0;
  let changed = 0;
  let i = 0;
  while (i < lines.length) {
    const line = lines[i]!;
    const refused = REFUSED_HEADERS.find(([re]) => re.test(line));
    if (refused) return { ok: false, why: `the diff ${refused[1]} (\`${line.slice(0, 80)}\`)` };
    if (!line.startsWith('--- ')) {
      // git's `diff --git`, `index`, `new file mode 100644` lines and any prose around the diff carry no edit.
      if (HUNK.test(line)) return { ok: false, why: `a hunk at line ${i + 1} has no file header before it` };
      i++;
      continue;
    }
    const next = lines[i + 1];
    if (next === undefined || !next.startsWith('+++ ')) return { ok: false, why: `the file header at line ${i + 1} has no +++ line` };
    const from = headerPath(line);
    const to = headerPath(next);
    if (to === null) return { ok: false, why: `the diff deletes ${from ?? 'a file'}` };
    if (from !== null && from !== to) return { ok: false, why: `the diff renames ${from} to ${to}` };
    const patch: FilePatch = { path: to, created: from === null, hunks: [] };
    i += 2;
    while (i < lines.length && HUNK.test(lines[i]!)) {
      const m = HUNK.exec(lines[i]!)!;
      const oldStart = Number(m[1]);
      const newStart = Number(m[3]);
      if (oldStart > MAX_LINE || newStart > MAX_LINE)
        return { ok: false, why: `a hunk of ${to} names line ${Math.max(oldStart, newStart)}, past any file a candidate may patch` };
      // The hunk's extent is read from its lines, as `git apply --recount` does: a model often miscounts a header
      // ("@@ -1,6 +1,12 @@" over 5 old lines) while its lines are right. The counts it states are not trusted either
      // way: a longer count would swallow what follows, a shorter one would drop edits as prose. Whether the lines
      // are the file's is the apply step's strict check.
      const body = readHunkBody(lines, i + 1);
      i = body.end;
      if (!body.lines.length) return { ok: false, why: `a hunk of ${to} has no lines` };
      const hunk: Hunk = {
        oldStart,
        oldLines: body.lines.filter((l) => l.sign !== '+').length,
        newStart,
        newLines: body.lines.filter((l) => l.sign !== '-').length,
        section: (m[5] ?? '').trim(),
        lines: body.lines,
      };
      changed += hunk.lines.filter((l) => l.sign !== ' ').length;
      patch.hunks.push(hunk);
      hunks++;
    }
    if (!patch.hunks.length) return { ok: false, why: `the diff names ${to} but changes nothing in it` };
    if (files.some((f) => f.path === patch.path)) return { ok: false, why: `the diff patches ${to} twice` };
    files.push(patch);
  }
  if (!files.length) return { ok: false, why: 'no file patch found (a unified diff starts each file with --- and +++ lines)' };
  if (files.length > limits.maxFiles)
    return { ok: false, why: `the diff changes ${files.length} files, over the ${limits.maxFiles} a candidate may` };
  if (hunks > limits.maxHunks) return { ok: false, why: `the diff has ${hunks} hunks, over the ${limits.maxHunks} a candidate may` };
  if (changed > limits.maxChangedLines)
    return { ok: false, why: `the diff changes ${changed} lines, over the ${limits.maxChangedLines} a candidate may` };
  if (changed === 0) return { ok: false, why: 'the diff adds and removes nothing' };
  return { ok: true, files, changedLines: changed };
}

/**
 * A hunk's lines from `start` up to the next hunk or file header, or the first line that is no diff line (prose, git's
 * `diff --git`/`index` lines, a refused extended header: the caller reads those); `\ No newline` markers skipped. An
 * empty line inside the hunk is a context line whose space a model (or a mail client) dropped; empty lines at its end
 * separate it from what follows and are not part of it. Linear in the lines read. Pure.
 */
function readHunkBody(lines: readonly string[], start: number): { lines: Hunk['lines']; end: number } {
  const out: Hunk['lines'] = [];
  let trailingEmpty = 0;
  let i = start;
  for (; i < lines.length; i++) {
    const l = lines[i]!;
    if (l.startsWith('@@')) break;
    if (l.startsWith('--- ') && lines[i + 1]?.startsWith('+++ ')) break;
    if (l.startsWith('\\')) continue;
    const sign = l === '' ? ' ' : l[0];
    if (sign !== ' ' && sign !== '-' && sign !== '+') break;
    out.push({ sign, text: l.slice(1) });
    trailingEmpty = l === '' ? trailingEmpty + 1 : 0;
  }
  return { lines: out.slice(0, out.length - trailingEmpty), end: i };
}
