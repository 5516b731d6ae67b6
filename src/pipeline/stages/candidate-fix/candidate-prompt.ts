// The candidate fix's prompt material (issue 41: the step cost 4–11× a tier-0 case, its prompt 15–29k characters).
// A fix needs the code the failure runs through, not whole files: the enclosing def of each project frame of the
// failing run's traceback and of the calls the reproduction makes, as numbered windows under a character budget; the
// context bundle only for chunks not already shown, under what that budget leaves. Nothing is shown twice. Pure, but
// for `readProjectSources`, which reads the traceback's files through the copies port.
import type { ContextBundle, ContextChunk } from '../../../context/types.js';
import { DEFAULT_WORKSPACE_MOUNT, type Workspace } from '../../../exec/types.js';
import type { Frame } from '../../../symptoms/types.js';
import { refusedPath } from './path-policy.js';
import type { PatchedCopies } from './scratch-copy.js';

/** Words of prompts/candidate-fix.md that tell its request apart from the pipeline's others (a cassette's replay reads them). */
export const CANDIDATE_PROMPT_MARK = 'Propose the smallest change';
/** Characters of code (sources and context together) a candidate prompt shows. @defaultValue 8000 */
export const DEFAULT_CANDIDATE_CODE_CHARS = 8000;
/** Files of the checkout the traceback passes through that are read, innermost first. */
const MAX_SOURCE_FILES = 3;
/** Lines of one function shown at most: its signature and the lines around where the failure passes. */
const MAX_WINDOW_LINES = 60;
/** Lines around a frame's line when its function is longer than MAX_WINDOW_LINES, or when it is at module level. */
const AROUND = 12;
/** Names a reproduction's calls are looked up by, at most (a hostile script may call thousands). */
const MAX_CALLED_NAMES = 200;

export interface ProjectFrame {
  /** The file, relative to the checkout's root. */
  path: string;
  line: number;
  function: string;
}

/** The traceback's frames in files of the checkout (innermost first), relative to its root; refused paths left out. Pure. */
export function projectFrames(frames: readonly Frame[], workspace: Pick<Workspace, 'hostPath' | 'mountPath'>): ProjectFrame[] {
  const roots = [workspace.mountPath ?? DEFAULT_WORKSPACE_MOUNT, workspace.hostPath];
  const out: ProjectFrame[] = [];
  for (const f of [...frames].reverse()) {
    const root = roots.find((r) => f.file.startsWith(`${r}/`));
    if (!root) continue;
    const path = f.file.slice(root.length + 1);
    if (refusedPath(path) === null) out.push({ path, line: f.line, function: f.function });
  }
  return out;
}

/** The files those frames are in, at most MAX_SOURCE_FILES, innermost first. Pure. */
export function sourceFiles(frames: readonly ProjectFrame[]): string[] {
  return [...new Set(frames.map((f) => f.path))].slice(0, MAX_SOURCE_FILES);
}

/** The texts of the traceback's files, through the copies port (one read, as the recordings have it). */
export async function readProjectSources(frames: readonly ProjectFrame[], workspace: Workspace, copies: PatchedCopies) {
  const files = sourceFiles(frames);
  if (!files.length) return new Map<string, string | null>();
  return copies.read(workspace, files);
}

