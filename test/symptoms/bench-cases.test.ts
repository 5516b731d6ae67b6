import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { matchRun, readReport, readRun, type SymptomKind } from '../../src/symptoms/index.js';

/** The benchmark copy (fixtures/bench/dl-bugs, from shared/bench, MIT): every case's recorded output and issue. */
const ROOT = join(import.meta.dirname, '../../fixtures/bench/dl-bugs');
interface Case {
  id: string;
  symptom: 'crash' | 'silent';
  expected_last_line: string;
}
const cases = readdirSync(ROOT)
  .sort()
  .map((id) => ({
    case: JSON.parse(readFileSync(join(ROOT, id, 'case.json'), 'utf8')) as Case,
    output: readFileSync(join(ROOT, id, 'expected_output.txt'), 'utf8'),
    issue: readFileSync(join(ROOT, id, 'issue.md'), 'utf8'),
  }));

/** What a DL engineer reads in each silent case's recorded output. so-091 prints wrong tensors: no metric shows it. */
const SILENT_PATTERNS: Record<string, Array<`${SymptomKind}:${string}`>> = {
  'so-039': ['loss_diverging:train_loss'],
  'so-052': ['loss_not_decreasing:train_loss', 'accuracy_stuck:train_accuracy'],
  'so-060': ['loss_not_decreasing:train_loss'],
  'so-066': ['accuracy_stuck:train_accuracy', 'accuracy_stuck:val_accuracy'],
  'so-091': [],
};

describe('the reader over every recorded benchmark output', () => {
  it('covers all ten cases', () => {
    expect(cases.map((c) => c.case.id)).toHaveLength(10);
    expect(Object.keys(SILENT_PATTERNS).sort()).toEqual(cases.filter((c) => c.case.symptom === 'silent').map((c) => c.case.id));
  });

  for (const c of cases.filter((x) => x.case.symptom === 'crash')) {
    it(`${c.case.id}: the recorded exception class and message`, () => {
      const [type, ...msg] = c.case.expected_last_line.split(': ');
      const r = readRun(c.output, { exitCode: 1 });
      expect(r.exception).toEqual({ type, message: msg.join(': ') });
      expect(r.symptoms[0]?.category).toBe('crash');
      expect(r.symptoms[0]?.evidence).toContain(c.case.expected_last_line);
    });
  }

  for (const c of cases.filter((x) => x.case.symptom === 'silent')) {
    it(`${c.case.id}: no crash, the metric pattern`, () => {
      const r = readRun(c.output, { exitCode: 0 });
      expect(r.exception).toBeNull();
      expect(r.symptoms.map((s) => `${s.kind}:${s.metric}`)).toEqual(SILENT_PATTERNS[c.case.id]);
    });
  }

  it('the crash kinds', () => {
    const kinds = Object.fromEntries(
      cases.filter((c) => c.case.symptom === 'crash').map((c) => [c.case.id, readRun(c.output).symptoms[0]?.kind]),
    );
    expect(kinds).toEqual({
      'so-046': 'shape_mismatch',
      'so-050': 'type_error',
      'so-054': 'dtype_mismatch',
      'so-080': 'value_error',
      'so-101': 'shape_mismatch',
    });
  });
});

describe('the reader over every benchmark issue', () => {
  for (const c of cases) {
    it(`${c.case.id}: code, versions, the reported last line, and the expected symptom`, () => {
      const rep = readReport(c.issue);
      expect(rep.title.length).toBeGreaterThan(0);
      expect(rep.codeBlocks.length).toBeGreaterThanOrEqual(1);
      expect(rep.codeBlocks.every((b) => !b.code.includes('Traceback (most recent call last)'))).toBe(true);
      expect(rep.versions).toContainEqual({ name: 'torch', version: '2.4.0' });
      expect(rep.lastOutputLine).toBe(c.case.expected_last_line);
      expect(rep.expected.length).toBeGreaterThan(0);
      if (c.case.symptom === 'crash') {
        expect(`${rep.expected[0]?.exception?.type}: ${rep.expected[0]?.exception?.message}`).toBe(c.case.expected_last_line);
      } else {
        expect(rep.expected.every((s) => s.category === 'silent')).toBe(true);
      }
    });
  }

  it("each recorded output reproduces its own issue and no other case's", () => {
    const grid = cases.map((rowCase) => {
      const reading = readRun(rowCase.output);
      return cases.map((col) => matchRun(readReport(col.issue), reading, { output: rowCase.output }));
    });
    cases.forEach((row, i) => {
      cases.forEach((col, j) => {
        const v = grid[i]?.[j]?.verdict;
        if (i === j) expect(v, `${row.case.id} vs its own issue`).toBe('reproduced');
        else expect(v, `${row.case.id} output vs ${col.case.id} issue`).not.toBe('reproduced');
      });
    });
  });
});
