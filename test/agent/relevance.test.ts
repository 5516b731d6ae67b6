import { describe, expect, it } from 'vitest';
import { checkRelevance, keyIdentifiers } from '../../src/agent/relevance.js';
import { extractFacts } from '../../src/report/extract-facts.js';
import { readReport } from '../../src/symptoms/index.js';
import { CRASH_ISSUE, FAKED_SCRIPT, GOOD_SCRIPT, IRRELEVANT_SCRIPT } from '../fakes/repro-fixtures.js';

async function report(md: string) {
  const reading = readReport(md);
  return { reading, facts: await extractFacts(md, reading) };
}

describe('checkRelevance', () => {
  it('accepts a script that exercises what the report is about', async () => {
    const { reading, facts } = await report(CRASH_ISSUE);
    expect(keyIdentifiers(reading, facts)).toContain('layer');
    expect(checkRelevance(GOOD_SCRIPT, reading, facts)).toEqual({ ok: true, outcome: 'relevant', reasons: [] });
  });

  it('rejects raising the reported exception, printing its message, or printing a traceback by hand', async () => {
    const { reading, facts } = await report(CRASH_ISSUE);
    expect(checkRelevance(FAKED_SCRIPT, reading, facts)).toMatchObject({ ok: false, outcome: 'faked_bug' });
    const printed = GOOD_SCRIPT.replace('print(out.shape)', 'print("mat1 and mat2 shapes cannot be multiplied (4x3 and 5x2)")');
    expect(checkRelevance(printed, reading, facts).reasons.join()).toMatch(/writes the reported message/);
    const tb = GOOD_SCRIPT.replace('print(out.shape)', 'import sys\nsys.stderr.write("Traceback (most recent call last):")');
    expect(checkRelevance(tb, reading, facts).reasons.join()).toMatch(/writes a traceback by hand/);
  });

  it('does not count a comment quoting the error as a fake', async () => {
    const { reading, facts } = await report(CRASH_ISSUE);
    const commented = `# expect: RuntimeError: mat1 and mat2 shapes cannot be multiplied (4x3 and 5x2)\n${GOOD_SCRIPT}`;
    expect(checkRelevance(commented, reading, facts).ok).toBe(true);
  });

  it('rejects a script that touches nothing the report is about', async () => {
    const { reading, facts } = await report(CRASH_ISSUE);
    const v = checkRelevance(IRRELEVANT_SCRIPT, reading, facts);
    expect(v.outcome).toBe('irrelevant');
    expect(v.reasons.join()).toMatch(/uses none of what the report is about \(layer/);
  });

  it('rejects printing a reported metric line literally (silent bugs)', async () => {
    const md =
      '# loss stuck\n\n```python\nimport torch\nfor epoch in range(3):\n    print(f"epoch: {epoch} loss: {1.0986:.4f}")\n```\n\n```\nepoch: 1 loss: 1.0986\nepoch: 2 loss: 1.0986\n```\n';
    const { reading, facts } = await report(md);
    const fake = 'import torch\nfor e in range(3):\n    print("epoch: 2 loss: 1.0986")\n';
    expect(checkRelevance(fake, reading, facts).outcome).toBe('faked_bug');
  });
});
