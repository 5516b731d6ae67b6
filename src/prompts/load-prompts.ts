import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { RepgenError, SetupError } from '../errors.js';
import { ReadBoundedError, readBounded } from '../host/read-bounded.js';

/**
 * Prompts are data: `prompts/<name>.md`, a YAML front matter that declares the variables, then the
 * body with `{{variable}}` placeholders. Loading checks both directions (declared ⇔ used) so a typo
 * fails at startup, not halfway through a paid run.
 *
 * ```
 * ---
 * variables: [script, stdout, stderr]
 * ---
 * The script {{script}} printed {{stdout}} …
 * ```
 */

/** The repository's `prompts/` folder. */
export const DEFAULT_PROMPTS_DIR = fileURLToPath(new URL('../../prompts/', import.meta.url));

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** `{{ name }}`; anything else with braces (Python dict literals, f-strings) is left alone. */
const PLACEHOLDER = /\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g;

/** Front matter; our own file format, so unknown keys are an error (likely a typo of `variables`). */
export const PromptFrontMatter = z
  .object({
    variables: z.array(z.string().regex(IDENTIFIER, 'a variable name is letters, digits and _')).default([]),
    /** What the prompt is for; free text, not rendered. */
    description: z.string().optional(),
  })
  .strict();
export type PromptFrontMatter = z.infer<typeof PromptFrontMatter>;

export interface Prompt {
  name: string;
  /** Absolute path of the file it came from. */
  path: string;
  variables: readonly string[];
  description?: string;
  body: string;
}

/** A prompt file is missing or inconsistent. A setup problem: the CLI exits 2. */
export class PromptLoadError extends SetupError {
  override name = 'PromptLoadError';
}

/** `renderPrompt` got the wrong variables: a bug in the caller, not in the user's input. */
export class PromptRenderError extends RepgenError {
  override name = 'PromptRenderError';
}

/** Parses and checks one prompt's text (pure). `where` names the file in error messages. */
export function parsePrompt(name: string, text: string, where: string): Prompt {
  const match = /^\uFEFF?---\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)([\s\S]*)$/.exec(text);
  if (!match) throw new PromptLoadError(`${where}: no front matter; start the file with ---, a line 'variables: [a, b]', and ---`);
  let raw: unknown;
  try {
    raw = parseYaml(match[1] ?? '');
  } catch (err) {
    throw new PromptLoadError(`${where}: front matter is not YAML: ${err instanceof Error ? err.message : String(err)}`);
  }
  const fm = PromptFrontMatter.safeParse(raw ?? {});
  if (!fm.success) throw new PromptLoadError(`${where}: bad front matter: ${z.prettifyError(fm.error)}`);
  const body = match[2] ?? '';
  const declared = fm.data.variables;
  const used = new Set([...body.matchAll(PLACEHOLDER)].map((m) => m[1] ?? ''));
  const problems: string[] = [];
  const duplicates = declared.filter((v, i) => declared.indexOf(v) !== i);
  if (duplicates.length) problems.push(`declared twice: ${[...new Set(duplicates)].join(', ')}`);
  const unused = declared.filter((v) => !used.has(v));
  if (unused.length) problems.push(`declared but not used in the body: ${unused.join(', ')}`);
  const undeclared = [...used].filter((v) => !declared.includes(v));
  if (undeclared.length) problems.push(`used but not declared in variables: ${undeclared.join(', ')}`);
  if (problems.length) throw new PromptLoadError(`${where}: ${problems.join('; ')}`);
  return { name, path: where, variables: [...new Set(declared)], description: fm.data.description, body };
}

/** Loads and checks `dir/<name>.md`. */
export async function loadPrompt(name: string, dir: string = DEFAULT_PROMPTS_DIR): Promise<Prompt> {
  if (!/^[A-Za-z0-9][\w.-]*$/.test(name)) throw new PromptLoadError(`bad prompt name '${name}': use letters, digits, ., _ and -`);
  const file = path.resolve(dir, `${name}.md`);
  let text: string;
  try {
    text = (await readBounded(file, { maxBytes: 1_000_000, what: file })).toString('utf8');
  } catch (err) {
    const missing = err instanceof ReadBoundedError && err.reason === 'missing';
    throw new PromptLoadError(
      missing ? `prompt '${name}' not found: ${file} does not exist` : `cannot read prompt ${name}: ${(err as Error).message}`,
    );
  }
  return parsePrompt(name, text, file);
}

/** Loads several prompts; reports every broken one in one error, so a start-up check lists them all. */
export async function loadPrompts<const N extends string>(
  names: readonly N[],
  dir: string = DEFAULT_PROMPTS_DIR,
): Promise<Record<N, Prompt>> {
  const results = await Promise.allSettled(names.map((n) => loadPrompt(n, dir)));
  const errors = results.flatMap((r) => (r.status === 'rejected' ? [r.reason instanceof Error ? r.reason.message : String(r.reason)] : []));
  if (errors.length)
    throw new PromptLoadError(errors.length === 1 ? (errors[0] ?? '') : `${errors.length} prompts are broken:\n- ${errors.join('\n- ')}`);
  const out = {} as Record<N, Prompt>;
  names.forEach((n, i) => {
    const r = results[i];
    if (r?.status === 'fulfilled') out[n] = r.value;
  });
  return out;
}

export type PromptValue = string | number | boolean;

/**
 * Fills the placeholders in one pass. One pass matters: values are untrusted (issue text, program
 * output) and a value containing `{{other}}` must come out literally, never be expanded. Every
 * declared variable must be given; an undeclared one is refused too (a caller typo).
 */
export function renderPrompt(prompt: Prompt, vars: Record<string, PromptValue>): string {
  const missing = prompt.variables.filter((v) => !(v in vars) || vars[v] === undefined);
  if (missing.length) throw new PromptRenderError(`prompt '${prompt.name}' needs ${missing.join(', ')} (declared in ${prompt.path})`);
  const extra = Object.keys(vars).filter((k) => !prompt.variables.includes(k));
  if (extra.length) throw new PromptRenderError(`prompt '${prompt.name}' does not declare ${extra.join(', ')}`);
  return prompt.body.replace(PLACEHOLDER, (_m, name: string) => String(vars[name]));
}
