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
});
export type BenchCase = z.infer<typeof BenchCase>;

export interface BenchTotals {
  cases: number;
  byStatus: Record<string, number>;
  bySymptom: Record<string, { cases: number; reproduced: number }>;
  /** By the report's expected symptom kind (shape_mismatch, wrong_values…). */
  byKind: Record<string, { cases: number; reproduced: number }>;
  falsePositives: string[];
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
    for (const [table, key] of [[bySymptom, c.symptom], [byKind, c.kind]] as const) {
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
    tokens: cases.reduce((a, c) => a + c.tokens, 0),
    costUsd: cases.reduce((a, c) => a + c.costUsd, 0),
    durationMs: cases.reduce((a, c) => a + c.durationMs, 0),
  };
}

const cell = (s: string): string => s.replace(/\|/g, '\\|').replace(/\s+/g, ' ').trim();

/** The markdown table of a bench run, with totals by symptom kind. Pure. */
export function benchMarkdown(cases: BenchCase[], meta: { dir: string; llm: string }): string {
  const t = benchTotals(cases);
  const lines = [
    `## repgen bench ${meta.dir} (LLM: ${meta.llm})`,
    '',
    '| case | symptom | status | confirmed | attempts | time | tokens | cost | judge.py on the run\'s own output |',
    '|---|---|---|---|---|---|---|---|---|',
    ...cases.map(
      (c) =>
        `| ${c.id} | ${c.symptom} (${c.kind}) | ${c.status} | ${c.confirmation} | ${c.attempts} | ${(c.durationMs / 1000).toFixed(1)} s | ${c.tokens} | $${c.costUsd.toFixed(4)} | ${cell(c.judge ?? '—')} |`,
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
    `Statuses: ${Object.entries(t.byStatus).map(([k, v]) => `${k} ${v}`).join(', ')}. Total time ${(t.durationMs / 1000).toFixed(1)} s, ${t.tokens} tokens, $${t.costUsd.toFixed(4)}.`,
    `False positives (reproduced but not confirmed by judge.py): ${t.falsePositives.length ? t.falsePositives.join(', ') : 'none'}.`,
    '',
    '| case | summary |',
    '|---|---|',
    ...cases.map((c) => `| ${c.id} | ${cell(c.summary)} |`),
  ];
  return `${lines.join('\n')}\n`;
}
