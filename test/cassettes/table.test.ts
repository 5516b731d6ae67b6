import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Cassette } from '../../src/cassettes/schema.js';
import { cassetteRow, cassetteTable, passOf, passTotals, type CassetteFile } from '../../src/cassettes/table.js';

const ROOT = join(import.meta.dirname, '../..');
const DIR = join(ROOT, 'fixtures/cassettes/dl-bugs');
const recorded: CassetteFile[] = readdirSync(DIR)
  .filter((f) => f.endsWith('.json'))
  .sort()
  .map((file) => ({ file, cassette: Cassette.parse(JSON.parse(readFileSync(join(DIR, file), 'utf8'))) }));

/** A recorded cassette with its outcome changed, to show what each flag catches. */
function withOutcome(file: string, change: Partial<Cassette['outcome']>): CassetteFile {
  const base = recorded.find((f) => f.file === file);
  if (!base) throw new Error(`no ${file}`);
  return { file, cassette: { ...base.cassette, outcome: { ...base.cassette.outcome, ...change } } };
}

describe('the cassette bench table', () => {
  it('pass 2 is the .r2 recording', () => {
    expect(passOf('so-039.json')).toBe(1);
    expect(passOf('so-039.r2.json')).toBe(2);
  });

  it('flags a "reproduced" that judge.py did not confirm, or never judged', () => {
    expect(
      cassetteRow(withOutcome('so-046.json', { judge: { reproduced: false, line: 'not reproduced: raised TypeError' } })).unconfirmed,
    ).toBe(true);
    expect(cassetteRow(withOutcome('so-046.json', { judge: null })).unconfirmed).toBe(true);
    expect(cassetteRow(withOutcome('so-046.json', {})).unconfirmed).toBe(false);
    const table = cassetteTable([withOutcome('so-046.json', { judge: { reproduced: false, line: 'not reproduced: x' } })]);
    expect(table).toContain('not reproduced: x **(not confirmed)**');
    expect(table).toMatch(/Pass 1: .*reproduced but not confirmed by judge\.py: so-046;/);
  });

  it('counts attempts made after a pattern-only match as spent on unreachable values', () => {
    const chased = withOutcome('so-052.json', {
      attempts: [
        { n: 1, tier: 1, outcome: 'pattern_reproduced' },
        { n: 2, tier: 1, outcome: 'run_mismatch' },
        { n: 3, tier: 1, outcome: 'run_mismatch' },
      ],
    });
    expect(cassetteRow(chased).chasing).toBe(2);
    expect(passTotals([cassetteRow(chased)], 1).chasing).toEqual(['so-052']);
    expect(cassetteRow(withOutcome('so-052.json', {})).chasing).toBe(0);
  });

  it('totals each pass from its own files', () => {
    const rows = recorded.map(cassetteRow);
    for (const pass of [1, 2] as const) {
      const t = passTotals(rows, pass);
      const own = recorded.filter((f) => passOf(f.file) === pass);
      expect(t.cases).toBe(own.length);
      expect(t.tokens).toBe(own.reduce((s, f) => s + f.cassette.outcome.usage.inputTokens + f.cassette.outcome.usage.outputTokens, 0));
      expect(t.attempts).toBe(own.reduce((s, f) => s + f.cassette.outcome.attempts.length, 0));
    }
  });

  it('docs/benchmarks.md shows the table the recorded cassettes give (scripts/bench/cassette-table.ts)', () => {
    const doc = readFileSync(join(ROOT, 'docs/benchmarks.md'), 'utf8');
    expect(doc).toContain(cassetteTable(recorded));
  });
});
