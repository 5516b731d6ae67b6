import { describe, expect, it } from 'vitest';
import { modelOracles } from '../../src/report/index.js';
import { matchRun, readReport, readRun } from '../../src/symptoms/index.js';

// Issue 40 item 4: oracles as broad as the report's words, and an assertion that is the report's own sentence is backed.

/** A run that failed at `repro.py` line `line` with `message`. */
function failedAt(line: number, text: string, message: string): string {
  return [
    'Traceback (most recent call last):',
    `  File "/tmp/w/repro.py", line ${line}, in <module>`,
    `    ${text}`,
    `AssertionError: ${message}`,
    '',
  ].join('\n');
}

const EINOPS = [
  '# misleading error message for an ellipsis on the right',
  '```python',
  'import numpy as np',
  'from einops import rearrange',
  'x = np.zeros((2, 3, 4))',
  'rearrange(x, "a b c -> a ... c")  # gives "Ellipsis found in left side, but not right side of a pattern"',
  '```',
  'The ellipsis is on the right side, so the message should say right side.',
].join('\n');

const EINOPS_SCRIPT = (assertion: string) =>
  [
    'import numpy as np',
    'from einops import rearrange, EinopsError',
    'x = np.zeros((2, 3, 4))',
    'try:',
    '    rearrange(x, "a b c -> a ... c")',
    'except EinopsError as e:',
    '    msg = str(e)',
    assertion,
  ].join('\n');

describe("an assertion that is the report's own sentence (einops)", () => {
  it('backs `assert "left side" not in msg` (the words the report says it got must be gone)', () => {
    const report = readReport(EINOPS);
    const script = EINOPS_SCRIPT('assert "left side" not in msg, f"message is {msg}"');
    const out = failedAt(
      8,
      'assert "left side" not in msg, f"message is {msg}"',
      'message is Ellipsis found in left side, but not right side',
    );
    const m = matchRun(report, readRun(out), { script, output: out });
    expect(m.verdict).toBe('reproduced');
    expect(m.oracle?.held).toBe(false);
  });

  it('backs `assert "right side" in msg` (what the report says it should say), and not words the report never writes', () => {
    const report = readReport(EINOPS);
    const right = EINOPS_SCRIPT('assert "right side" in msg.split(",")[0], f"message is {msg}"');
    const out = failedAt(8, 'assert "right side" in msg.split(",")[0], f"message is {msg}"', 'message is Ellipsis found in left side');
    expect(matchRun(report, readRun(out), { script: right, output: out }).verdict).toBe('reproduced');
    const other = EINOPS_SCRIPT('assert "axis mismatch" in msg, f"message is {msg}"');
    const out2 = failedAt(8, 'assert "axis mismatch" in msg, f"message is {msg}"', 'message is Ellipsis found in left side');
    const m2 = matchRun(report, readRun(out2), { script: other, output: out2 });
    expect(m2.verdict).toBe('not_reproduced');
  });
});

const TIMM_EITHER = [
  '# create_model silently drops non-viable out_indices',
  '```python',
  'import timm',
  "m = timm.create_model('resnet18', features_only=True, out_indices=(0, 7))",
  '```',
  'Instead of failing, create_model returns a model with the non-viable indices missing.',
  'Expected: an error, or at least a warning.',
].join('\n');

describe('"fail or at least warn" accepts an exception or a warning (timm)', () => {
  const narrow = [
    'import warnings, timm',
    'with warnings.catch_warnings(record=True) as w:',
    '    warnings.simplefilter("always")',
    "    m = timm.create_model('resnet18', features_only=True, out_indices=(0, 7))",
    'assert len(w) > 0, f"no warning; feature_info has {len(m.feature_info)} entries"',
  ].join('\n');
  const broad = [
    'import warnings, timm',
    'raised = False',
    'with warnings.catch_warnings(record=True) as w:',
    '    warnings.simplefilter("always")',
    '    try:',
    "        m = timm.create_model('resnet18', features_only=True, out_indices=(0, 7))",
    '    except Exception:',
    '        raised = True',
    'assert raised or len(w) > 0, "create_model neither raised nor warned"',
  ].join('\n');

  it('tells the model when its warning-only assertion is narrower than the sentence it cites', () => {
    const report = readReport(TIMM_EITHER);
    const out = failedAt(5, 'assert len(w) > 0', 'no warning; feature_info has 1 entries');
    const m = matchRun(report, readRun(out), { script: narrow, output: out });
    expect(m.verdict).toBe('partial');
    expect(m.reasons.join(' ')).toMatch(/narrower than the report.*accepts an exception or a warning/);
  });

  it('reproduces with an assertion that accepts either', () => {
    const report = readReport(TIMM_EITHER);
    const out = failedAt(9, 'assert raised or len(w) > 0', 'create_model neither raised nor warned');
    expect(matchRun(report, readRun(out), { script: broad, output: out }).verdict).toBe('reproduced');
  });
});

