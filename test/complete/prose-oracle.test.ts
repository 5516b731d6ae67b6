import { describe, expect, it } from 'vitest';
import { assertStatedRaise, assertStatedValue } from '../../src/complete/prose-oracle.js';

/** A script as the completion writes it: its lines, then a final newline. */
const script = (...lines: string[]): string => [...lines, ''].join('\n');

const CODE = 'score = compute(preds, target)\nprint(f"score (mylib): {score.item():.4f}")\n';

describe('assertStatedValue (the report’s words as the script’s oracle)', () => {
  it('asserts the expected value on the one expression the last print shows, keeping the print', () => {
    const r = assertStatedValue(CODE, 'Running it prints the score.\nThis should be 0.5 but it is 0 when labels are ignored.');
    expect(r.code).toBe(
      script(
        'score = compute(preds, target)',
        'repgen_value = score.item()  # added by RepGen',
        'print(f"score (mylib): {repgen_value:.4f}")',
        'assert abs(float(repgen_value) - 0.5) < 1e-6, f"score.item() is {float(repgen_value)}; the report expects 0.5 (should be 0.5 but it is 0)"  # added by RepGen',
      ),
    );
    expect(r.edits).toEqual(['asserted the report\'s expected value 0.5 on what the last line prints ("should be 0.5 but it is 0")']);
  });

  it('a plain print of one expression works the same way', () => {
    const r = assertStatedValue('print(len(model(x)))\n', 'It returns 3, expected 4.');
    expect(r.code).toContain(
      'repgen_value = len(model(x))  # added by RepGen\nprint(repgen_value)\nassert abs(float(repgen_value) - 4) < 1e-6',
    );
  });

  it('adds nothing without both values, with two value statements, with a traceback, or when the last line prints several things', () => {
    expect(assertStatedValue(CODE, 'This should be 0.5.').edits).toEqual([]);
    expect(assertStatedValue(CODE, 'It should be 0.5 but it is 0. Also it returns 3, expected 4.').edits).toEqual([]);
    expect(assertStatedValue(CODE, 'should be 0.5 but it is 0\nTraceback (most recent call last):\nValueError: x').edits).toEqual([]);
    expect(assertStatedValue('print(a, b)\n', 'should be 0.5 but it is 0').edits).toEqual([]);
    expect(assertStatedValue('print(f"{a} and {b}")\n', 'should be 0.5 but it is 0').edits).toEqual([]);
    expect(assertStatedValue('x = f(1)\n', 'should be 0.5 but it is 0').edits).toEqual([]);
  });
});

describe('assertStatedRaise (a call the report says should raise)', () => {
  it('wraps the last call so the script fails unless it raises, catching a builtin class the report names', () => {
    const r = assertStatedRaise(
      'import mylib\nmylib.split([1, 2], parts=0)\n',
      'split with parts=0 should raise a ValueError, it returns [] instead.',
    );
    expect(r.code).toBe(
      script(
        'import mylib',
        'try:  # added by RepGen',
        '    repgen_value = mylib.split([1, 2], parts=0)',
        'except ValueError:  # added by RepGen',
        '    print("raised, as the report expects")  # added by RepGen',
        'else:  # added by RepGen',
        '    raise AssertionError(f"mylib.split([1, 2], parts=0) returned {repgen_value!r} without raising; the report expects it to raise (split with parts=0 should raise a ValueError, it returns [] instead.)")  # added by RepGen',
      ),
    );
  });

  it('catches Exception for a class that is not a builtin, and adds nothing for a traceback, two claims, or no call last', () => {
    expect(assertStatedRaise('f(x)\n', 'f should raise an EinopsError for repeated axes.').code).toContain('except Exception:');
    expect(assertStatedRaise('f(x)\n', 'f should raise.\nTraceback (most recent call last):\nValueError: v').edits).toEqual([]);
    expect(assertStatedRaise('f(x)\n', 'f should raise. g must fail too.').edits).toEqual([]);
    expect(assertStatedRaise('y = g + 1\n', 'f should raise.').edits).toEqual([]);
    expect(assertStatedRaise('print(f(x))\n', 'f should raise.').edits).toEqual([]);
  });

  it('wraps the last call assigned to a name, moving the prints of its result after it into the else branch', () => {
    const code =
      'import torch\ns = Scheduler()\nout = s.step(torch.randn(2), 0, torch.randn(2), eta=-1.0)\n# shape below\nprint(out.prev_sample.shape)\n';
    const r = assertStatedRaise(code, 'Both calls execute without error; it should raise a ValueError for eta=-1.');
    // Line by line: the wrapped call, then the print it moved into the else branch.
    expect(r.code.split('\n')).toEqual([
      'import torch',
      's = Scheduler()',
      'try:  # added by RepGen',
      '    out = s.step(torch.randn(2), 0, torch.randn(2), eta=-1.0)',
      'except ValueError:  # added by RepGen',
      '    print("raised, as the report expects")  # added by RepGen',
      'else:  # added by RepGen',
      '    print(out.prev_sample.shape)',
      '    raise AssertionError(f"s.step(torch.randn(2), 0, torch.randn(2), eta=-1.0) returned {out!r} without raising; the report expects it to raise (Both calls execute without error; it should raise a ValueError for eta=-1.)")  # added by RepGen',
      '',
    ]);
  });
});
