import type { Cassette } from './schema.js';

/**
 * The bench table of docs/benchmarks.md, built from recorded real-model sessions instead of a live run: each
 * cassette holds the outcome, attempts, tokens, time and judge.py's verdict of one case, so the table can be
 * re-printed (and checked against the doc) without a model or a sandbox. Pure.
 */

/** One cassette file: its name (so-039.json, so-039.r2.json) and its parsed content. */
export interface CassetteFile {
  file: string;
  cassette: Cassette;
}

/** Pass 1 is `<case>.json` (tier 0 then tier 1); pass 2 is `<case>.r2.json`, recorded with tier 0 off. */
export function passOf(file: string): 1 | 2 {
  return /\.r2\.json$/.test(file) ? 2 : 1;
}

export interface CassetteRow {
  caseId: string;
  pass: 1 | 2;
  status: string;
  verdict: string | null;
  /** Each attempt as `t<tier> <outcome>`. */
  attempts: string[];
  confirmation: string | null;
  seconds: number;
  tokens: number;
  judge: string;
  /** A "reproduced" that judge.py did not confirm (or never judged). */
  unconfirmed: boolean;
  /**
   * Attempts made after one that already matched everything a script can reach (pattern_reproduced): the only
   * attempts that can have been spent chasing values of the reporter's random state.
   */
  chasing: number;
}

export function cassetteRow({ file, cassette }: CassetteFile): CassetteRow {
  const o = cassette.outcome;
  const firstPattern = o.attempts.findIndex((a) => a.outcome === 'pattern_reproduced');
  return {
    caseId: cassette.case.replace(/^.*\//, ''),
    pass: passOf(file),
    status: o.status,
    verdict: o.verdict,
    attempts: o.attempts.map((a) => `t${a.tier} ${a.outcome}`),
    confirmation: o.confirmation,
    seconds: o.durationMs / 1000,
    tokens: o.usage.inputTokens + o.usage.outputTokens,
    judge: o.judge ? o.judge.line : 'not judged',
    unconfirmed: o.status === 'reproduced' && o.judge?.reproduced !== true,
    chasing: firstPattern < 0 ? 0 : o.attempts.length - firstPattern - 1,
  };
}

export interface PassTotals {
  pass: 1 | 2;
  cases: number;
  reproduced: number;
  patternReproduced: number;
  /** Cases in the pass by final status other than reproduced, e.g. { not_reproduced: 2 }. */
  other: Record<string, number>;
  attempts: number;
  seconds: number;
  tokens: number;
  unconfirmed: string[];
  chasing: string[];
}

export function passTotals(rows: CassetteRow[], pass: 1 | 2): PassTotals {
  const own = rows.filter((r) => r.pass === pass);
  const other: Record<string, number> = {};
  for (const r of own) if (r.status !== 'reproduced') other[r.status] = (other[r.status] ?? 0) + 1;
  return {
    pass,
    cases: own.length,
    reproduced: own.filter((r) => r.status === 'reproduced').length,
    patternReproduced: own.filter((r) => r.verdict === 'pattern_reproduced').length,
    other,
    attempts: own.reduce((s, r) => s + r.attempts.length, 0),
    seconds: own.reduce((s, r) => s + r.seconds, 0),
    tokens: own.reduce((s, r) => s + r.tokens, 0),
    unconfirmed: own.filter((r) => r.unconfirmed).map((r) => r.caseId),
    chasing: own.filter((r) => r.chasing > 0).map((r) => r.caseId),
  };
}

function cell(s: string): string {
  return s.replace(/\|/g, '\\|');
}

function outcomeCell(r: CassetteRow): string {
  return r.verdict && r.verdict !== r.status ? `${r.status} (${r.verdict})` : r.status;
}

function totalsLine(t: PassTotals): string {
  const other = Object.entries(t.other)
    .map(([k, n]) => `${n} ${k}`)
    .join(', ');
  return (
    `Pass ${t.pass}: ${t.reproduced}/${t.cases} reproduced${other ? `, ${other}` : ''} (${t.patternReproduced} of them pattern_reproduced); ` +
    `${t.attempts} attempts, ${Math.round(t.seconds)} s, ${t.tokens.toLocaleString('en-US')} tokens; ` +
    `reproduced but not confirmed by judge.py: ${t.unconfirmed.length ? t.unconfirmed.join(', ') : 'none'}; ` +
    `attempts after a pattern-only match: ${t.chasing.length ? t.chasing.join(', ') : 'none'}.`
  );
}

/** The Markdown table and the totals of both passes, sorted by case then pass. */
export function cassetteTable(files: CassetteFile[]): string {
  const rows = files.map(cassetteRow).sort((a, b) => a.caseId.localeCompare(b.caseId) || a.pass - b.pass);
  const lines = [
    '| case | pass | outcome | attempts | confirmed | time | tokens | judge.py on the final run |',
    '|---|---|---|---|---|---|---|---|',
    ...rows.map((r) => {
      const judge = `${cell(r.judge)}${r.unconfirmed ? ' **(not confirmed)**' : ''}`;
      const attempts = `${r.attempts.length}: ${r.attempts.join(', ')}`;
      const cells = [
        r.caseId,
        r.pass,
        outcomeCell(r),
        attempts,
        r.confirmation ?? '—',
        `${r.seconds.toFixed(0)} s`,
        r.tokens.toLocaleString('en-US'),
        judge,
      ];
      return `| ${cells.join(' | ')} |`;
    }),
    '',
    totalsLine(passTotals(rows, 1)),
    totalsLine(passTotals(rows, 2)),
  ];
  return lines.join('\n') + '\n';
}
