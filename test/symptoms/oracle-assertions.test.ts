import { describe, expect, it } from 'vitest';
import { actualIsConstant, literalOf, oracleAssertions } from '../../src/symptoms/oracle-assertions.js';

describe('oracleAssertions', () => {
  it('reads value assertions: ==, abs-difference, len, isclose, a name holding the literal, a testing call', () => {
    const script = [
      'import math, torch',
      'assert len(f) == 4, f"got {len(f)} feature maps"',
      'assert abs(upper - 1.2) < 1e-6, f"upper is {upper}, the report expects 1.2"',
      'assert abs(x-0.0238)<=1e-4',
      'assert math.isclose(lr_scale, 0.0238, rel_tol=1e-3)',
      'expected = (0.5, 1.2)',
      'assert t.scale == expected, t.scale',
      'torch.testing.assert_close(m.running_mean, torch.tensor([4.0]))',
      'assert (',
      '    y.shape[1] == 6',
      '), "wrong"',
    ].join('\n');
    const o = oracleAssertions(script);
    expect(o.map((a) => [a.form, a.actual, a.expected, a.start])).toEqual([
      ['compare', 'len(f)', '4', 2],
      ['compare', 'upper', '1.2', 3],
      ['compare', 'x', '0.0238', 4],
      ['compare', 'lr_scale', '0.0238', 5],
      ['compare', 't.scale', '(0.5, 1.2)', 7],
      ['compare', 'm.running_mean', 'torch.tensor([4.0])', 8],
      ['compare', 'y.shape[1]', '6', 9],
    ]);
    expect(o[0]?.message).toBe('f"got {len(f)} feature maps"');
    expect(o.at(-1)).toMatchObject({ start: 9, end: 11 });
  });

  it('reads `if x != v: raise AssertionError(...)` as the assertion x == v', () => {
    const o = oracleAssertions('n = len(out)\nif n != 6:\n    raise AssertionError(f"{n} maps, the report expects 6")\n');
    expect(o).toEqual([expect.objectContaining({ form: 'compare', actual: 'n', expected: '6', op: '==', start: 2, end: 3 })]);
  });

  it('reads "should have raised": pytest.raises, try/except/else, a flag set in except', () => {
    const script = [
      'import pytest',
      'with pytest.raises(ValueError):',
      '    sched.step(eta=-1)',
      'try:',
      '    sched.step(eta=-1)',
      'except ValueError as e:',
      '    print("raised:", e)',
      'else:',
      '    raise AssertionError("step(eta=-1) did not raise; the report expects a ValueError")',
      'raised = False',
      'try:',
      '    m = create(out_indices=(3, 5, 7, 100))',
      'except (ValueError, IndexError):',
      '    raised = True',
      'assert raised, "out_indices 100 was accepted silently"',
    ].join('\n');
    const o = oracleAssertions(script);
    expect(o.map((a) => [a.form, a.expected, a.start, a.end])).toEqual([
      ['raises', 'ValueError', 2, 3],
      ['raises', 'ValueError', 4, 9],
      ['raises', 'ValueError', 15, 15],
    ]);
    expect(o[1]?.actual).toBe('sched.step(eta=-1)');
  });

  it('reads "should warn": pytest.warns and an assert on a catch_warnings record', () => {
    const script = [
      'import warnings',
      'with warnings.catch_warnings(record=True) as caught:',
      '    warnings.simplefilter("always")',
      '    m = create(out_indices=(3, 5, 7, 100))',
      'assert len(caught) > 0, "no warning for out_indices 100"',
    ].join('\n');
    expect(oracleAssertions(script)).toEqual([expect.objectContaining({ form: 'warns', start: 5 })]);
  });

  it('ignores comments, strings holding operators, and assertions with no literal side', () => {
    const script = ['# assert x == 5', 'assert a == b', 'print("x == 4")', 'assert ok, "x == 4"', 'assert y.shape'].join('\n');
    expect(oracleAssertions(script)).toEqual([]);
  });

  it('knows literals and a constant the script sets itself', () => {
    expect(literalOf('torch.tensor([4.], dtype=torch.float32)')).not.toBeNull();
    expect(literalOf('(0.5, -1.2e-3)')).toBe('(0.5, -1.2e-3)');
    expect(literalOf('model(x)')).toBeNull();
    const script = 'upper = 1.1\nassert abs(upper - 1.2) < 1e-6\n';
    const [o] = oracleAssertions(script);
    expect(o && actualIsConstant(script, o)).toBe(true);
    const computed = 'upper = t.scale[1]\nassert abs(upper - 1.2) < 1e-6\n';
    const [c] = oracleAssertions(computed);
    expect(c && actualIsConstant(computed, c)).toBe(false);
  });
});
