import { z } from 'zod';
import type { LlmClient, LlmMessage, LlmRequest, LlmUsage } from './types.js';
import { addUsage, NO_USAGE } from './usage.js';

/**
 * Structured answers: the model is asked for JSON, we extract and validate it with zod. A malformed
 * answer is fed back once with the validation error; if the second answer is also malformed the
 * result is a typed failure the agent counts as a failed attempt. Malformed answers never throw —
 * only transport failures do (typed errors from errors.ts), since those mean something else.
 */

export type StructuredResult<T> =
  | { ok: true; value: T; text: string; usage: LlmUsage; calls: number }
  | { ok: false; error: string; text: string; usage: LlmUsage; calls: number };

export interface StructuredOptions {
  signal?: AbortSignal;
  /**
   * The user message sent after a malformed answer. The agent may pass a rendered prompt file.
   * @defaultValue {@link defaultFormatFeedback}
   */
  feedback?: (error: string) => string;
  /** Times a malformed answer is fed back before giving up. @defaultValue 1 */
  maxFixes?: number;
}

export function defaultFormatFeedback(error: string): string {
  return [
    'Your previous answer could not be used:',
    error,
    'Reply again with only the corrected JSON, in a single ```json fenced block, and nothing else.',
  ].join('\n');
}

export async function completeStructured<S extends z.ZodType>(
  client: LlmClient,
  request: LlmRequest,
  schema: S,
  options: StructuredOptions = {},
): Promise<StructuredResult<z.infer<S>>> {
  const feedback = options.feedback ?? defaultFormatFeedback;
  const maxFixes = options.maxFixes ?? 1;
  let messages: LlmMessage[] = [...request.messages];
  let usage = NO_USAGE;
  let calls = 0;
  for (;;) {
    const response = await client.complete({ ...request, messages }, options.signal);
    calls += 1;
    usage = addUsage(usage, response.usage);
    const outcome = parseStructured(response.text, schema);
    if (outcome.ok) return { ok: true, value: outcome.value, text: response.text, usage, calls };
    const error =
      response.stopReason === 'max_tokens' || response.stopReason === 'length'
        ? `${outcome.error} (the answer was cut off at the token limit; be shorter)`
        : outcome.error;
    if (calls > maxFixes) return { ok: false, error, text: response.text, usage, calls };
    // An empty assistant turn is rejected by the Messages API, so an empty answer is shown as a placeholder.
    messages = [...messages, { role: 'assistant', content: response.text || '(empty answer)' }, { role: 'user', content: feedback(error) }];
  }
}

/** Extracts JSON from `text` and validates it (pure). */
export function parseStructured<S extends z.ZodType>(
  text: string,
  schema: S,
): { ok: true; value: z.infer<S> } | { ok: false; error: string } {
  if (text.trim() === '') return { ok: false, error: 'The answer was empty; a JSON value was expected.' };
  const candidates = jsonCandidates(text);
  if (candidates.length === 0) return { ok: false, error: 'No JSON found in the answer; a JSON value was expected.' };
  // The first candidate that is JSON decides the message: its shape error is what the model must fix.
  // Later candidates (a bracket span inside it, say) would only give more confusing errors.
  let parseError: string | undefined;
  let shapeError: string | undefined;
  for (const candidate of candidates) {
    let value: unknown;
    try {
      value = JSON.parse(candidate);
    } catch (err) {
      parseError ??= `The JSON does not parse: ${err instanceof Error ? err.message : String(err)}`;
      continue;
    }
    const result = schema.safeParse(value);
    if (result.success) return { ok: true, value: result.data };
    shapeError ??= `The JSON does not match the expected shape:\n${z.prettifyError(result.error)}`;
  }
  return { ok: false, error: shapeError ?? parseError ?? 'No JSON found in the answer.' };
}

/**
 * Where JSON may be, best first: ```json blocks, other fenced blocks, the whole text, then the span
 * from the first `{`/`[` to the last `}`/`]` (models like to wrap JSON in a sentence).
 */
export function jsonCandidates(text: string): string[] {
  const out: string[] = [];
  const blocks = fencedBlocks(text);
  for (const b of blocks) if (b.lang === 'json') out.push(b.code);
  for (const b of blocks) if (b.lang !== 'json') out.push(b.code);
  out.push(text.trim());
  for (const [open, close] of [
    ['{', '}'],
    ['[', ']'],
  ] as const) {
    const start = text.indexOf(open);
    const end = text.lastIndexOf(close);
    if (start !== -1 && end > start) out.push(text.slice(start, end + 1));
  }
  // Structured answers are objects or arrays; anything else is prose, not a candidate.
  return [...new Set(out.filter((c) => /^[[{]/.test(c.trim())))];
}

interface FencedBlock {
  lang: string;
  code: string;
  /** False when the text ended before the closing fence (an answer cut at max tokens). */
  closed: boolean;
}

/** All ``` / ~~~ fenced blocks, in order (pure). */
export function fencedBlocks(text: string): FencedBlock[] {
  const blocks: FencedBlock[] = [];
  const lines = text.split(/\r?\n/);
  let i = 0;
  while (i < lines.length) {
    const open = /^\s{0,3}(`{3,}|~{3,})\s*([\w+#.-]*)[^\n]*$/.exec(lines[i] ?? '');
    if (!open) {
      i += 1;
      continue;
    }
    const fence = open[1] ?? '```';
    const lang = (open[2] ?? '').toLowerCase();
    const body: string[] = [];
    i += 1;
    let closed = false;
    while (i < lines.length) {
      const line = lines[i] ?? '';
      if (line.trim().startsWith(fence[0]!.repeat(fence.length)) && line.trim().replace(/[`~]/g, '') === '') {
        closed = true;
        i += 1;
        break;
      }
      body.push(line);
      i += 1;
    }
    blocks.push({ lang, code: body.join('\n'), closed });
  }
  return blocks;
}

const LANG_ALIASES: Record<string, string[]> = {
  python: ['python', 'py', 'python3', 'ipython', 'pycon'],
};

/**
 * The code of the answer in `lang`: the longest block tagged with it (models often add a short
 * `pip install` or usage block next to the script), else the longest untagged block, else null.
 * An unclosed last block (cut at max tokens) still counts; a syntax check will catch the cut.
 */
export function extractCodeBlock(text: string, lang: string): string | null {
  const names = LANG_ALIASES[lang.toLowerCase()] ?? [lang.toLowerCase()];
  const blocks = fencedBlocks(text);
  const longest = (bs: FencedBlock[]): string | null =>
    bs.reduce<string | null>((best, b) => (best === null || b.code.length > best.length ? b.code : best), null);
  return longest(blocks.filter((b) => names.includes(b.lang))) ?? longest(blocks.filter((b) => b.lang === ''));
}
