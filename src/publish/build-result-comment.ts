import type { ExitStatus, ReproOutcome, StageName } from '../pipeline/types.js';
import type { MetricSeries, Symptom } from '../symptoms/types.js';
import { fenceFor, neutralizeMentions, redactSecrets, tableCell } from './neutralize.js';

/** GitHub rejects issue comments longer than this many characters. */
export const GITHUB_COMMENT_LIMIT = 65_536;

export interface ResultCommentOptions {
  /** Character cap of the whole comment. @defaultValue 65536 (GitHub's limit) */
  maxChars?: number;
  /** Literal secret values of the host (tokens, keys) to redact wherever they appear. @defaultValue [] */
  secrets?: readonly string[];
  /** Where the full evidence lives, named when something had to be cut. @defaultValue 'evidence.json' */
  evidenceRef?: string;
}

const VERDICT: Record<ExitStatus, string> = {
  reproduced: '✅ Reproduced',
  not_reproduced: '❌ Not reproduced',
  needs_info: 'ℹ️ Needs more information',
  exit_budget: '⏱️ Stopped: budget spent',
  exit_infra: '⚠️ Stopped: infrastructure problem',
};

function describe(symptoms: Symptom[]): string {
  if (!symptoms.length) return '—';
  return symptoms
    .map((s) => (s.exception ? `${s.kind}: ${s.exception.type}: ${s.exception.message}` : `${s.kind}${s.metric ? ` (${s.metric})` : ''}: ${s.evidence}`))
    .join('; ');
}

function formatMs(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : ms < 120_000 ? `${(ms / 1000).toFixed(1)} s` : `${(ms / 60_000).toFixed(1)} min`;
}

