/**
 * `/repgen …` comment commands. Pure: a comment body in, a command (or null when the comment does not
 * address RepGen) out. Only the first line of prose that starts with `/repgen` counts: quoting an older
 * command in a reply (`> /repgen cancel`) or showing one in a code block (fenced, or indented four
 * spaces) never triggers anything.
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

/**
 * The comment's lines outside code blocks, trimmed. A fence opens with three or more backticks or tildes
 * (indented at most three spaces) and closes with at least as many of the same character; a line indented
 * four spaces or a tab is code too (also where Markdown would read it as a paragraph's continuation:
 * ignoring a command is the safe mistake). An unclosed fence runs to the end, as in Markdown.
 */
function proseLines(body: string): string[] {
  const prose: string[] = [];
  let fence: { char: string; length: number } | null = null;
  for (const raw of body.split(/\r?\n/)) {
    const marker = /^ {0,3}(`{3,}|~{3,})(.*)$/.exec(raw);
    if (fence) {
      if (marker?.[1] && marker[1][0] === fence.char && marker[1].length >= fence.length && !marker[2]?.trim()) fence = null;
      continue;
    }
    if (marker?.[1] && !(marker[1][0] === '`' && marker[2]?.includes('`'))) {
      fence = { char: marker[1][0] ?? '`', length: marker[1].length };
      continue;
    }
    if (/^( {4}|\t)/.test(raw.replace(/^ {0,3}\t/, '\t'))) continue;
    prose.push(raw.trim());
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
