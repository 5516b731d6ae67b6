import { describe, expect, it } from 'vitest';
import { readExpectations } from '../../src/symptoms/read-expectations.js';
import { readReport } from '../../src/symptoms/index.js';

describe('readExpectations', () => {
  it('reads "returns 3 features, expected 4" as observed 3, expected 4 of features', () => {
    const e = readExpectations('The model returns 3 features, expected 4 when out_indices has four entries.');
    expect(e).toContainEqual(expect.objectContaining({ kind: 'value', observed: '3', expected: '4', subject: 'features' }));
  });

  it('reads "shown with 1.10 instead of 1.20" and a bare "expected (0.500, 1.200)"', () => {
    const e = readExpectations('The scale is shown with 1.10 instead of 1.20; expected (0.500, 1.200).');
    expect(e).toContainEqual(expect.objectContaining({ kind: 'value', observed: '1.10', expected: '1.20' }));
    expect(e).toContainEqual(expect.objectContaining({ kind: 'value', expected: '(0.500, 1.200)' }));
  });

  it('reads the expected value first and the seen one after: "should be 0.5 but it is 0", "expected 4 but got 3"', () => {
    const e = readExpectations('The score printed here should be 0.5 but it is 0. With two labels the count was expected 4 but got 3.');
    expect(e).toContainEqual(expect.objectContaining({ kind: 'value', expected: '0.5', observed: '0' }));
    expect(e).toContainEqual(expect.objectContaining({ kind: 'value', expected: '4', observed: '3' }));
    expect(e.filter((x) => x.kind === 'value' && x.expected === '0.5')).toHaveLength(1);
  });

  it('reads "lr_scale=1.0 instead of 0.0238" with its subject', () => {
    const e = readExpectations('pos_embed falls into the last group, lr_scale=1.0 instead of 0.0238.');
    expect(e).toContainEqual(expect.objectContaining({ kind: 'value', subject: 'lr_scale', observed: '1.0', expected: '0.0238' }));
  });

  it('reads a value written after a print in the code as what it printed, and never a comment of words', () => {
    const md = [
      '```python',
      'print(metric.compute())  # tensor(0.9849)',
      "print(score)  # prints '-301979050.37'",
      'print(x)  # works now',
      '```',
    ].join('\n');
    const e = readExpectations(md);
    expect(e).toContainEqual(expect.objectContaining({ kind: 'printed', observed: 'tensor(0.9849)' }));
    expect(e).toContainEqual(expect.objectContaining({ kind: 'printed', observed: '-301979050.37' }));
    expect(e.filter((x) => x.kind === 'printed')).toHaveLength(2);
  });

  it('quotes a statement from the start of its sentence, also when it opens the text', () => {
    const e = readExpectations('split with parts=0 should raise a ValueError.');
    expect(e).toContainEqual(expect.objectContaining({ kind: 'raises', quote: 'split with parts=0 should raise a ValueError.' }));
  });

  it('reads should-raise, should-warn and runs-without-error statements', () => {
    const e = readExpectations(
      'Both calls execute without error. The scheduler should raise a ValueError for eta=-1. out_indices beyond the depth are silently dropped; expected an error or at least a warning.',
    );
    expect(e).toContainEqual(expect.objectContaining({ kind: 'no_error' }));
    expect(e).toContainEqual(expect.objectContaining({ kind: 'raises', expected: 'ValueError' }));
    expect(e).toContainEqual(expect.objectContaining({ kind: 'raises', quote: expect.stringContaining('expected an error') }));
    expect(e).toContainEqual(expect.objectContaining({ kind: 'warns' }));
  });

  it('reads an error message quoted without a class, its first characters cut off', () => {
    const md = [
      'Scripting the model fails:',
      '```',
      'revious return statement returned a value of type Dict[str, Tensor] but this return statement returns a value of type List[Tensor]:',
      '```',
    ].join('\n');
    const e = readExpectations(md);
    expect(e).toContainEqual(
      expect.objectContaining({ kind: 'message', observed: expect.stringContaining('revious return statement returned') }),
    );
  });

  it('reads UserWarning lines, warnings.warn output and logging warnings', () => {
    const md = [
      '```',
      '/usr/lib/python3.10/site-packages/timm/models/_builder.py:12: UserWarning: Mapping deprecated model name vit_base to current',
      '  warnings.warn(',
      'WARNING:timm.models._builder:Unexpected keys (head.weight) found while loading pretrained weights.',
      '```',
    ].join('\n');
    const e = readExpectations(md);
    expect(e).toContainEqual(
      expect.objectContaining({ kind: 'warning', category: 'UserWarning', observed: 'Mapping deprecated model name vit_base to current' }),
    );
    expect(e).toContainEqual(
      expect.objectContaining({ kind: 'warning', observed: expect.stringContaining('Unexpected keys (head.weight)') }),
    );
  });

  it("reads the reporter's own failing assert in indented code, and output written as a code comment", () => {
    const md = [
      'To reproduce:',
      '',
      "    m = timm.create_model('darknet53', features_only=True)",
      '    assert len(y) == 6 # fails',
      '',
      '```',
      'm(x).shape',
      '# outputs: (tensor([3.6000]), tensor([4.5000]))',
      '```',
    ].join('\n');
    const e = readExpectations(md);
    expect(e).toContainEqual(expect.objectContaining({ kind: 'value', subject: 'len(y)', expected: '6' }));
    expect(e).toContainEqual(expect.objectContaining({ kind: 'printed', observed: '(tensor([3.6000]), tensor([4.5000]))' }));
  });

  it('reads nothing from python code, and tolerates an empty body', () => {
    expect(readExpectations('```python\nimport torch\nx = torch.ones(2)\nprint(x.sum())\n```')).toEqual([]);
    expect(readExpectations('')).toEqual([]);
  });

  it('gives readReport something to check when a report states only expectations (it used to read none: needs_info)', () => {
    const r = readReport(
      [
        '# features_only drops the last map',
        '',
        '    m = timm.create_model("darknet53", features_only=True)',
        '    y = m(x)',
        '    assert len(y) == 6 # fails',
        '',
      ].join('\n'),
    );
    expect(r.expected).toEqual([
      {
        kind: 'wrong_values',
        category: 'silent',
        evidence: "the report's assertion fails: assert len(y) == 6",
        exception: { type: 'AssertionError', message: '' },
      },
    ]);
    const prose = readReport(
      '# lr groups\n\n```python\nimport timm\n```\n\npos_embed falls into the last group, lr_scale=1.0 instead of 0.0238.\n',
    );
    expect(prose.expected).toEqual([{ kind: 'wrong_values', category: 'silent', evidence: 'lr_scale=1.0 instead of 0.0238' }]);
  });
});