/** A Mermaid xychart of a metric series; GitHub renders it. At most 60 points so that it stays legible. */
export function metricChart(series: MetricSeries): string | null {
  const finite = series.values.filter((v) => Number.isFinite(v));
  if (finite.length < 2) return null;
  const step = Math.max(1, Math.ceil(series.values.length / 60));
  const points = series.values.filter((_, i) => i % step === 0).map((v) => (Number.isFinite(v) ? Number(v.toPrecision(6)) : 0));
  const xs = points.map((_, i) => i * step + 1);
  const name = series.name.replace(/["\n]/g, '').slice(0, 40);
  const lo = Math.min(...points);
  const hi = Math.max(...points);
  const pad = hi === lo ? Math.abs(hi) * 0.1 || 1 : 0;
  return [
    '```mermaid',
    'xychart-beta',
    `  title "${name} (observed)"`,
    `  x-axis "step" [${xs.join(', ')}]`,
    `  y-axis "${name}" ${Number((lo - pad).toPrecision(6))} --> ${Number((hi + pad).toPrecision(6))}`,
    `  line [${points.join(', ')}]`,
    '```',
  ].join('\n');
}

interface Parts {
  head: string;
  table: string;
  chart: string;
  script: string;
  output: string;
  environment: string;
  attempts: string;
  footer: string;
}

function scriptSection(script: string | null, maxChars: number): string {
  if (!script) return '';
  let body = script;
  let note = '';
  if (body.length > maxChars) {
    note = `\n\n_Script truncated: ${body.length - maxChars} of ${body.length} characters left out._`;
    body = body.slice(0, maxChars);
  }
  const fence = fenceFor(body);
  const lines = script.split('\n').length;
  return `<details><summary>Reproduction script (<code>repro.py</code>, ${lines} lines)</summary>\n\n${fence}python\n${body.replace(/\n$/, '')}\n${fence}${note}\n\n</details>`;
}

function outputSection(excerpt: string, maxChars: number): string {
  if (!excerpt.trim()) return '';
  let body = excerpt;
  let note = '';
  if (body.length > maxChars) {
    note = `\n\n_Output truncated: showing the last ${maxChars} of ${body.length} characters._`;
    body = body.slice(-maxChars);
  }
  const fence = fenceFor(body);
  return `<details><summary>Output of the final run</summary>\n\n${fence}text\n${body.replace(/\n$/, '')}\n${fence}${note}\n\n</details>`;
}

function attemptsSection(outcome: ReproOutcome, maxRows: number): string {
  const all = outcome.attempts;
  if (!all.length) return '';
  const shown = all.length > maxRows ? all.slice(-maxRows) : all;
  const rows = shown.map((a) => `| ${a.n} | ${a.tier} | ${a.bundle ?? '—'} | ${tableCell(a.outcome, 40)} | ${tableCell(a.feedback, 400)} |`);
  const note = all.length > shown.length ? `\n\n_Showing the last ${shown.length} of ${all.length} attempts._` : '';
  return `<details><summary>What was tried (${all.length} attempt${all.length === 1 ? '' : 's'})</summary>\n\n| # | tier | bundle | outcome | feedback |\n|---|---|---|---|---|\n${rows.join('\n')}${note}\n\n</details>`;
}

function assemble(p: Parts): string {
  return [p.head, p.table, p.chart, p.script, p.output, p.environment, p.attempts, p.footer].filter(Boolean).join('\n\n') + '\n';
}

/**
 * The result comment the App posts and the CLI writes as comment.md. Pure: outcome in, markdown out.
 * Text copied from the report or the run is neutralised (no @mentions, no #refs), secrets are redacted,
 * and the whole stays under GitHub's size limit, saying what was cut.
 */
export function buildResultComment(outcome: ReproOutcome, options: ResultCommentOptions = {}): string {
  const maxChars = Math.min(options.maxChars ?? GITHUB_COMMENT_LIMIT, GITHUB_COMMENT_LIMIT);
  const evidenceRef = options.evidenceRef ?? 'evidence.json';
  const secrets = options.secrets ?? [];
  const conf = outcome.confirmation;
  const runs = conf && conf.totalRuns > 0 ? ` — reproduced ${conf.reproducedRuns}/${conf.totalRuns} runs` : '';
  const headLines = [`### RepGen: ${VERDICT[outcome.status]}${runs}`, '', neutralizeMentions(outcome.summary)];
  if (outcome.needsInfo.length) {
    headLines.push('', '**What the report lacks:**', ...outcome.needsInfo.map((n) => `- ${neutralizeMentions(n)}`));
  }
  const matchReasons = outcome.match?.reasons.length ? tableCell(outcome.match.reasons.join('; '), 600) : '—';
  const table = [
    '| | Expected (from the report) | Observed (RepGen\'s run) |',
    '|---|---|---|',
    `| Symptoms | ${tableCell(describe(outcome.expected), 600)} | ${tableCell(describe(outcome.observed), 600)} |`,
    `| Match | ${outcome.match ? `${outcome.match.verdict} (score ${outcome.match.score.toFixed(2)})` : '—'} | ${matchReasons} |`,
  ].join('\n');
  const silent = outcome.expected.some((s) => s.category === 'silent') || outcome.observed.some((s) => s.category === 'silent');
  const charts = silent ? outcome.metrics.slice(0, 2).map(metricChart).filter((c): c is string => c !== null) : [];
  const env = Object.entries(outcome.environment);
  const environment = env.length ? `**Environment:** ${env.map(([k, v]) => `${tableCell(k, 40)} \`${v.replace(/`/g, "'").slice(0, 80)}\``).join(' · ')}` : '';
  const usage = outcome.usage;
  const footer = `<sub>Time ${formatMs(outcome.durationMs)} · tokens ${usage.inputTokens} in / ${usage.outputTokens} out · cost $${usage.costUsd.toFixed(4)} · a reproduction is judged by RepGen's symptom matcher on the script's own output, not by a model.</sub>`;

  // Shrink the big parts step by step until the comment fits; say what was cut.
  const budgets = [
    { script: 40_000, output: 8_000, rows: 30 },
    { script: 20_000, output: 3_000, rows: 15 },
    { script: 8_000, output: 1_000, rows: 5 },
    { script: 2_000, output: 300, rows: 2 },
  ];
  let text = '';
  for (const b of budgets) {
    text = redactSecrets(
      assemble({
        head: headLines.join('\n'),
        table,
        chart: charts.join('\n\n'),
        script: scriptSection(outcome.script, b.script),
        output: outputSection(outcome.outputExcerpt, b.output),
        environment,
        attempts: attemptsSection(outcome, b.rows),
        footer,
      }),
      secrets,
    );
    if (text.length <= maxChars) return text;
  }
  const note = `\n\n_Comment truncated to GitHub's size limit; the full evidence is in ${evidenceRef}._\n`;
  return `${text.slice(0, Math.max(0, maxChars - note.length))}${note}`;
}

export type StageState = 'pending' | 'running' | 'done' | 'failed' | 'skipped';

export interface StageProgress {
  stage: StageName;
  state: StageState;
  /** One line on what the stage did or is doing ("attempt 3/15, tier 1, bundle 1"). */
  note?: string;
}

const MARK: Record<StageState, string> = { pending: '⬜', running: '⏳', done: '✅', failed: '❌', skipped: '➖' };

/** The progress comment: one line per stage, edited in place as the job moves on. */
export function buildProgressComment(stages: readonly StageProgress[], options: { title?: string; secrets?: readonly string[] } = {}): string {
  const lines = [`### ${options.title ?? 'RepGen is reproducing this issue'}`, ''];
  for (const s of stages) lines.push(`- ${MARK[s.state]} **${s.stage}**${s.note ? ` — ${tableCell(s.note, 200)}` : ''}`);
  lines.push('', '<sub>This comment is updated as each stage finishes.</sub>');
  return redactSecrets(`${lines.join('\n')}\n`, options.secrets ?? []);
}
