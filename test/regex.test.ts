import { describe, expect, it } from 'vitest';
import { regexLines } from '../src/regex.js';

describe('regexLines', () => {
  it('joins the trimmed lines into one source, backslashes kept as in a literal', () => {
    const re = regexLines('i')`
      \bout of memory\b
      |CUDA error:\x20an illegal
      |\(100\)
    `;
    expect(re.source).toBe(String.raw`\bout of memory\b|CUDA error:\x20an illegal|\(100\)`);
    expect(re.flags).toBe('i');
    expect(re.test('RuntimeError: CUDA Out Of Memory')).toBe(true);
    expect(re.test('cuda error: an illegal memory access')).toBe(true);
    expect(re.test('cuda runtime error (100)')).toBe(true);
    expect(re.test('outof memory')).toBe(false);
  });

  it('matches what the one-line literal matches, groups and flags included', () => {
    const re = regexLines('g')`
      (\w+)=(
        \d+
        |nan
      )
    `;
    expect([...'a=1 b=nan c=x'.matchAll(re)].map((m) => [m[1], m[2]])).toEqual([
      ['a', '1'],
      ['b', 'nan'],
    ]);
  });
});
