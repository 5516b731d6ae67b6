// The report's own setup lines: environment variables its code sets before it imports (`os.environ["KERAS_BACKEND"] =
// "torch"`, `%env TF_USE_LEGACY_KERAS=1`). Keras 3 imports another backend without them, so the env's import proof
// applies them as its script would. Read statically from the text, never by running the report's code. Pure.

/** Variables a report may not set for the proof: the interpreter's and the loader's own, and the sandbox's. */
const DENIED = /^(?:LD_|DYLD_|PYTHON|UV_|PIP_|SSL_|BASH_|REPGEN_)|^(?:PATH|HOME|TMPDIR|SHELL|IFS|ENV|LANG|LC_ALL)$/;
const NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
const MAX_VALUE = 500;

/** A Python string literal (no f-string, no escapes beyond quotes): its text, or null. */
function literal(text: string): string | null {
  const m = /^[rRbBuU]?(["'])((?:(?!\1)[^\\\n]|\\.)*)\1$/.exec(text.trim());
  return m ? (m[2] as string).replace(/\\(["'\\])/g, '$1') : null;
}

const STRING = String.raw`[rRuU]?(?:"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')`;
const ASSIGN = new RegExp(String.raw`\bos\.environ\[\s*(${STRING})\s*\]\s*=\s*(${STRING})`, 'g');
const SETDEFAULT = new RegExp(String.raw`\bos\.environ\.setdefault\(\s*(${STRING})\s*,\s*(${STRING})\s*\)`, 'g');
const PUTENV = new RegExp(String.raw`\bos\.putenv\(\s*(${STRING})\s*,\s*(${STRING})\s*\)`, 'g');
const UPDATE = /\bos\.environ\.update\(\s*\{([^}]{0,2000})\}\s*\)/g;
const PAIR = new RegExp(String.raw`(${STRING})\s*:\s*(${STRING})`, 'g');
const MAGIC = /^\s*%(?:set_)?env\s+([A-Za-z_]\w*)\s*(?:=\s*|\s+)(\S[^\n]*?)\s*$/gm;
const EXPORT = /^\s*export\s+([A-Za-z_]\w*)=("[^"\n]*"|'[^'\n]*'|[^\s;#]*)\s*(?:#.*)?$/gm;

interface Setting {
  at: number;
  name: string;
  value: string;
  /** `setdefault`: only when nothing earlier set it. */
  weak: boolean;
}

/**
 * The variables the report's code sets with literal values, in the order it sets them (a later assignment wins, a
 * `setdefault` keeps an earlier one). Names of the interpreter, the loader and the sandbox are left out.
 */
export function reportSetupEnv(code: string): Record<string, string> {
  const found: Setting[] = [];
  const add = (at: number, name: string | null, value: string | null, weak = false): void => {
    if (name === null || value === null || !NAME.test(name) || DENIED.test(name)) return;
    if (value.length > MAX_VALUE || value.includes('\0')) return;
    found.push({ at, name, value, weak });
  };
  for (const m of code.matchAll(ASSIGN)) add(m.index, literal(m[1] as string), literal(m[2] as string));
  for (const m of code.matchAll(SETDEFAULT)) add(m.index, literal(m[1] as string), literal(m[2] as string), true);
  for (const m of code.matchAll(PUTENV)) add(m.index, literal(m[1] as string), literal(m[2] as string));
  for (const m of code.matchAll(UPDATE))
    for (const p of (m[1] as string).matchAll(PAIR)) add(m.index + (p.index ?? 0), literal(p[1] as string), literal(p[2] as string));
  for (const m of code.matchAll(MAGIC)) add(m.index, m[1] as string, unquoteShell(m[2] as string));
  for (const m of code.matchAll(EXPORT)) add(m.index, m[1] as string, unquoteShell(m[2] as string));
  const out: Record<string, string> = {};
  for (const s of found.sort((a, b) => a.at - b.at)) if (!(s.weak && s.name in out)) out[s.name] = s.value;
  return out;
}

function unquoteShell(text: string): string {
  const m = /^(["'])(.*)\1$/.exec(text);
  return m ? (m[2] as string) : text;
}