describe('an expectation that names no mechanism accepts any observable that meets it (keras)', () => {
  it('backs an assertion near the number of a sentence the model quoted from the report', () => {
    const md = [
      '# regression does not fit',
      '```python',
      'import numpy as np, keras',
      'model = keras.Sequential([keras.layers.Dense(1)])',
      'pred = model.predict(np.array([10.0]))[0][0]',
      '```',
      'After training, the prediction is far from 110.',
    ].join('\n');
    const reading = readReport(md);
    const added = modelOracles({ source: 'llm', observed: 'the prediction is far from 110', expected: 'not stated' }, md, reading);
    const report = { ...reading, expected: added.symptoms, expectations: [...(reading.expectations ?? []), ...added.expectations] };
    const script = [
      'import numpy as np, keras',
      'model = keras.Sequential([keras.layers.Dense(1)])',
      'pred = float(model.predict(np.array([10.0]))[0][0])',
      'assert abs(pred - 110) < 5, f"pred is {pred}"',
    ].join('\n');
    const out = failedAt(4, 'assert abs(pred - 110) < 5', 'pred is 3.2');
    expect(matchRun(report, readRun(out), { script, output: out }).verdict).toBe('reproduced');
    const wrong = script.replace('110', '42');
    const out2 = failedAt(4, 'assert abs(pred - 42) < 5', 'pred is 3.2');
    expect(matchRun(report, readRun(out2), { script: wrong, output: out2 }).verdict).toBe('not_reproduced');
  });
});

describe("a report whose only expectation is a sentence in words (item 4: the report's own sentence backs an assertion)", () => {
  const report = (title: string, code: string[], sentence: string) =>
    readReport([`# ${title}`, '```python', ...code, '```', sentence].join('\n'));

  it('torchmetrics: "should never be above 1" backs `assert score <= 1`; a number the sentence never states is refused by name', () => {
    const r = report(
      'r2_score larger than 1 with a constant target',
      ['import torch', 'from torchmetrics.functional import r2_score', 'print(r2_score(p, t))'],
      'The `r2_score` should never be above 1.',
    );
    expect(r.expected).toEqual([]);
    const backed = 'assert score <= 1, f"r2_score is {score}; the report says it should never be above 1"';
    const out = failedAt(5, backed, 'r2_score is 82685.53125; the report says it should never be above 1');
    expect(matchRun(r, readRun(out), { script: ['', '', '', '', backed].join('\n'), output: out }).verdict).toBe('reproduced');
    const unbacked = 'assert score < -1000, f"r2_score is {score}"';
    const out2 = failedAt(5, unbacked, 'r2_score is 82685.53125');
    const m = matchRun(r, readRun(out2), { script: ['', '', '', '', unbacked].join('\n'), output: out2 });
    expect(m.verdict).toBe('not_reproduced');
    expect(m.reasons.join(' ')).toMatch(/never states/);
    // The assertion holding is the expected behaviour (as at the fix), not "no symptom".
    const held = matchRun(r, readRun('tensor(0.)\n'), { script: ['', '', '', '', backed].join('\n'), output: 'tensor(0.)\n' });
    expect(held.verdict).toBe('not_reproduced');
    expect(held.reasons.join(' ')).toMatch(/expectation holds/);
  });

  it('kornia: "should stay in the range 0 to 1" backs `assert out.max() <= 1`; einops: "should reject" backs a raises assertion', () => {
    const k = report(
      'ycbcr_to_rgb returns values outside the image range',
      ['import torch', 'from kornia.color import ycbcr_to_rgb', 'print(ycbcr_to_rgb(torch.rand(1, 3, 4, 4)))'],
      'For an input in range, the RGB output should stay in the range 0 to 1.',
    );
    const kAssert = 'assert out.max() <= 1, f"max is {out.max()}, the report expects at most 1"';
    const kOut = failedAt(4, kAssert, 'max is 1.3865, the report expects at most 1');
    expect(matchRun(k, readRun(kOut), { script: ['', '', '', kAssert].join('\n'), output: kOut }).verdict).toBe('reproduced');
    const e = report(
      'parse_shape accepts repeated axes',
      ['import numpy as np', 'from einops import parse_shape', "print(parse_shape(np.zeros((10, 20, 30)), 'b b c'))"],
      'I would expect parse_shape to reject this pattern with an error rather than return a dict.',
    );
    expect(e.expected).toEqual([]);
    const eAssert = "with pytest.raises(Exception): parse_shape(np.zeros((10, 20, 30)), 'b b c')";
    const eOut = [
      'Traceback (most recent call last):',
      '  File "/tmp/w/repro.py", line 4, in <module>',
      `    ${eAssert}`,
      "Failed: DID NOT RAISE <class 'Exception'>",
      '',
    ].join('\n');
    const m = matchRun(e, readRun(eOut), {
      script: ['import numpy as np', 'import pytest', 'from einops import parse_shape', eAssert].join('\n'),
      output: eOut,
    });
    expect(m.verdict).toBe('reproduced');
    expect(m.oracle?.form).toBe('raises');
  });
});
