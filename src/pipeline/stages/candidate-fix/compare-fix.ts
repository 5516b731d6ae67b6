// Item 5 of issue 41: when the real fix is known (`--verify-fix`, a bench case's fixing commit), the candidate is
// compared with it: the Python files each changes, and the functions (the enclosing def or class of each changed
// line, read at the buggy ref; the candidate's where its hunks apply), beside the reproduction's verdict at the real fix and with the candidate. The trees
// are read as text, never run; links are never followed.
import { lstat, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { applyFilePatch } from './apply-hunks.js';
import { parseUnifiedDiff } from './parse-diff.js';
import type { CandidateAttempt, CandidateFixRecord, RealFixComparison } from './types.js';

/** Folders a comparison never enters: version control, caches, hidden folders. */
const SKIP = new Set(['__pycache__', 'node_modules']);
const MAX_FILES = 20_000;
const MAX_FILE_BYTES = 2_000_000;

/** The Python files of a tree, relative, sorted; links and hidden folders left out. */
async function pythonFiles(root: string): Promise<string[]> {
  const out: string[] = [];
  async function walk(dir: string, rel: string): Promise<void> {
    for (const e of await readdir(dir, { withFileTypes: true })) {
      if (out.length >= MAX_FILES || e.name.startsWith('.') || SKIP.has(e.name)) continue;
      const path = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) await walk(join(dir, e.name), path);
      else if (e.isFile() && e.name.endsWith('.py')) out.push(path);
    }
  }
  await walk(root, '');
  return out.sort();
}

async function readText(root: string, rel: string): Promise<string | null> {
  const path = join(root, rel);
  const st = await lstat(path).catch(() => null);
  if (!st?.isFile() || st.size > MAX_FILE_BYTES) return null;
  return readFile(path, 'utf8');
}

/** The 1-based lines of `a` that differ from `b` (removed or replaced; an insertion marks the line it follows). Pure. */
export function changedLines(a: string, b: string): number[] {
  const x = a.split('\n');
  const y = b.split('\n');
  let lo = 0;
  while (lo < x.length && lo < y.length && x[lo] === y[lo]) lo++;
  let hx = x.length;
  let hy = y.length;
  while (hx > lo && hy > lo && x[hx - 1] === y[hy - 1]) {
    hx--;
    hy--;
  }
  const mx = x.slice(lo, hx);
  const my = y.slice(lo, hy);
  if (!mx.length) return my.length ? [Math.max(1, lo)] : [];
  if (mx.length * my.length > 4_000_000) return mx.map((_, i) => lo + i + 1);
  // LCS over the middle: lines of `a` outside it are the changed ones.
  const w = my.length + 1;
  const dp = new Uint32Array((mx.length + 1) * w);
  for (let i = mx.length - 1; i >= 0; i--)
    for (let j = my.length - 1; j >= 0; j--)
      dp[i * w + j] = mx[i] === my[j] ? dp[(i + 1) * w + j + 1]! + 1 : Math.max(dp[(i + 1) * w + j]!, dp[i * w + j + 1]!);
  const out: number[] = [];
  let i = 0;
  let j = 0;
  while (i < mx.length && j < my.length) {
    if (mx[i] === my[j]) {
      i++;
      j++;
    } else if (dp[(i + 1) * w + j]! >= dp[i * w + j + 1]!) {
      out.push(lo + i + 1);
      i++;
    } else {
      out.push(Math.max(1, lo + i));
      j++;
    }
  }
  while (i < mx.length) out.push(lo + ++i);
  if (j < my.length) out.push(Math.max(1, lo + i));
  return [...new Set(out)];
}

const DEF = /^(\s*)(?:async\s+def|def|class)\s+([A-Za-z_][A-Za-z0-9_]*)/;

/** `Class.method` around a 1-based line of Python source (by indentation), or `<module>`. Pure. */
export function enclosingFunction(source: string, line: number): string {
  const lines = source.split('\n');
  let at = Math.min(Math.max(1, line), lines.length) - 1;
  while (at > 0 && !lines[at]!.trim()) at--;
  const own = DEF.exec(lines[at] ?? '');
  const names: string[] = own ? [own[2]!] : [];
  let indent = own ? own[1]!.length : (/^\s*/.exec(lines[at] ?? '')?.[0].length ?? 0);
  for (let i = at - 1; i >= 0 && indent > 0; i--) {
    const m = DEF.exec(lines[i]!);
    if (m && m[1]!.length < indent) {
      names.unshift(m[2]!);
      indent = m[1]!.length;
    }
  }
  return names.length ? names.join('.') : '<module>';
}

/** The attempt a comparison is about: the fix-sensitive one, else the last whose diff ran. */
function candidateOf(record: CandidateFixRecord): CandidateAttempt | null {
  return (
    record.attempts.find((a) => a.result === 'fix_sensitive') ??
    [...record.attempts].reverse().find((a) => a.files.length && a.diff) ??
    null
  );
}

/** Compares the candidate with the real fix (the buggy tree against the fixed one). */
export async function compareWithRealFix(
  record: CandidateFixRecord,
  input: { buggy: string; fixed: string; ref: string; fixVerdict: string | null },
): Promise<RealFixComparison | null> {
  const cand = candidateOf(record);
  if (!cand) return null;
  const [a, b] = await Promise.all([pythonFiles(input.buggy), pythonFiles(input.fixed)]);
  const fixFiles: string[] = [];
  const fixFunctions = new Set<string>();
  for (const rel of [...new Set([...a, ...b])].sort()) {
    const [x, y] = await Promise.all([readText(input.buggy, rel), readText(input.fixed, rel)]);
    if (x === y) continue;
    fixFiles.push(rel);
    if (x !== null && y !== null) for (const l of changedLines(x, y)) fixFunctions.add(`${rel}:${enclosingFunction(x, l)}`);
    else fixFunctions.add(`${rel}:<module>`);
  }
  const candidateFunctions = new Set<string>();
  const parsed = parseUnifiedDiff(cand.diff);
  if (parsed.ok)
    for (const f of parsed.files) {
      const source = await readText(input.buggy, f.path).catch(() => null);
      // Where the patch applies, as the run applied it (a model's header often names the wrong line, and the hunk is
      // found near it): the changed lines of the patched text, read like the real fix's. Else the header's lines.
      const applied = source !== null ? applyFilePatch(source, f) : null;
      if (source !== null && applied?.ok) {
        for (const l of changedLines(source, applied.text)) candidateFunctions.add(`${f.path}:${enclosingFunction(source, l)}`);
        continue;
      }
      for (const h of f.hunks) {
        let line = h.oldStart;
        for (const l of h.lines) {
          if (l.sign !== ' ') candidateFunctions.add(`${f.path}:${source ? enclosingFunction(source, Math.max(1, line)) : '<module>'}`);
          if (l.sign !== '+') line++;
        }
      }
    }
  const cf = [...candidateFunctions].sort();
  const ff = [...fixFunctions].sort();
  return {
    ref: input.ref,
    fixFiles,
    candidateFiles: cand.files,
    sameFiles: cand.files.filter((f) => fixFiles.includes(f)),
    fixFunctions: ff.slice(0, 50),
    candidateFunctions: cf,
    sameFunctions: cf.filter((f) => fixFunctions.has(f)),
    fixVerdict: input.fixVerdict,
    candidateResult: cand.result,
  };
}
