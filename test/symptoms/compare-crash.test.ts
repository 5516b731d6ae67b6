import { describe, expect, it } from 'vitest';
import { compareCrash, MESSAGE_OVERLAP, messageOverlap } from '../../src/symptoms/compare-crash.js';

describe('messageOverlap', () => {
  it('a run message that says everything the reported one does, and more, is the same message', () => {
    expect(messageOverlap("cannot import name 'x'", "cannot import name 'x' from 'mod' (/path/mod.py)")).toBe(1);
  });

  it('a reported message written with symbolic sizes matches the run’s numbers (torch now says why, too)', () => {
    const reported = 'cannot reshape tensor of 0 elements into shape [-1, 0, D]';
    const run =
      'cannot reshape tensor of 0 elements into shape [-1, 0, 2] because the unspecified dimension size -1 can be any value and is ambiguous';
    expect(messageOverlap(reported, run)).toBe(1);
    expect(compareCrash({ type: 'RuntimeError', message: reported }, { type: 'RuntimeError', message: run }).verdict).toBe('reproduced');
    expect(
      messageOverlap('Expected input of shape (B, C, H, W), got a 3-D tensor', 'Expected input of shape (8, 3, 32, 32), got a 3-D tensor'),
    ).toBe(1);
  });

  it('a symbol stands for a number only: another word, or a run with no number, is no match', () => {
    const reported = 'cannot reshape tensor of 0 elements into shape [-1, 0, D]';
    expect(messageOverlap(reported, 'cannot reshape tensor of elements into shape because it is ambiguous')).toBeLessThan(MESSAGE_OVERLAP);
    expect(messageOverlap('Expected (B, C) but got something', 'Expected the input but got nothing here at all today')).toBeLessThan(
      MESSAGE_OVERLAP,
    );
    // A capital letter that is a word of the sentence ("A tensor …") is no symbol.
    expect(messageOverlap('A tensor with 3 dims', 'B tensor with 3 dims')).toBeLessThan(1);
  });
});