/** Names a script calls (`f(`, `obj.m(`, `Cls(`), first seen first, bounded. Pure. */
export function calledNames(script: string): string[] {
  const names = new Set<string>();
  for (const m of script.slice(0, 100_000).matchAll(/([A-Za-z_][A-Za-z0-9_]*)\s*\(/g)) {
    if (names.size >= MAX_CALLED_NAMES) break;
    if (!PY_WORDS.has(m[1]!)) names.add(m[1]!);
  }
  return [...names];
}
const PY_WORDS = new Set(['if', 'for', 'while', 'print', 'assert', 'return', 'and', 'or', 'not', 'in', 'with', 'def', 'class', 'len']);

const DEF = /^(\s*)(?:async\s+def|def|class)\s+([A-Za-z_][A-Za-z0-9_]*)/;
const indentOf = (l: string): number => /^\s*/.exec(l)![0].length;

/** A 1-based inclusive range of a file's lines. */
export interface Window {
  start: number;
  end: number;
}

/** A def's window, the last line of its signature, and its docstring's lines after the first (null: none or short). */
type Def = Window & { sigEnd: number; doc: Window | null };

/**
 * The def (or class) a 0-based line index belongs to, by indentation: its decorators to its body's last line; null at
 * module level. A signature over several lines (black's `):` at the def's indent) is read to its closing colon. Pure.
 */
export function enclosingDef(lines: readonly string[], at: number): Def | null {
  let defAt = -1;
  if (DEF.test(lines[at] ?? '')) defAt = at;
  else {
    let i = at;
    while (i > 0 && !lines[i]!.trim()) i--;
    const indent = indentOf(lines[i] ?? '');
    for (let j = i - 1; j >= 0 && indent > 0; j--) {
      const m = DEF.exec(lines[j]!);
      if (m && m[1]!.length < indent) {
        defAt = j;
        break;
      }
    }
  }
  if (defAt < 0) return null;
  return defWindow(lines, defAt);
}

/** The window of the def or class at 0-based `defAt`. Pure. */
function defWindow(lines: readonly string[], defAt: number): Def {
  const indent = indentOf(lines[defAt]!);
  let start = defAt;
  while (start > 0 && lines[start - 1]!.trim().startsWith('@') && indentOf(lines[start - 1]!) === indent) start--;
  let sigEnd = defAt;
  let depth = 0;
  for (let i = defAt; i < lines.length && i < defAt + 40; i++) {
    const code = lines[i]!.replace(/#.*$/, '');
    for (const ch of code) depth += ch === '(' || ch === '[' || ch === '{' ? 1 : ch === ')' || ch === ']' || ch === '}' ? -1 : 0;
    sigEnd = i;
    if (depth <= 0 && code.trimEnd().endsWith(':')) break;
  }
  let end = sigEnd;
  for (let i = sigEnd + 1; i < lines.length; i++) {
    const l = lines[i]!;
    if (!l.trim()) continue;
    if (indentOf(l) <= indent) break;
    end = i;
  }
  return { start: start + 1, end: end + 1, sigEnd: sigEnd + 1, doc: docstring(lines, sigEnd + 1, end) };
}

/** The lines of a docstring opening at 0-based `at` after its first, when more than 3 (examples, argument lists). */
function docstring(lines: readonly string[], at: number, last: number): Window | null {
  const open = /^\s*[rRuUbB]?("""|''')/.exec(lines[at] ?? '');
  if (!open) return null;
  const q = open[1]!;
  if (lines[at]!.indexOf(q, lines[at]!.indexOf(q) + 3) >= 0) return null;
  for (let i = at + 1; i <= last && i < lines.length; i++)
    if (lines[i]!.includes(q)) return i - at > 3 ? { start: at + 2, end: i + 1 } : null;
  return null;
}

/**
 * What to show of one function: all of it but a long docstring's body when short, else its signature and the lines
 * around `line` (its first lines when no line is known). Pure.
 */
function cut(def: Def, line: number | null): Window[] {
  const body = def.doc
    ? [
        { start: def.start, end: def.doc.start - 1 },
        { start: def.doc.end + 1, end: def.end },
      ].filter((w) => w.start <= w.end)
    : [{ start: def.start, end: def.end }];
  const size = body.reduce((n, w) => n + w.end - w.start + 1, 0);
  if (size <= MAX_WINDOW_LINES) return body;
  const head: Window = { start: def.start, end: Math.min(def.doc ? def.doc.start - 1 : def.sigEnd, def.start + 15) };
  const from = def.doc ? def.doc.end + 1 : head.end + 1;
  if (line === null) return [head, { start: from, end: Math.min(def.end, from + MAX_WINDOW_LINES - (head.end - head.start) - 2) }];
  return [head, { start: Math.max(from, line - AROUND), end: Math.min(def.end, line + AROUND) }];
}

/** One function shown, in the order it matters: what it is, where, and its lines. */
interface Shown {
  path: string;
  windows: Window[];
}

/** The innermost project frames shown before anything else. */
const INNER_FRAMES = 2;

/**
 * What to show, most needed first: the functions of the innermost project frames, the functions of these files the
 * script calls, those that what is picked so far calls (one level), the innermost file's functions that the other
 * files call, then the functions of the outer frames. A name
 * defined more than once in these files (`update`, `forward`) is not followed: which one runs is not known. Pure.
 */
export function pickWindows(
  frames: readonly ProjectFrame[],
  texts: ReadonlyMap<string, string | null>,
  called: readonly string[],
): Shown[] {
  const split = new Map<string, string[]>();
  const linesOf = (p: string): string[] | null => {
    const t = texts.get(p);
    if (t === null || t === undefined) return null;
    if (!split.has(p)) split.set(p, t.split('\n'));
    return split.get(p)!;
  };
  const ofFrame = (f: ProjectFrame): Shown[] => {
    const lines = linesOf(f.path);
    if (!lines || f.line < 1 || f.line > lines.length) return [];
    const def = enclosingDef(lines, f.line - 1);
    const around = { start: Math.max(1, f.line - AROUND), end: Math.min(lines.length, f.line + AROUND) };
    return [{ path: f.path, windows: def ? cut(def, f.line) : [around] }];
  };
  const defs = new Map<string, { path: string; at: number }[]>();
  for (const path of texts.keys())
    linesOf(path)?.forEach((l, at) => {
      const m = DEF.exec(l);
      if (!m) return;
      const list = defs.get(m[2]!) ?? [];
      if (list.length < 2) list.push({ path, at }); // two are as good as many: the name is not followed
      defs.set(m[2]!, list);
    });
  const taken = new Set<string>();
  const defsOf = (names: Iterable<string>): Shown[] =>
    [...names].flatMap((n) => {
      const d = defs.get(n);
      if (d?.length !== 1 || taken.has(n)) return [];
      taken.add(n);
      return [{ path: d[0]!.path, windows: cut(defWindow(linesOf(d[0]!.path)!, d[0]!.at), null) }];
    });
  const picks = [...frames.slice(0, INNER_FRAMES).flatMap(ofFrame), ...defsOf(called)];
  const textOf = (ps: readonly Shown[]): string =>
    ps.flatMap((p) => p.windows.flatMap((w) => linesOf(p.path)!.slice(w.start - 1, w.end))).join('\n');
  // Those in the innermost file (the failing module) first.
  const inner = frames[0]?.path;
  const next = calledNames(textOf(picks));
  picks.push(...defsOf([...next.filter((n) => defs.get(n)?.[0]?.path === inner), ...next]));
  // The innermost file's functions that its callers' files use (`compute` calling `_r2_score_compute` beside the
  // frame's `update`): the failing module's surface, where a fix often goes.
  const callers = [...texts.keys()].filter((p) => p !== inner).map((p) => texts.get(p) ?? '');
  picks.push(...defsOf(calledNames(callers.join('\n')).filter((n) => defs.get(n)?.[0]?.path === inner)));
  picks.push(...frames.slice(INNER_FRAMES).flatMap(ofFrame));
  return picks;
}

/** Numbered windows of files, merged where they touch, under `budget` characters; what was shown, per file. Pure. */
export function renderWindows(
  picks: readonly Shown[],
  texts: ReadonlyMap<string, string | null>,
  budget: number,
): { text: string; shown: Map<string, Window[]>; left: number } {
  const shown = new Map<string, Window[]>();
  const split = new Map<string, string[] | undefined>();
  const linesOf = (path: string): string[] | undefined => {
    if (!split.has(path)) split.set(path, texts.get(path)?.split('\n'));
    return split.get(path);
  };
  let used = 0;
  let left = 0;
  for (const p of picks) {
    const lines = linesOf(p.path);
    if (!lines) continue;
    const have = shown.get(p.path) ?? [];
    const fresh = p.windows.filter((w) => !have.some((h) => h.start <= w.start && h.end >= w.end));
    if (!fresh.length) continue;
    const merged = merge([...have, ...fresh]);
    const cost = chars(merged, lines) - chars(have, lines);
    if (used + cost > budget) {
      left++;
      continue;
    }
    used += cost;
    shown.set(p.path, merged);
  }
  const parts = [...shown].map(([path, ws]) => {
    const lines = linesOf(path)!;
    const body: string[] = [];
    for (const [k, w] of ws.entries()) {
      if (k > 0 || w.start > 1) body.push('    | …');
      for (let i = w.start; i <= w.end; i++) body.push(`${String(i).padStart(4, ' ')}| ${lines[i - 1] ?? ''}`);
    }
    if (ws.at(-1)!.end < lines.length) body.push('    | …');
    return `# ${path}\n\`\`\`text\n${body.join('\n')}\n\`\`\``;
  });
  const more = left ? `\n(${left} more function${left > 1 ? 's' : ''} of these files not shown: over the prompt's budget)` : '';
  return { text: parts.join('\n\n') + more, shown, left };
}

function merge(ws: readonly Window[]): Window[] {
  const out: Window[] = [];
  for (const w of [...ws].sort((a, b) => a.start - b.start)) {
    const last = out.at(-1);
    if (last && w.start <= last.end + 2) last.end = Math.max(last.end, w.end);
    else out.push({ ...w });
  }
  return out;
}

function chars(ws: readonly Window[], lines: readonly string[]): number {
  let n = 0;
  for (const w of ws) for (let i = w.start; i <= w.end; i++) n += (lines[i - 1]?.length ?? 0) + 7;
  return n + ws.length * 8;
}

/**
 * The context bundle's chunks not already shown (a chunk inside a shown window of the same file is left out), those
 * defining a function the script calls first, then in the bundle's order, under `budget` characters. Pure.
 */
export function renderContextChunks(
  bundle: ContextBundle | undefined,
  shown: ReadonlyMap<string, Window[]>,
  called: readonly string[],
  budget: number,
  shownText = '',
): string {
  if (!bundle?.chunks.length) return '(none)';
  const callsOf = (names: Iterable<string>): ((c: ContextChunk) => boolean) => {
    const wanted = new Set(names);
    return (c) => !!c.symbol && wanted.has(c.symbol.split('.').at(-1)!);
  };
  // The chunks defining what the script calls, then those that these (or the shown sources) call, then the rest.
  const named = callsOf(called);
  const first = bundle.chunks.filter(named);
  const next = callsOf(calledNames([shownText, ...first.map((c) => c.text)].join('\n')));
  const second = bundle.chunks.filter((c) => !named(c) && next(c));
  const seen = new Set<string>();
  const parts: string[] = [];
  let used = 0;
  let left = 0;
  for (const c of [...first, ...second, ...bundle.chunks]) {
    const key = `${c.path}:${c.startLine}-${c.endLine}`;
    if (seen.has(key)) continue;
    seen.add(key);
    if ((shown.get(c.path) ?? []).some((w) => w.start <= c.startLine && w.end >= c.endLine)) continue;
    const part = `# ${c.path}:${c.startLine}-${c.endLine}${c.symbol ? ` (${c.symbol})` : ''}\n\`\`\`python\n${c.text}\n\`\`\``;
    if (used + part.length > budget) {
      left++;
      continue;
    }
    used += part.length;
    parts.push(part);
  }
  if (!parts.length) return left ? '(over the prompt\u2019s budget: not shown)' : '(all shown above)';
  return parts.join('\n\n') + (left ? `\n(${left} more chunk${left > 1 ? 's' : ''} not shown: over the prompt's budget)` : '');
}

/**
 * The prompt's two code sections: `sources` (the traceback's functions and the script's calls defined in its files,
 * numbered) and `context` (the bundle's other chunks), within `budget` characters together; sources first, up to two
 * thirds of it, and the context gets what they leave. Pure.
 */
export function candidateCode(input: {
  frames: readonly ProjectFrame[];
  texts: ReadonlyMap<string, string | null>;
  script: string;
  bundle: ContextBundle | undefined;
  budget?: number;
}): { sources: string; context: string } {
  const budget = input.budget ?? DEFAULT_CANDIDATE_CODE_CHARS;
  const called = calledNames(input.script);
  if (!input.frames.length || ![...input.texts.values()].some((t) => t !== null)) {
    const none = input.frames.length
      ? '(the files could not be read)'
      : '(the traceback passes through no file of the checkout; use the context below)';
    return { sources: none, context: renderContextChunks(input.bundle, new Map(), called, budget) };
  }
  const picks = pickWindows(input.frames, input.texts, called);
  const r = renderWindows(picks, input.texts, Math.floor((budget * 2) / 3));
  return {
    sources: r.text || '(the files could not be read)',
    context: renderContextChunks(input.bundle, r.shown, called, budget - r.text.length, r.text),
  };
}
