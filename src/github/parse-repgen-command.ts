/**
 * `/repgen …` comment commands. Pure: a comment body in, a command (or null when the comment does not
 * address RepGen) out. Only the first line of prose that starts with `/repgen` counts: quoting an older
 * command in a reply (`> /repgen cancel`), showing one in a code block (fenced, or indented four
 * spaces) or writing one where GitHub shows nothing (see proseLines) never triggers anything.
 */

export type RepgenCommand =
  | { kind: 'run'; gpu: boolean; ref: string | null; llm: string | null }
  | { kind: 'retry' }
  | { kind: 'cancel' }
  | { kind: 'status' }
  | { kind: 'pr' }
  /** On a pull request: run the linked issue's confirmed reproduction (or issue `#N`'s) at the PR's head. */
  | { kind: 'verify'; issue: number | null }
  /** Reproduce, then find the first bad commit from GOOD (null: a version the report says worked) to the issue's ref. */
  | { kind: 'bisect'; good: string | null }
  | { kind: 'help' }
  /** Anything RepGen does not understand; answered with the help text and `reason`. */
  | { kind: 'unknown'; reason: string };

/** Git refs we accept for `--ref`: a SHA or a branch/tag name without shell or option tricks. */
const REF = /^(?!-)(?!.*\.\.)(?!.*\/\/)[A-Za-z0-9._/-]{1,200}$/;
const LLM = /^[A-Za-z0-9._:/-]{1,100}$/;

export function parseRepgenCommand(body: string): RepgenCommand | null {
  // An HTML comment (`<!-- /repgen -->`, an issue template's hidden text) is invisible on GitHub: never a command.
  const visible = body.replace(/<!--[\s\S]*?(?:-->|$)/g, (c) => c.replace(/[^\n]/g, ' '));
  const line = proseLines(visible).find((l) => /^\/repgen(\s|$)/i.test(l));
  if (line === undefined) return null;
  const words = line.split(/\s+/).slice(1);
  const [first, ...rest] = words;
  if (first === undefined || first.startsWith('--')) return parseRun(words);
  const sub = first.toLowerCase();
  if (sub === 'verify') return parseVerify(rest);
  if (sub === 'bisect') return parseBisect(rest);
  if (sub === 'retry' || sub === 'cancel' || sub === 'status' || sub === 'pr' || sub === 'help') {
    if (rest.length > 0) return { kind: 'unknown', reason: `\`${sub}\` takes no arguments` };
    return { kind: sub };
  }
  return { kind: 'unknown', reason: `unknown command \`${clip(first)}\`` };
}

/** HTML blocks whose text is never a paragraph: `<pre>` shows it as code, GitHub drops script, style and textarea. */
const RAW_BLOCK = /^ {0,3}<(pre|script|style|textarea)(?:\s|>|$)/i;
/** A link reference definition's start: `[label]:` and what follows on the line. */
const DEFINITION = /^ {0,3}\[(?:[^\]\\\s]|\\.)(?:[^\]\\]|\\.){0,998}\]:(.*)$/;
const CLOSE: Record<string, string> = { '"': '"', "'": "'", '(': ')' };

/**
 * Where the link reference definition starting at line `i` ends (its last line), or -1 when the lines there are no
 * definition (CommonMark: a destination, on the label's line or the next, then an optional title in quotes or
 * parentheses that may span lines but no blank line, and nothing else).
 */
function definitionEnd(lines: readonly string[], i: number): number {
  const rest = DEFINITION.exec(lines[i] ?? '')?.[1];
  if (rest === undefined) return -1;
  let k = i;
  let after = rest.trim();
  if (!after) {
    k = i + 1;
    after = (lines[k] ?? '').trim();
    if (!after) return -1;
  }
  after = after.replace(/^\S+/, '').trim();
  if (!after) {
    // A title may start on the next line; if it is no title, the definition ends here and that line is prose.
    const end = titleEnd(lines, k + 1, (lines[k + 1] ?? '').trim());
    return end >= 0 ? end : k;
  }
  return titleEnd(lines, k, after);
}

/** The last line of a title that starts with `text` on line `k`, or -1 when it is none. */
function titleEnd(lines: readonly string[], k: number, text: string): number {
  const close = CLOSE[text[0] ?? ''];
  if (!close) return -1;
  let body = text.slice(1);
  for (let j = k; j < lines.length; j++) {
    if (j > k) {
      body = lines[j] ?? '';
      if (!body.trim()) return -1;
    }
    const at = body.indexOf(close);
    if (at >= 0) return body.slice(at + 1).trim() ? -1 : j;
  }
  return -1;
}

