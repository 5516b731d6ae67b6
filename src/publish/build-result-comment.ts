import type { AttemptOutcome, ReproOutcome, Verdict } from '../pipeline/types.js';
import type { Symptom } from '../symptoms/types.js';
import { bisectSection } from './bisect-section.js';
import { SYMPTOM_NAMES } from './symptom-names.js';
import { metricChart } from './metric-chart.js';
import { cutAtBoundary, fenceFor, neutralizeMentions, redactSecrets, tableCell } from './neutralize.js';
import { oracleSection, oracleShowedRow } from './oracle-section.js';
import { fixCheckSection } from './fix-check-section.js';
import { candidateFixRow, candidateFixSection } from './candidate-fix-section.js';
import { handRerunLine } from './hand-rerun.js';

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

/** Headline per verdict: one verdict, said once. */
function headline(outcome: ReproOutcome): string {
  const conf = outcome.confirmation;
  const runs = conf && conf.totalRuns > 0 ? `${conf.reproducedRuns} of ${conf.totalRuns} seeded runs` : '';
  switch (verdictOf(outcome)) {
    case 'reproduced':
      return `✅ Reproduced${runs ? ` (${runs})` : ''}`;
    case 'flaky':
      return `⚠️ Flaky: ${conf ? `${conf.reproducedRuns}/${conf.totalRuns}` : ''} seeded runs showed the bug`;
    case 'pattern_reproduced':
      return '🟡 Pattern reproduced; the exact values depend on the reporter’s random state';
    case 'needs_info':
      return 'ℹ️ Needs more information';
    case 'needs_data':
      return '📎 Could you share your data?';
    case 'no_model':
      return 'ℹ️ No model configured';
    case 'environment_failed':
      return outcome.env?.failure
        ? '🧰 The project’s environment could not be built'
        : '⚠️ Environment failure: an import the run needs fails here';
    case 'exit_budget':
      return '⏱️ Stopped: budget spent';
    case 'exit_infra':
      return '⚠️ Stopped: infrastructure problem';
    default:
      return '❌ Not reproduced';
  }
}

export function verdictOf(outcome: ReproOutcome): Verdict {
  return outcome.verdict ?? (outcome.status === 'exit_env' ? 'environment_failed' : outcome.status);
}

export { SYMPTOM_NAMES } from './symptom-names.js';

/** Attempt outcomes in words. */
const ATTEMPT_NAMES: Record<AttemptOutcome, string> = {
  reproduced: 'showed the bug',
  pattern_reproduced: 'showed the pattern',
  run_mismatch: 'ran, without the bug',
  syntax_error: 'did not parse',
  static_error: 'static errors',
  irrelevant: 'not about the report',
  faked_bug: 'faked the bug (rejected)',
  incomplete_code: 'code incomplete: not run',
  unavailable_here: 'needs what this runner lacks: not run',
  llm_error: 'model call failed',
  llm_malformed: 'model answer unreadable',
  infra: 'executor failed',
};

function symptomText(s: Symptom): string {
  const name = SYMPTOM_NAMES[s.kind] ?? 'a symptom';
  if (s.exception) return `${name}: \`${inline(`${s.exception.type}: ${s.exception.message.split('\n')[0] ?? ''}`, 200)}\``;
  const first = s.evidence.split('\n').at(-1) ?? '';
  return `${name}${s.metric ? ` (${s.metric.replace(/_/g, ' ')})` : ''}${first ? `: \`${inline(first, 160)}\`` : ''}`;
}

/** Text for inline code inside a table cell: one line, no pipes or backticks to break out. */
function inline(text: string, max: number): string {
  // A quote marker the reporter pasted with the line ("> loss: nan") is not part of it.
  const one = text
    .replace(/\s+/g, ' ')
    .replace(/`/g, "'")
    .replace(/\|/g, '/')
    .trim()
    .replace(/^(?:>\s*)+/, '');
  return cutAtBoundary(one, max);
}

