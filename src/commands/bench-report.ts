import { z } from 'zod';

/** One case of a bench run. */
export const BenchCase = z.object({
  id: z.string(),
  status: z.string(),
  summary: z.string(),
  /** crash | silent | … from case.json, else the category of the report's first expected symptom. */
  symptom: z.string(),
  /** The expected symptom kind read from the report (shape_mismatch, loss_not_decreasing…). */
  kind: z.string(),
  attempts: z.number().int(),
  durationMs: z.number(),
  tokens: z.number().int(),
  costUsd: z.number(),
  confirmation: z.string(),
  offlineFeasible: z.boolean().nullable(),
  /** judge.py's line on the final run's own output, or why it was not run. */
  judge: z.string().nullable(),
  judgeReproduced: z.boolean().nullable(),
  blockers: z.array(z.string()),
  /** Fail-to-pass cases only: the fix check and the repro run by hand at both commits. */
  f2p: z
    .object({
      fixCheck: z.string().nullable(),
      buggyExit: z.number().int().nullable(),
      fixedExit: z.number().int().nullable(),
      byHand: z.boolean().nullable(),
      falseClaim: z.boolean(),
      note: z.string(),
      /** A behavioural reproduction's oracle at both commits, in words. */
      oracle: z.string().optional(),
    })
    .nullable()
    .optional(),
  /**
   * The candidate fix (issue 41), when the step ran: its result, whether it touches the real fix's files and functions
   * (null without a known fix), and what it added to the case's tokens and time.
   */
  candidate: z
    .object({
      result: z.string(),
      sameFiles: z.boolean().nullable(),
      sameFunctions: z.boolean().nullable(),
      tokens: z.number().int(),
      durationMs: z.number(),
    })
    .nullable()
    .optional(),
});
export type BenchCase = z.infer<typeof BenchCase>;

/** The candidate fix in words, for a case's row. Pure. */
export function candidateCell(c: NonNullable<BenchCase['candidate']>): string {
  const touch = c.sameFiles === null ? '' : `; real fix's file ${c.sameFiles ? 'yes' : 'no'}, function ${c.sameFunctions ? 'yes' : 'no'}`;
  return `candidate: ${c.result.replace('_', ' ')}${touch}; +${c.tokens} tokens, +${(c.durationMs / 1000).toFixed(1)} s`;
}

/** The table cell of a fail-to-pass case: the tool's verdicts, then what the hand runs said. Pure. */
export function f2pCell(f: NonNullable<BenchCase['f2p']>): string {
  const hand =
    f.byHand === null
      ? f.note.startsWith('by hand: cannot run')
        ? f.note
        : 'no script'
      : `by hand ${f.buggyExit ?? 'signal'}→${f.fixedExit ?? 'signal'}${f.byHand ? ' ✓' : ''}`;
  const oracle = f.oracle ? `; oracle ${f.oracle}` : '';
  return `${f.fixCheck ? `fix check: ${f.fixCheck}` : 'no fix check'}; ${hand}${oracle}${f.falseClaim ? ` — FALSE CLAIM: ${f.note}` : ''}`;
}

export interface BenchTotals {
  cases: number;
  byStatus: Record<string, number>;
  bySymptom: Record<string, { cases: number; reproduced: number }>;
  /** By the report's expected symptom kind (shape_mismatch, wrong_values…). */
  byKind: Record<string, { cases: number; reproduced: number }>;
  falsePositives: string[];
  /** Fail-to-pass cases: reproduced at the buggy commit AND fixCheck "fixed" at the fix commit. */
  f2p: { cases: number; reproduced: number; fixed: number; byHand: number };
  /** Claims (reproduced, fixed) that running the repro by hand contradicts. */
  falseClaims: string[];
  tokens: number;
  costUsd: number;
  durationMs: number;
}

/** Totals by status and by symptom; a false positive is a `reproduced` the judge does not confirm. Pure. */
export function benchTotals(cases: BenchCase[]): BenchTotals {
  const byStatus: Record<string, number> = {};
  const bySymptom: Record<string, { cases: number; reproduced: number }> = {};
  const byKind: Record<string, { cases: number; reproduced: number }> = {};
  for (const c of cases) {
    byStatus[c.status] = (byStatus[c.status] ?? 0) + 1;
    for (const [table, key] of [
      [bySymptom, c.symptom],
      [byKind, c.kind],
    ] as const) {
      const s = (table[key] ??= { cases: 0, reproduced: 0 });
      s.cases += 1;
      if (c.status === 'reproduced') s.reproduced += 1;
    }
  }
  return {
    cases: cases.length,
    byStatus,
    bySymptom,
    byKind,
    falsePositives: cases.filter((c) => c.status === 'reproduced' && c.judgeReproduced === false).map((c) => c.id),
    f2p: {
      cases: cases.filter((c) => c.f2p).length,
      reproduced: cases.filter((c) => c.f2p && c.status === 'reproduced').length,
      fixed: cases.filter((c) => c.f2p && c.status === 'reproduced' && c.f2p.fixCheck === 'fixed').length,
      byHand: cases.filter((c) => c.f2p?.byHand).length,
    },
    falseClaims: cases.filter((c) => c.f2p?.falseClaim).map((c) => c.id),
    tokens: cases.reduce((a, c) => a + c.tokens, 0),
    costUsd: cases.reduce((a, c) => a + c.costUsd, 0),
    durationMs: cases.reduce((a, c) => a + c.durationMs, 0),
  };
}

