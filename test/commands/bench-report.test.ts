import { describe, expect, it } from 'vitest';
import { benchMarkdown, candidateCell, type BenchCase } from '../../src/commands/bench-report.js';

const base = {
  summary: '',
  kind: 'value_error',
  symptom: 'crash',
  status: 'reproduced',
  attempts: 1,
  durationMs: 10_000,
  tokens: 1_400,
  costUsd: 0,
  confirmation: '3/3',
  offlineFeasible: true,
  blockers: [],
  judge: null,
  judgeReproduced: null,
};
const f2p = (fixCheck: string) => ({ fixCheck, buggyExit: 1, fixedExit: 0, byHand: true, falseClaim: false, note: '' });

describe('the bench report: candidate fixes (issue 41)', () => {
  it('each case says its candidate; the totals count fix-sensitive ones, name any the real fix contradicts, and the tokens added', () => {
    const cases: BenchCase[] = [
      {
        ...base,
        id: 'a',
        f2p: f2p('fixed'),
        candidate: { result: 'fix_sensitive', sameFiles: true, sameFunctions: true, tokens: 400, durationMs: 3000 },
      },
      {
        ...base,
        id: 'b',
        f2p: f2p('inconclusive'),
        candidate: { result: 'fix_sensitive', sameFiles: false, sameFunctions: false, tokens: 400, durationMs: 3000 },
      },
      {
        ...base,
        id: 'c',
        f2p: f2p('fixed'),
        candidate: { result: 'no_evidence', sameFiles: null, sameFunctions: null, tokens: 400, durationMs: 1000 },
      },
      { ...base, id: 'd', f2p: f2p('fixed'), candidate: null },
    ];
    const md = benchMarkdown(cases, { dir: 'repo-f2p', llm: 'anthropic m' });
    expect(md).toContain("candidate: fix sensitive; real fix's file yes, function yes; +400 tokens, +3.0 s");
    expect(md).toContain(
      'Candidate fixes: 2/3 fix-sensitive (a fix_sensitive, b fix_sensitive, c no_evidence); fix-sensitive where the real fix ' +
        'leaves the reproduction failing: b; tokens added: 1200 (+40 %).',
    );
    expect(candidateCell({ result: 'still_fails', sameFiles: null, sameFunctions: null, tokens: 0, durationMs: 0 })).toBe(
      'candidate: still fails; +0 tokens, +0.0 s',
    );
    expect(benchMarkdown([{ ...base, id: 'x' }], { dir: 'd', llm: 'none' })).not.toContain('Candidate fixes');
  });
});