/** Each symptom once, and each quoted output line once: two symptoms read off the same line quote it once. */
function listSymptoms(symptoms: Symptom[]): string {
  const unique = symptoms.filter((s, i) => symptoms.findIndex((x) => x.kind === s.kind && x.metric === s.metric) === i);
  const quoted = new Set<string>();
  const texts = unique.slice(0, 3).map((s) => {
    const text = symptomText(s);
    const line = /`[^`]*`/.exec(text)?.[0];
    if (!line) return text;
    if (quoted.has(line)) return text.replace(`: ${line}`, '');
    quoted.add(line);
    return text;
  });
  return texts.join('; ');
}

function sawRow(outcome: ReproOutcome): string {
  const crash = outcome.expected.find((s) => s.exception);
  if (crash) return symptomText(crash);
  const pattern = outcome.expected.filter((s) => s.kind !== 'wrong_values');
  const line = outcome.reportedOutput ? `the output ending \`${inline(outcome.reportedOutput, 160)}\`` : '';
  if (pattern.length)
    return `${pattern
      .slice(0, 3)
      .map((s) => SYMPTOM_NAMES[s.kind])
      .join('; ')}${line ? `, in ${line}` : ''}`;
  if (line) return line.replace(/^the output/, 'output');
  return outcome.expected.length ? listSymptoms(outcome.expected) : 'no error or output in the report';
}

function showedRow(outcome: ReproOutcome): string {
  if (outcome.scriptRan === false || (!outcome.match && !outcome.observed.length)) return 'nothing: no script ran';
  if (outcome.match?.oracle) return oracleShowedRow(outcome.match.oracle);
  const parts: string[] = [];
  if (outcome.observed.length) parts.push(listSymptoms(outcome.observed));
  else parts.push('no error and no metric symptom (the run finished normally)');
  const agree = outcome.match?.compared?.find((c) => c.what !== 'the exception');
  const line = agree ? `\`${inline(agree.run, 160)}\`` : '';
  if (line && !parts.some((p) => p.includes(line))) parts.push(`and the line ${line}`);
  return parts.join(' ');
}

function comparedSection(outcome: ReproOutcome): string {
  const compared = outcome.match?.compared ?? [];
  // A behavioural run's values are in the oracle section; its reasons would say them twice.
  if (!compared.length && outcome.match?.oracle) return oracleSection(outcome);
  if (!compared.length) {
    if (outcome.scriptRan === false || !outcome.match) return '';
    return `**Compared:** ${tableCell(outcome.match.reasons.join('; '), 500)}`;
  }
  const lines = compared.map(
    (c) =>
      `- ${c.what}: report \`${inline(c.report, 200)}\`, run \`${inline(c.run, 200)}\` — ${c.agree ? 'agree' : 'differ'}: ${tableCell(c.note, 400)}`,
  );
  return `**Compared:**\n${lines.join('\n')}`;
}

/** Versions that differ between the report and the run, flagged when the major or minor part differs. */
export function versionFlags(outcome: ReproOutcome): string[] {
  const flags: string[] = [];
  for (const pin of outcome.reportVersions ?? []) {
    const here = outcome.environment[pin.name.toLowerCase()];
    if (!here) continue;
    const mm = (v: string) => v.split(/[.+]/).slice(0, 2).join('.');
    if (mm(here) !== mm(pin.version))
      flags.push(
        `⚠️ ${pin.name} ${pin.version} in the report, ${here} here: a different ` +
          `${here.split('.')[0] === pin.version.split('.')[0] ? 'minor' : 'major'} version, which could matter ` +
          `for this bug`,
      );
  }
  return flags;
}

function formatMs(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : ms < 120_000 ? `${(ms / 1000).toFixed(1)} s` : `${(ms / 60_000).toFixed(1)} min`;
}

/** The one chart a silent bug gets: the metric its symptom is about, else the first. Plus a NaN note. */
function chartSection(outcome: ReproOutcome): string {
  const silent = [...outcome.expected, ...outcome.observed].some((s) => s.category === 'silent');
  if (!silent || outcome.scriptRan === false) return '';
  const wanted = [...outcome.observed, ...outcome.expected].find((s) => s.metric)?.metric;
  const series = outcome.metrics.find((m) => m.name === wanted) ?? outcome.metrics[0];
  if (!series) return '';
  const chart = metricChart(series);
  const bad = series.nonFinite ?? 0;
  const note = bad
    ? `_${series.name.replace(/_/g, ' ')}: ${bad} of ${series.values.length + bad} printed values were NaN or infinite; the chart shows only the finite ones._`
    : '';
  return [chart ?? '', note].filter(Boolean).join('\n\n');
}

interface Parts {
  head: string;
  table: string;
  compared: string;
  ask: string;
  chart: string;
  script: string;
  output: string;
  bisect: string;
  fixCheck: string;
  candidate: string;
  environment: string;
  attempts: string;
  footer: string;
}

const ADDED_MARK = '# added by RepGen';
/** What a check no run reached becomes (pipeline/stages/confirm/unreached-checks.ts). */
const UNREACHED_MARK = '# RepGen: not checked';

function scriptSection(outcome: ReproOutcome, maxChars: number): string {
  const script = outcome.script;
  if (!script || outcome.scriptRan === false) return '';
  let body = script;
  let note = '';
  if (body.length > maxChars) {
    note = `\n\n_Script truncated: ${body.length - maxChars} of ${body.length} characters left out._`;
    body = body.slice(0, maxChars);
  }
  const fence = fenceFor(body);
  const lines = script.split('\n').length;
  const added = script.split('\n').filter((l) => l.includes(ADDED_MARK)).length;
  const tier = outcome.attempts.at(-1)?.tier;
  const who = added ? `, ${added} added by RepGen` : tier === 1 ? ', written by the model' : '';
  const cut = script.split('\n').filter((l) => l.includes(UNREACHED_MARK)).length;
  const legend =
    (added ? `\n\nLines marked \`${ADDED_MARK}\` are RepGen's; the rest is the report's own code.` : '') +
    (cut
      ? `\n\n${cut} check(s) marked \`${UNREACHED_MARK}\` were taken out by RepGen: every run stopped at the failed check before ` +
        'them, so none ran, and a check the bug never reaches could only fail a correct fix.'
      : '');
  return (
    // "Reproduction" only for a script that reproduced the bug; any other ran and is shown as what was run.
    `<details><summary>${verdictOf(outcome) === 'reproduced' ? 'Reproduction script' : 'Script that was run'} (<code>repro.py</code>, ${lines} ` +
    `lines${who})</summary>${legend}\n\n${fence}python\n${body.replace(/\n$/, '')}\n${fence}${note}\n\n${handRerunLine(outcome)}\n\n</details>`
  );
}

/** The part of the output that shows the bug: the last traceback, or the lines that carry the symptoms. */
export function bugExcerpt(outcome: ReproOutcome, maxLines = 30): string {
  const out = outcome.outputExcerpt.replace(/\r/g, '');
  const tb = out.lastIndexOf('Traceback (most recent call last)');
  let lines: string[];
  if (tb >= 0) {
    lines = out.slice(tb).split('\n');
    if (lines.length > maxLines)
      lines = [...lines.slice(0, 4), `  … ${lines.length - maxLines + 4} lines of frames left out …`, ...lines.slice(-(maxLines - 5))];
  } else {
    const wanted = new Set<string>();
    for (const s of outcome.observed) for (const l of s.evidence.split('\n')) if (l.trim()) wanted.add(l.trim());
    for (const c of outcome.match?.compared ?? []) if (c.what !== 'the exception') wanted.add(c.run.trim());
    const keys = [...wanted].filter((w) => w.length >= 4);
    lines = out.split('\n').filter((l) => keys.some((w) => l.includes(w)));
    lines = lines.filter((l, i) => lines.indexOf(l) === i);
    if (!lines.length) lines = out.trimEnd().split('\n').slice(-15);
    if (lines.length > maxLines) lines = lines.slice(-maxLines);
  }
  return lines.join('\n').trimEnd();
}

function outputSection(outcome: ReproOutcome, maxChars: number): string {
  if (!outcome.outputExcerpt.trim() || outcome.scriptRan === false) return '';
  let excerpt = bugExcerpt(outcome);
  if (excerpt.length > maxChars) excerpt = excerpt.slice(-maxChars);
  const fence = fenceFor(excerpt);
  const shown = `**Output** (the part that shows it):\n\n${fence}text\n${excerpt}\n${fence}`;
  let full = outcome.outputExcerpt;
  if (full.trim() === excerpt.trim()) return shown;
  let note = '';
  if (full.length > maxChars) {
    note = `\n\n_Output truncated: showing the last ${maxChars} of ${full.length} characters._`;
    full = full.slice(-maxChars);
  }
  const f2 = fenceFor(full);
  return `${shown}\n\n<details><summary>Full output</summary>\n\n${f2}text\n${full.replace(/\n$/, '')}\n${f2}${note}\n\n</details>`;
}

function attemptsSection(outcome: ReproOutcome, maxRows: number): string {
  const all = outcome.attempts;
  if (!all.length) return '';
  const shown = all.length > maxRows ? all.slice(-maxRows) : all;
  const items = shown.map((a) => {
    const lines = a.feedback
      .split('\n')
      .map((l) => l.trim())
      .filter(Boolean)
      .slice(0, 8);
    const detail = lines.map((l) => `  - ${neutralizeMentions(l.length > 300 ? `${l.slice(0, 299)}…` : l)}`).join('\n');
    return `- **Attempt ${a.n}** (tier ${a.tier}${a.bundle ? `, context bundle ${a.bundle}` : ''}): ${ATTEMPT_NAMES[a.outcome]}${detail ? `\n${detail}` : ''}`;
  });
  const note = all.length > shown.length ? `\n\n_Showing the last ${shown.length} of ${all.length} attempts._` : '';
  return `<details><summary>What was tried (${all.length} attempt${all.length === 1 ? '' : 's'})</summary>\n\n${items.join('\n')}${note}\n\n</details>`;
}

function askSection(outcome: ReproOutcome): string {
  const v = verdictOf(outcome);
  if (!outcome.needsInfo.length || !['needs_info', 'needs_data'].includes(v)) return '';
  const intro = v === 'needs_data' ? 'To run it here, could you add one of these to the issue?' : 'Could you add these to the issue?';
  return `${intro}\n\n${outcome.needsInfo
    .slice(0, 5)
    .map((n) => `- ${neutralizeMentions(n)}`)
    .join('\n')}`;
}

function assemble(p: Parts): string {
  return (
    [
      p.head,
      p.table,
      p.fixCheck,
      p.compared,
      p.ask,
      p.chart,
      p.output,
      p.script,
      p.candidate,
      p.bisect,
      p.environment,
      p.attempts,
      p.footer,
    ]
      .filter(Boolean)
      .join('\n\n') + '\n'
  );
}

/**
 * The result comment the App posts and the CLI writes as comment.md. Pure: outcome in, markdown out.
 * One headline verdict; what the reporter saw, what they expected and what RepGen's run showed; the values
 * compared; the output that shows the bug (the rest in a fold); the script only when it ran.
 * Text copied from the report or the run is neutralised (no @mentions, no #refs), secrets are redacted,
 * and the whole stays under GitHub's size limit, saying what was cut.
 */
export function buildResultComment(outcome: ReproOutcome, options: ResultCommentOptions = {}): string {
  const maxChars = Math.min(options.maxChars ?? GITHUB_COMMENT_LIMIT, GITHUB_COMMENT_LIMIT);
  const evidenceRef = options.evidenceRef ?? 'evidence.json';
  const secrets = options.secrets ?? [];
  const head = [`### RepGen: ${headline(outcome)}`, '', neutralizeMentions(outcome.summary)].join('\n');
  const expected = outcome.reporterExpected?.trim();
  const table = [
    '| | |',
    '|---|---|',
    `| **The reporter saw** | ${tableCell(sawRow(outcome), 600)} |`,
    `| **They expected** | ${expected && expected !== 'not stated' ? tableCell(expected.replace(/^(?:>\s*)+/, ''), 400) : '_not stated in the report_'} |`,
    `| **RepGen's run showed** | ${tableCell(showedRow(outcome), 600)} |`,
    candidateFixRow(outcome),
  ]
    .filter(Boolean)
    .join('\n');
  const env = Object.entries(outcome.environment);
  const flags = outcome.scriptRan === false ? [] : versionFlags(outcome);
  const environment = env.length
    ? `**Environment:** ${env.map(([k, v]) => `${tableCell(k, 40)} \`${cutAtBoundary(v.replace(/`/g, "'"), 80)}\``).join(' · ')}` +
      (flags.length ? `\n\n${flags.map((f) => `- ${neutralizeMentions(f)}`).join('\n')}` : '')
    : '';
  const usage = outcome.usage;
  const footer =
    `<sub>Time ${formatMs(outcome.durationMs)} · tokens ${usage.inputTokens} in / ${usage.outputTokens} ` +
    `out · cost $${usage.costUsd.toFixed(4)} · judged by RepGen's symptom matcher on the script's own ` +
    `output, not by a model (rules: RepGen's docs/verdicts.md).</sub>`;

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
        head,
        table,
        compared: comparedSection(outcome),
        ask: askSection(outcome),
        chart: chartSection(outcome),
        script: scriptSection(outcome, b.script),
        output: outputSection(outcome, b.output),
        bisect: bisectSection(outcome),
        fixCheck: fixCheckSection(outcome),
        candidate: candidateFixSection(outcome, b.script / 2),
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

// The progress comment lives in build-progress-comment.ts; its names stay importable from here.
export { buildProgressComment, type StageProgress, type StageState } from './build-progress-comment.js';
