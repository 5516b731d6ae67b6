import { parseArgs, type ParseArgsConfig } from 'node:util';
import { UsageError } from '../errors.js';

type Options = NonNullable<ParseArgsConfig['options']>;

/**
 * node:util parseArgs in strict mode, with its errors turned into one-line UsageErrors.
 * Returns null when `--help` was asked for (the caller prints its help and exits 0).
 */
export function parseCliArgs<O extends Options>(args: string[], options: O, { positionals = 0 }: { positionals?: number } = {}) {
  if (args.includes('--help') || args.includes('-h')) return null;
  // `--timeout -1` would read as an unknown option "-1" ("ambiguous"): pass it as `--timeout=-1`, so the
  // option's own check says what is wrong with the value. `--ref --output=x` and a trailing `--ref` are a value left
  // out: said so in words, where parseArgs says "argument is ambiguous" or "argument missing".
  const joined: string[] = [];
  for (let i = 0; i < args.length; i += 1) {
    const a = args[i] ?? '';
    if (a === '--') {
      joined.push(...args.slice(i));
      break;
    }
    const name = a.startsWith('--') ? a.slice(2) : null;
    const next = args[i + 1];
    const takesValue = name !== null && options[name]?.type === 'string';
    if (takesValue && next === undefined) throw new UsageError(`${a} needs a value`);
    if (takesValue && next !== undefined && /^-\d|^-\.\d/.test(next)) {
      joined.push(`${a}=${next}`);
      i += 1;
    } else if (takesValue && next?.startsWith('-') && next !== '-') {
      throw new UsageError(`${a} needs a value; got the option ${next}`);
    } else joined.push(a);
  }
  let parsed;
  try {
    parsed = parseArgs({ args: joined, options, allowPositionals: positionals > 0, strict: true });
  } catch (err) {
    throw new UsageError((err as Error).message.split('\n')[0] ?? 'bad arguments');
  }
  if (parsed.positionals.length > positionals) {
    throw new UsageError(`unexpected argument '${parsed.positionals[positionals]}'`);
  }
  return parsed;
}

/** Parses a positive number option such as `--timeout 30`; undefined stays undefined. */
export function numberOption(name: string, value: unknown, { min = 1 }: { min?: number } = {}): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isFinite(n) || n < min) throw new UsageError(`--${name} must be a number ≥ ${min}, got '${String(value)}'`);
  return n;
}
