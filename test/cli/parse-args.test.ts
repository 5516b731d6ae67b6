import { describe, expect, it } from 'vitest';
import { parseCliArgs } from '../../src/cli/parse-args.js';
import { UsageError } from '../../src/errors.js';

const OPTIONS = { ref: { type: 'string' }, out: { type: 'string' }, timeout: { type: 'string' }, json: { type: 'boolean' } } as const;

function refusal(args: string[]): string {
  try {
    parseCliArgs(args, OPTIONS, { positionals: 1 });
  } catch (err) {
    expect(err).toBeInstanceOf(UsageError);
    return (err as Error).message;
  }
  throw new Error(`accepted ${JSON.stringify(args)}`);
}

describe('parseCliArgs', () => {
  it('an option that takes a value, followed by another option, says so (not "argument is ambiguous")', () => {
    expect(refusal(['--ref', '--output=x'])).toBe('--ref needs a value; got the option --output=x');
    expect(refusal(['--ref', '--json'])).toBe('--ref needs a value; got the option --json');
    expect(refusal(['--out', '-v'])).toBe('--out needs a value; got the option -v');
  });

  it('an option that takes a value, last on the line', () => {
    expect(refusal(['script.py', '--ref'])).toBe('--ref needs a value');
  });

  it('takes a value that starts with a dash when joined with =, and a negative number as a value for its own check', () => {
    expect(parseCliArgs(['--ref=--weird', 'x.py'], OPTIONS, { positionals: 1 })?.values.ref).toBe('--weird');
    expect(parseCliArgs(['--timeout', '-1'], OPTIONS)?.values.timeout).toBe('-1');
    expect(parseCliArgs(['--ref', 'main', '--json'], OPTIONS)?.values).toEqual({ ref: 'main', json: true });
  });

  it('after --, everything is a positional', () => {
    expect(parseCliArgs(['--', '--ref'], OPTIONS, { positionals: 1 })?.positionals).toEqual(['--ref']);
  });

  it('keeps the other messages one line', () => {
    expect(refusal(['--bogus'])).toMatch(/^Unknown option '--bogus'/);
    expect(refusal(['a.py', 'b.py'])).toBe("unexpected argument 'b.py'");
  });
});
