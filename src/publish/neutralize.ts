/** Zero-width joiner: invisible, but it stops GitHub from linking `@user` and `#123`. */
const ZWJ = '\u200D';

/**
 * Text copied from an issue or from a script's output must not ping people or cross-reference issues
 * when RepGen posts it. Applied outside code fences only (GitHub links nothing inside them).
 */
export function neutralizeMentions(text: string): string {
  return (
    text
      .replace(/(^|[^\w`])@([A-Za-z0-9][\w-]*)/g, `$1@${ZWJ}$2`)
      // Any `#123`, also `owner/repo#123` (a cross-reference event in another repository); not `&#123;`.
      .replace(/(^|[^&`])#(\d+)/g, `$1#${ZWJ}$2`)
      .replace(/\b(GH-)(\d+)/gi, `$1${ZWJ}$2`)
  );
}

/** Token shapes of the services RepGen talks to, and private keys: never echoed, whatever the source. */
const SECRET_PATTERNS: readonly RegExp[] = [
  /\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{20,}\b/g,
  /\bgithub_pat_[A-Za-z0-9_]{20,}\b/g,
  /\bsk-ant-[A-Za-z0-9_-]{10,}/g,
  /\bsk-[A-Za-z0-9_-]{20,}/g,
  /\bAKIA[0-9A-Z]{16}\b/g,
  /\bxox[abprs]-[A-Za-z0-9-]{10,}/g,
  /\bhf_[A-Za-z0-9]{20,}\b/g,
  /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)/g,
];

/** Replaces secret-shaped strings, and the given literal values (the host's own secrets), with [redacted]. */
export function redactSecrets(text: string, literals: readonly string[] = []): string {
  let out = text;
  for (const value of literals) if (value.length >= 8) out = out.split(value).join('[redacted]');
  for (const re of SECRET_PATTERNS) out = out.replace(re, '[redacted]');
  return out;
}

/** A code fence longer than any backtick run inside `code`, so that the content cannot close it early. */
export function fenceFor(code: string): string {
  const longest = Math.max(0, ...[...code.matchAll(/`+/g)].map((m) => m[0].length));
  return '`'.repeat(Math.max(3, longest + 1));
}

/** One line of text safe inside a markdown table cell; a cut never leaves a code span open (it closes it). */
export function tableCell(text: string, max = 300): string {
  const one = text.replace(/\r?\n/g, ' ').replace(/\|/g, '\\|').replace(/\s+/g, ' ').trim();
  return neutralizeMentions(one.length > max ? cutOutsideCode(one, max) : one);
}

/**
 * `text` cut to at most `max` characters with an ellipsis, at a word or segment boundary (a space, or after `/`,
 * `,`, `;`, `:`, `=`, `.`, `(`) so no word is left half ("…: impo"); a code span the cut falls inside is closed after the
 * ellipsis. Text with no boundary in its second half is cut where it must be.
 */
export function cutAtBoundary(text: string, max: number): string {
  if (text.length <= max) return text;
  const open = (t: string): boolean => (t.match(/`/g) ?? []).length % 2 === 1;
  const room = Math.max(0, max - 2);
  const head = text.slice(0, room + 1);
  let at = -1;
  for (const m of head.matchAll(/\s+|(?<=[/,;:=.(])/g)) if ((m.index ?? 0) <= room) at = m.index ?? at;
  const cut = (at >= room / 2 ? text.slice(0, at) : text.slice(0, room)).trimEnd();
  return open(cut) ? `${cut}…\`` : `${cut}…`;
}

function cutOutsideCode(text: string, max: number): string {
  return cutAtBoundary(text, max);
}
