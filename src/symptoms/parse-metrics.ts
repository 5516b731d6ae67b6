import type { MetricSeries } from './types.js';
import { MAX_SCAN_LINE, screenLines } from './text.js';
import { regexLines } from '../regex.js';

/**
 * Metric series from training output. Pure. Understands `name: value` / `name=value` pairs in the common
 * shapes: Keras progress bars (`- loss: 0.12 - accuracy: 0.5`), `Epoch 3/10 ... loss: 0.12`,
 * `epoch: 10\tTrain Loss : 1.09`, `Train Loss: 1.324 | Train Accuracy: 60.200`, tqdm postfixes
 * (`loss=0.123`), plain dicts (`{'loss': 0.3, 'eval_accuracy': 0.5}`), `Accuracy: 0/100 (0%)`,
 * `loss: tensor(0.69, grad_fn=…)`, `nan`/`inf`.
 */

/** One metric value with the line that printed it (the evidence for a symptom). */
export interface MetricPoint {
  name: string;
  value: number;
  line: string;
  lineNo: number;
}

const PAIR = regexLines('gi')`
    (?:^|[\s,|{([;\-\t])['"]?([A-Za-z][A-Za-z0-9_]*(?: +[A-Za-z][A-Za-z0-9_]*){0,3})['"]? *[:=] *(?:tensor\(\s*)?(-?(?:\d+\.?\d*(?:[eE][-+]?\d+)?
    |\.\d+)|[-+]?nan|[-+]?inf(?:inity)?)(?!\w)(?: *\/ *(\d+)(?: *\((\d+(?:\.\d+)?)%\))?)?
  `;

const METRIC_WORDS = new Set([
  'loss',
  'accuracy',
  'mae',
  'mse',
  'rmse',
  'f1',
  'auc',
  'precision',
  'recall',
  'perplexity',
  'ppl',
  'iou',
  'miou',
  'dice',
  'bleu',
  'reward',
  'nll',
  'error',
  'memory',
  'mem',
  'allocated',
  'rss',
  'vram',
]);
const PHASES = new Set(['train', 'val', 'test', 'eval']);
const QUALIFIERS = new Set([
  'best',
  'top1',
  'top5',
  'avg',
  'average',
  'mean',
  'running',
  'total',
  'grad',
  'norm',
  'gpu',
  'cuda',
  'cpu',
  'max',
  'peak',
]);
const SYNONYMS: Record<string, string> = {
  training: 'train',
  validation: 'val',
  valid: 'val',
  testing: 'test',
  evaluation: 'eval',
  acc: 'accuracy',
  gradient: 'grad',
  gradients: 'grad',
};
const STEP_TIME = /(\d+(?:\.\d+)?)\s*(ms\/step|s\/step|us\/step|s\/it|it\/s)\b/;
const LINE_PHASE = /^\s*(train(?:ing)?|val(?:id(?:ation)?)?|test(?:ing)?|eval(?:uation)?)\b/i;

/** Canonical metric name (`Train Loss` → `train_loss`, `val acc` → `val_accuracy`), or null if not a metric. */
export function canonicalMetricName(key: string, line = ''): string | null {
  const multiWord = /\s/.test(key.trim());
  let tokens = key
    .trim()
    .toLowerCase()
    .split(/[\s_]+/)
    .filter(Boolean)
    .map((t) => SYNONYMS[t] ?? t);
  // Multi-word keys pick up neighbouring prose ("and I get loss"); keep only the words that name a metric.
  if (multiWord) tokens = tokens.filter((t) => METRIC_WORDS.has(t) || PHASES.has(t) || QUALIFIERS.has(t));
  const isGradNorm = tokens.includes('grad') && tokens.includes('norm');
  if (!isGradNorm && !tokens.some((t) => METRIC_WORDS.has(t))) return null;
  if (!tokens.some((t) => PHASES.has(t))) {
    const phase = LINE_PHASE.exec(line)?.[1]?.toLowerCase();
    if (phase) tokens.unshift(SYNONYMS[phase] ?? phase);
  }
  return tokens.join('_');
}

function toNumber(raw: string): number {
  const r = raw.toLowerCase().replace(/^\+/, '');
  if (r.includes('nan')) return Number.NaN;
  if (r.includes('inf')) return r.startsWith('-') ? -Infinity : Infinity;
  return Number(r);
}

/** Every metric value printed in a text, in order. */
export function parseMetricPoints(text: string): MetricPoint[] {
  const points: MetricPoint[] = [];
  const lines = screenLines(text);
  for (let lineNo = 0; lineNo < lines.length; lineNo += 1) {
    const line = lines[lineNo] ?? '';
    if (line.length > MAX_SCAN_LINE || !/[:=]/.test(line)) continue;
    for (const m of line.matchAll(PAIR)) {
      const name = canonicalMetricName(m[1] ?? '', line);
      if (!name) continue;
      let value = toNumber(m[2] ?? '');
      // `Accuracy: 0/100 (0%)`: the percentage when printed, else the fraction as a percentage.
      if (m[3] !== undefined) {
        const denom = Number(m[3]);
        value = m[4] !== undefined ? Number(m[4]) : denom > 0 ? (100 * value) / denom : value;
      }
      points.push({ name, value, line: line.trim(), lineNo });
    }
    // Step time from Keras (`10ms/step`) and tqdm (`1.52s/it`, `9.50it/s`), in seconds: the slow_step series.
    const st = STEP_TIME.exec(line);
    if (st) {
      const v = Number(st[1]);
      const unit = st[2] ?? '';
      const seconds =
        unit === 'it/s'
          ? v > 0
            ? 1 / v
            : Number.POSITIVE_INFINITY
          : unit.startsWith('ms')
            ? v / 1000
            : unit.startsWith('us')
              ? v / 1e6
              : v;
      points.push({ name: 'step_time', value: seconds, line: line.trim(), lineNo });
    }
  }
  return points;
}

/** Groups points into one series per metric name, in order of first appearance. */
export function seriesOf(points: MetricPoint[]): Array<MetricSeries & { lines: string[] }> {
  const byName = new Map<string, MetricSeries & { lines: string[] }>();
  for (const p of points) {
    let s = byName.get(p.name);
    if (!s) {
      s = { name: p.name, values: [], lines: [] };
      byName.set(p.name, s);
    }
    s.values.push(p.value);
    s.lines.push(p.line);
  }
  return [...byName.values()];
}

/** Metric series printed in a text: `[{ name: 'loss', values: [0.9, 0.7, …] }, …]`. */
export function parseMetrics(text: string): MetricSeries[] {
  return toMetricSeries(seriesOf(parseMetricPoints(text)));
}

/** Drops the evidence lines and moves NaN/Inf out of `values` into the `nonFinite` count. */
export function toMetricSeries(series: Array<{ name: string; values: number[] }>): MetricSeries[] {
  return series.map(({ name, values }) => {
    const finite = values.filter((v) => Number.isFinite(v));
    const out: MetricSeries = { name, values: finite };
    if (finite.length < values.length) out.nonFinite = values.length - finite.length;
    return out;
  });
}

/** Whether a line prints at least one training metric. */
export function isMetricLine(line: string): boolean {
  return parseMetricPoints(line).length > 0;
}