const cell = (s: string): string => s.replace(/\|/g, '\\|').replace(/\s+/g, ' ').trim();

/** The markdown table of a bench run, with totals by symptom kind. Pure. */
export function benchMarkdown(cases: BenchCase[], meta: { dir: string; llm: string }): string {
  const t = benchTotals(cases);
  const f2p = t.f2p.cases > 0;
  const lines = [
    `## repgen bench ${meta.dir} (LLM: ${meta.llm})`,
    '',
    `| case | symptom | status | confirmed | attempts | time | tokens | cost | judge.py on the run's own output |${f2p ? ' fail-to-pass |' : ''}`,
    `|---|---|---|---|---|---|---|---|---|${f2p ? '---|' : ''}`,
    ...cases.map(
      (c) =>
        `| ${c.id} | ${c.symptom} (${c.kind}) | ${c.status} | ${c.confirmation} | ${c.attempts} | ` +
        `${(c.durationMs / 1000).toFixed(1)} s | ${c.tokens} | $${c.costUsd.toFixed(4)} | ` +
        `${cell(c.judge ?? '—')} |${f2p ? ` ${cell(c.f2p ? f2pCell(c.f2p) : '—')}${c.candidate ? `; ${cell(candidateCell(c.candidate))}` : ''} |` : ''}`,
    ),
    '',
    '| symptom | cases | reproduced |',
    '|---|---|---|',
    ...Object.entries(t.bySymptom).map(([k, v]) => `| ${k} | ${v.cases} | ${v.reproduced} |`),
    '',
    '| expected symptom kind | cases | reproduced |',
    '|---|---|---|',
    ...Object.entries(t.byKind).map(([k, v]) => `| ${k} | ${v.cases} | ${v.reproduced} |`),
    '',
    `Statuses: ${Object.entries(t.byStatus)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')}. Total time ${(t.durationMs / 1000).toFixed(1)} s, ${t.tokens} tokens, $${t.costUsd.toFixed(4)}.`,
    `False positives (reproduced but not confirmed by judge.py): ${t.falsePositives.length ? t.falsePositives.join(', ') : 'none'}.`,
    ...(f2p
      ? [
          `Fail-to-pass: ${t.f2p.fixed}/${t.f2p.cases} reproduced at the buggy commit and fixed at the fix ` +
            `commit (${t.f2p.reproduced} reproduced; ${t.f2p.byHand} fail before and pass after by hand). False ` +
            `claims (contradicted by the hand runs): ` +
            `${t.falseClaims.length ? t.falseClaims.join(', ') : 'none'}.`,
        ]
      : []),
    ...candidateTotals(cases),
    '',
    '| case | summary |',
    '|---|---|',
    ...cases.map((c) => `| ${c.id} | ${cell(c.summary)} |`),
  ];
  return `${lines.join('\n')}\n`;
}

/** The candidate fixes over a bench (issue 41): how many were fix-sensitive, and any the real fix contradicts. Pure. */
function candidateTotals(cases: BenchCase[]): string[] {
  const tried = cases.filter((c) => c.candidate);
  if (!tried.length) return [];
  const sensitive = tried.filter((c) => c.candidate?.result === 'fix_sensitive');
  // Fix-sensitive where the real fix does not make the reproduction pass: the claim the measurement must never make.
  const contradicted = sensitive.filter((c) => c.f2p && c.f2p.fixCheck !== 'fixed').map((c) => c.id);
  const tokens = tried.reduce((n, c) => n + (c.candidate?.tokens ?? 0), 0);
  const base = tried.reduce((n, c) => n + c.tokens - (c.candidate?.tokens ?? 0), 0);
  return [
    `Candidate fixes: ${sensitive.length}/${tried.length} fix-sensitive (${tried.map((c) => `${c.id} ${c.candidate?.result}`).join(', ')}); ` +
      `fix-sensitive where the real fix leaves the reproduction failing: ${contradicted.length ? contradicted.join(', ') : 'none'}; ` +
      `tokens added: ${tokens} (${base > 0 ? `+${Math.round((tokens / base) * 100)} %` : 'no base'}).`,
  ];
}
