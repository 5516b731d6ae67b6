import { describe, expect, it } from 'vitest';
import { reportCode } from '../../../src/env/read/report-code.js';

describe('reportCode', () => {
  it('joins the fenced blocks and leaves prose out', () => {
    const report = 'Run this:\n```python\nimport keras\n```\nthen `pip list`:\n```\nkeras 3.6.0\n```\nThanks';
    expect(reportCode(report)).toBe('import keras\n\nkeras 3.6.0\n');
  });

  it('a fence left open runs to the end of the text (a post cut short inside its script)', () => {
    const report = 'Test script:\n```\nimport os\nos.environ["KERAS_BACKEND"] = "torch"\nimport keras\n\ndef gen(n):\n    while True';
    expect(reportCode(report)).toBe('import os\nos.environ["KERAS_BACKEND"] = "torch"\nimport keras\n\ndef gen(n):\n    while True');
    expect(reportCode('no code at all, only `inline` and a stray ``` in prose')).toBe('');
  });
});