/**
 * The comment's lines GitHub shows as prose, trimmed: not in code, not hidden. A fence opens with three or more
 * backticks or tildes (indented at most three spaces) and closes with at least as many of the same character; a
 * line indented four spaces or a tab is code too (also where Markdown would read it as a paragraph's
 * continuation: ignoring a command is the safe mistake). An unclosed fence runs to the end, as in Markdown.
 * Also left out (issue 38): a `<pre>`, `<script>`, `<style>` or `<textarea>` block up to its closing tag; anything
 * inside `<details>` (but `<details open>`), which a reader does not see unless they expand it; and a link reference
 * definition's destination on the line after a bare `[label]:` and a title it spans over lines, which GitHub renders
 * as nothing.
 */
function proseLines(body: string): string[] {
  const prose: string[] = [];
  const lines = body.split(/\r?\n/);
  let fence: { char: string; length: number } | null = null;
  let raw: string | null = null;
  let details = 0;
  let afterBlank = true;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? '';
    const blankBefore = afterBlank;
    afterBlank = line.trim() === '';
    const marker = /^ {0,3}(`{3,}|~{3,})(.*)$/.exec(line);
    if (fence) {
      if (marker?.[1] && marker[1][0] === fence.char && marker[1].length >= fence.length && !marker[2]?.trim()) fence = null;
      continue;
    }
    if (marker?.[1] && !(marker[1][0] === '`' && marker[2]?.includes('`'))) {
      fence = { char: marker[1][0] ?? '`', length: marker[1].length };
      continue;
    }
    if (raw) {
      if (new RegExp(`</${raw}>`, 'i').test(line)) raw = null;
      continue;
    }
    const opens = RAW_BLOCK.exec(line)?.[1]?.toLowerCase();
    if (opens) {
      if (!new RegExp(`</${opens}>`, 'i').test(line)) raw = opens;
      continue;
    }
    // Tags in inline code (`<details>`) are text, not HTML.
    const tags = line.replace(/`[^`]*`/g, '');
    const hidden = details > 0;
    details += (tags.match(/<details(?![^>]{0,200}\bopen\b)(?:\s[^>]{0,200})?>/gi) ?? []).length;
    details = Math.max(0, details - (tags.match(/<\/details\s*>/gi) ?? []).length);
    if (hidden) continue;
    if (/^( {4}|\t)/.test(line.replace(/^ {0,3}\t/, '\t'))) continue;
    // A definition starts a block only after a blank line or another definition (it cannot interrupt a paragraph).
    const defEnd = blankBefore ? definitionEnd(lines, i) : -1;
    if (defEnd >= 0) {
      i = defEnd;
      afterBlank = true;
      continue;
    }
    prose.push(line.trim());
  }
  return prose;
}

function parseVerify(words: string[]): RepgenCommand {
  if (words.length === 0) return { kind: 'verify', issue: null };
  const m = /^#(\d{1,9})$/.exec(words[0] ?? '');
  if (words.length > 1 || !m) return { kind: 'unknown', reason: `\`verify\` takes at most one issue number, like \`/repgen verify #12\`` };
  return { kind: 'verify', issue: Number(m[1]) };
}

function parseBisect(words: string[]): RepgenCommand {
  if (words.length === 0) return { kind: 'bisect', good: null };
  const good = words[0] ?? '';
  if (words.length > 1 || !REF.test(good))
    return { kind: 'unknown', reason: '`bisect` takes at most one ref where it worked, like `/repgen bisect v0.9.2`' };
  return { kind: 'bisect', good };
}

function parseRun(words: string[]): RepgenCommand {
  let gpu = false;
  let ref: string | null = null;
  let llm: string | null = null;
  for (let i = 0; i < words.length; i++) {
    const word = words[i] ?? '';
    const [flag, inline] = word.includes('=') ? [word.slice(0, word.indexOf('=')), word.slice(word.indexOf('=') + 1)] : [word, undefined];
    if (flag === '--gpu' && inline === undefined) {
      gpu = true;
      continue;
    }
    if (flag === '--ref' || flag === '--llm') {
      const value = inline ?? words[++i];
      if (value === undefined || value === '') return { kind: 'unknown', reason: `\`${flag}\` needs a value` };
      if (flag === '--ref') {
        if (!REF.test(value)) return { kind: 'unknown', reason: `\`--ref\` must be a commit SHA or a branch name, got \`${clip(value)}\`` };
        ref = value;
      } else {
        if (!LLM.test(value)) return { kind: 'unknown', reason: `\`--llm\` value \`${clip(value)}\` is not a provider or model name` };
        llm = value;
      }
      continue;
    }
    return { kind: 'unknown', reason: `unknown option \`${clip(word)}\`` };
  }
  return { kind: 'run', gpu, ref, llm };
}

/** Echoed text is clipped and stripped of backticks and mentions so a reply can never ping or break out of code. */
function clip(text: string): string {
  return text.replace(/[`@#]/g, '').slice(0, 40);
}
