/**
 * `/repgen …` comment commands. Pure: a comment body in, a command (or null when the comment does not
 * address RepGen) out. Only the first line that starts with `/repgen` counts, so quoting an older
 * command in a reply (`> /repgen cancel`) never triggers anything.
 */

export type RepgenCommand =
  | { kind: 'run'; gpu: boolean; ref: string | null; llm: string | null }
  | { kind: 'retry' }
  | { kind: 'cancel' }
  | { kind: 'status' }
  | { kind: 'pr' }
  | { kind: 'help' }
  /** Anything RepGen does not understand; answered with the help text and `reason`. */
  | { kind: 'unknown'; reason: string };

/** Git refs we accept for `--ref`: a SHA or a branch/tag name without shell or option tricks. */
const REF = /^(?!-)(?!.*\.\.)(?!.*\/\/)[A-Za-z0-9._/-]{1,200}$/;
const LLM = /^[A-Za-z0-9._:/-]{1,100}$/;

export function parseRepgenCommand(body: string): RepgenCommand | null {
  const line = body
    .split(/\r?\n/)
    .map((l) => l.trim())
    .find((l) => /^\/repgen(\s|$)/i.test(l));
  if (line === undefined) return null;
  const words = line.split(/\s+/).slice(1);
  const [first, ...rest] = words;
  if (first === undefined || first.startsWith('--')) return parseRun(words);
  const sub = first.toLowerCase();
  if (sub === 'retry' || sub === 'cancel' || sub === 'status' || sub === 'pr' || sub === 'help') {
    if (rest.length > 0) return { kind: 'unknown', reason: `\`${sub}\` takes no arguments` };
    return { kind: sub };
  }
  return { kind: 'unknown', reason: `unknown command \`${clip(first)}\`` };
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
