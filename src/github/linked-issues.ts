/**
 * The issues a pull request says it fixes, read from its body the way GitHub links them: a closing keyword
 * (close, closes, closed, fix, fixes, fixed, resolve, resolves, resolved; any case, optional colon) followed
 * by `#N`, `owner/repo#N` or the issue's URL, one keyword per reference. Pure.
 *
 * Only issues of the PR's own repository count (RepGen keeps reproductions per repository). Text GitHub
 * would not render as a reference does not count either: fenced or indented code, inline code spans, HTML
 * comments (PR templates carry `<!-- Fixes #123 -->` as an example) and quoted lines.
 */

export interface RepoRef {
  owner: string;
  repo: string;
}

/** At most this many issues are checked for one PR: a body listing fifty is not fifty runs. */
export const MAX_LINKED_ISSUES = 5;

const KEYWORD = String.raw`\b(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?)\b:?[ \t]+`;
const TARGET = String.raw`(?:https?://github\.com/([\w.-]+)/([\w.-]+)/issues/|([\w.-]+)/([\w.-]+)#|#)(\d{1,9})(?![\w-])`;

export function linkedIssues(body: string | null | undefined, own: RepoRef): number[] {
  const found: number[] = [];
  const re = new RegExp(KEYWORD + TARGET, 'gi');
  for (const line of referenceText(body ?? '')) {
    for (const m of line.matchAll(re)) {
      const owner = m[1] ?? m[3];
      const repo = m[2] ?? m[4];
      if (owner !== undefined && (owner.toLowerCase() !== own.owner.toLowerCase() || repo?.toLowerCase() !== own.repo.toLowerCase()))
        continue;
      const n = Number(m[5]);
      if (Number.isSafeInteger(n) && n > 0 && !found.includes(n)) found.push(n);
      if (found.length >= MAX_LINKED_ISSUES) return found;
    }
  }
  return found;
}

/** The body's lines that GitHub would scan for references: no code, no HTML comments, no quotes. */
function referenceText(body: string): string[] {
  const lines: string[] = [];
  let fence: { char: string; length: number } | null = null;
  const text = body.replace(/<!--[\s\S]*?(-->|$)/g, ' ');
  for (const raw of text.split(/\r?\n/)) {
    const marker = /^ {0,3}(`{3,}|~{3,})(.*)$/.exec(raw);
    if (fence) {
      if (marker?.[1] && marker[1][0] === fence.char && marker[1].length >= fence.length && !marker[2]?.trim()) fence = null;
      continue;
    }
    if (marker?.[1] && !(marker[1][0] === '`' && marker[2]?.includes('`'))) {
      fence = { char: marker[1][0] ?? '`', length: marker[1].length };
      continue;
    }
    if (/^( {4}|\t)/.test(raw) || /^ {0,3}>/.test(raw)) continue;
    lines.push(raw.replace(/(`+)[\s\S]*?\1/g, ' '));
  }
  return lines;
}
