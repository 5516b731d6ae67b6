import type { Symptom } from './types.js';
import type { MetricPoint } from './parse-metrics.js';
import { seriesOf } from './parse-metrics.js';
import { clip, screenLines } from './text.js';

/**
 * Silent symptoms from metric series and printed values. Pure. Thresholds are deliberately coarse: they
 * tell "this loss never moved" from "this loss went down", not a slow learner from a fast one.
 */

const LOSS_LIKE = /(^|_)(loss|nll|mse|mae|rmse|perplexity|ppl|error)(_|$)/;
const ACCURACY_LIKE = /(^|_)accuracy(_|$)/;
const GRAD_NORM = /grad_norm|grad(_\w+)?_norm/;
const MEMORY_LIKE = /(^|_)(memory|mem|allocated|rss|vram)(_|$)/;

function median(v: number[]): number {
  const s = [...v].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? 0;
}

/** Relative improvement (first → best) below which a loss counts as not decreasing. @defaultValue 0.02 */
export const FLAT_LOSS_RATIO = 0.02;
/** last/first ratio above which a loss counts as diverging. @defaultValue 1.5 */
export const DIVERGING_RATIO = 1.5;

function evidenceOf(lines: string[], picks: number[]): string {
  const chosen = [...new Set(picks.filter((i) => i >= 0 && i < lines.length))].map((i) => lines[i] ?? '');
  return clip([...new Set(chosen)].join('\n'));
}

function nearChance(v: number, percent: boolean): boolean {
  const x = percent ? v / 100 : v;
  // Binary (0.5) and ten-class (0.1) chance: the two a reproduction script is likely to use.
  return Math.abs(x - 0.5) <= 0.02 || Math.abs(x - 0.1) <= 0.01;
}

/** Silent symptoms shown by metric points (NaN/Inf, flat or diverging loss, stuck accuracy, gradients). */
export function classifySeries(points: MetricPoint[]): Symptom[] {
  const out: Symptom[] = [];
  for (const s of seriesOf(points)) {
    const bad = s.values.findIndex((v) => !Number.isFinite(v));
    if (bad >= 0) {
      out.push({ kind: 'nan_inf', category: 'silent', metric: s.name, evidence: evidenceOf(s.lines, [bad]) });
      continue;
    }
    const v = s.values;
    const n = v.length;
    const first = v[0] ?? 0;
    const last = v[n - 1] ?? 0;
    if (GRAD_NORM.test(s.name) && n >= 2) {
      const max = Math.max(...v);
      if (max > 1e3 || (first > 0 && last / first > 100)) {
        out.push({ kind: 'exploding_gradients', category: 'silent', metric: s.name, evidence: evidenceOf(s.lines, [0, v.indexOf(max)]) });
      } else if (first > 0 && last < 1e-6) {
        out.push({ kind: 'vanishing_gradients', category: 'silent', metric: s.name, evidence: evidenceOf(s.lines, [0, n - 1]) });
      }
      continue;
    }
    if (s.name === 'step_time' && n >= 5) {
      // The first step carries warm-up (compilation, caches): compare later steps with the early ones.
      const rest = v.slice(1);
      const q = Math.max(1, Math.floor(rest.length / 4));
      const early = median(rest.slice(0, q));
      const late = median(rest.slice(-q));
      if (early > 0 && late > 3 * early) {
        out.push({ kind: 'slow_step', category: 'performance', metric: s.name, evidence: evidenceOf(s.lines, [1, n - 1]) });
      }
      continue;
    }
    if (MEMORY_LIKE.test(s.name) && n >= 4) {
      let ups = 0;
      for (let i = 1; i < n; i += 1) if ((v[i] ?? 0) >= (v[i - 1] ?? 0)) ups += 1;
      if (first > 0 && last >= 1.5 * first && ups / (n - 1) >= 0.8) {
        out.push({ kind: 'memory_growth', category: 'performance', metric: s.name, evidence: evidenceOf(s.lines, [0, n - 1]) });
      }
      continue;
    }
    if (n < 3) continue;
    if (LOSS_LIKE.test(s.name)) {
      const min = Math.min(...v);
      let ups = 0;
      for (let i = 1; i < n; i += 1) if ((v[i] ?? 0) > (v[i - 1] ?? 0)) ups += 1;
      const scale = Math.max(Math.abs(first), 1e-12);
      if (last > first * DIVERGING_RATIO && last - first > 1e-9 && ups / (n - 1) >= 0.6) {
        out.push({ kind: 'loss_diverging', category: 'silent', metric: s.name, evidence: evidenceOf(s.lines, [0, n - 1]) });
      } else if ((first - min) / scale < FLAT_LOSS_RATIO && last >= min) {
        out.push({ kind: 'loss_not_decreasing', category: 'silent', metric: s.name, evidence: evidenceOf(s.lines, [0, n - 1]) });
      }
      continue;
    }
    if (ACCURACY_LIKE.test(s.name)) {
      const max = Math.max(...v);
      const min = Math.min(...v);
      const percent = max > 1;
      const spread = (max - min) / (percent ? 100 : 1);
      if (spread <= 0.002 && nearChance(last, percent)) {
        out.push({ kind: 'accuracy_at_chance', category: 'silent', metric: s.name, evidence: evidenceOf(s.lines, [0, n - 1]) });
      } else if (spread <= 0.002) {
        out.push({ kind: 'accuracy_stuck', category: 'silent', metric: s.name, evidence: evidenceOf(s.lines, [0, n - 1]) });
      } else if (nearChance(last, percent) && (max - first) / (percent ? 100 : 1) < 0.05) {
        out.push({ kind: 'accuracy_at_chance', category: 'silent', metric: s.name, evidence: evidenceOf(s.lines, [0, n - 1]) });
      }
    }
  }
  return out;
}

const NAN_PRINT = /\btensor\(\s*\[*\s*-?nan\b|\btensor\(\s*\[*\s*-?inf\b|\[\s*nan(?:[\s,]+nan)*\s*\]|\bnan\b.*grad_fn/i;
const PREDICTIONS = /\b(pred\w*|prediction\w*|outputs?|argmax|labels? predicted)\b[^\n[(]*[[(]([^\])]*)[\])]/i;

/** Symptoms seen in printed values rather than named metrics: NaN tensors, all-identical predictions. */
export function classifyPrintedValues(text: string, known: Symptom[]): Symptom[] {
  const out: Symptom[] = [];
  const lines = screenLines(text);
  if (!known.some((s) => s.kind === 'nan_inf')) {
    const hit = lines.find((l) => l.length < 2000 && NAN_PRINT.test(l));
    if (hit) out.push({ kind: 'nan_inf', category: 'silent', evidence: clip(hit.trim()) });
  }
  for (const line of lines) {
    if (line.length > 2000) continue;
    const m = PREDICTIONS.exec(line);
    if (!m) continue;
    const values = (m[2] ?? '').split(/[\s,]+/).filter((x) => x !== '' && !Number.isNaN(Number(x)));
    if (values.length >= 4 && values.every((x) => Number(x) === Number(values[0]))) {
      out.push({ kind: 'constant_predictions', category: 'silent', evidence: clip(line.trim()) });
      break;
    }
  }
  return out;
}
