import type { FilePatch, Hunk } from './parse-diff.js';

/**
 * A file patch applied to a file's text, as `patch` does without fuzz: each hunk's old side (its context and removed
 * lines) must be found exactly, at the line its header says or, failing that, at the nearest line within `slack` of it
 * (a model often miscounts line numbers, never the lines themselves). Hunks apply in order and may not overlap. Pure.
 */
export type Applied = { ok: true; text: string } | { ok: false; why: string };

/** How far from its stated line a hunk's old side is looked for. */
const SLACK = 200;

export function applyFilePatch(original: string | null, patch: FilePatch, slack = SLACK): Applied {
  if (patch.created) {
    if (original !== null) return { ok: false, why: `${patch.path} already exists; the diff creates it` };
    if (patch.hunks.some((h) => h.lines.some((l) => l.sign !== '+')))
      return { ok: false, why: `the diff creates ${patch.path} with lines to remove` };
    return { ok: true, text: `${patch.hunks.flatMap((h) => h.lines.map((l) => l.text)).join('\n')}\n` };
  }
  if (original === null) return { ok: false, why: `${patch.path} is not in the checkout` };
  const endsWithNewline = original.endsWith('\n');
  const lines = original.replace(/\r\n/g, '\n').split('\n');
  if (endsWithNewline) lines.pop();
  const out: string[] = [];
  let cursor = 0;
  for (const [n, hunk] of patch.hunks.entries()) {
    const at = locate(lines, hunk, cursor, slack);
    if (at === null)
      return {
        ok: false,
        why: `hunk ${n + 1} of ${patch.path} (at line ${hunk.oldStart}) does not match the file: its context or removed lines are not there`,
      };
    out.push(...lines.slice(cursor, at));
    for (const l of hunk.lines) if (l.sign !== '-') out.push(l.text);
    cursor = at + oldSide(hunk).length;
  }
  out.push(...lines.slice(cursor));
  return { ok: true, text: `${out.join('\n')}${endsWithNewline ? '\n' : ''}` };
}

function oldSide(hunk: Hunk): string[] {
  return hunk.lines.filter((l) => l.sign !== '+').map((l) => l.text);
}

/** The 0-based line where the hunk's old side starts, at or after `from`, nearest its header's line; null when nowhere. */
function locate(lines: readonly string[], hunk: Hunk, from: number, slack: number): number | null {
  const old = oldSide(hunk);
  // A pure insertion with no context (`@@ -5,0 +6,2 @@`) goes after its stated line.
  const want = old.length ? Math.max(0, hunk.oldStart - 1) : Math.max(0, hunk.oldStart);
  if (!old.length) return want >= from && want <= lines.length ? want : null;
  const matches = (at: number): boolean =>
    at >= from && at + old.length <= lines.length && old.every((t, k) => trimEnd(lines[at + k]!) === trimEnd(t));
  for (let d = 0; d <= slack; d++) {
    if (matches(want - d)) return want - d;
    if (d && matches(want + d)) return want + d;
  }
  return null;
}

/** Trailing whitespace is the one difference a copied line may have lost. */
function trimEnd(s: string): string {
  return s.replace(/\s+$/, '');
}
