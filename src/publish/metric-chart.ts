import type { MetricSeries } from '../symptoms/types.js';

/** A number for Mermaid: never in exponent form (Mermaid's xychart grammar reads no `e+31`). */
export function plainNumber(v: number): string {
  if (!Number.isFinite(v)) return '0';
  if (v !== 0 && Math.abs(v) < 1e-6) return '0';
  return v.toLocaleString('en-US', { useGrouping: false, maximumSignificantDigits: 6 });
}

const LOSS_OR_ACCURACY = /(loss|nll|mse|mae|error|accuracy|acc)/i;

/**
 * The y-axis of a chart: from the data, never zoomed so far that a flat line looks steep (the visible span is
 * at least 10 % of the values' size), and from 0 for a loss or an accuracy unless the values are far from it.
 */
export function chartAxis(name: string, values: number[]): { min: number; max: number } {
  const lo = Math.min(...values);
  const hi = Math.max(...values);
  const size = Math.max(Math.abs(lo), Math.abs(hi));
  const minSpan = size > 0 ? 0.1 * size : 1;
  let min = lo;
  let max = hi;
  if (max - min < minSpan) {
    const pad = (minSpan - (max - min)) / 2;
    min -= pad;
    max += pad;
  } else {
    const pad = 0.05 * (max - min);
    min -= pad;
    max += pad;
  }
  if (LOSS_OR_ACCURACY.test(name) && lo >= 0 && lo <= 0.8 * hi) min = 0;
  if (LOSS_OR_ACCURACY.test(name) && lo >= 0 && min < 0) min = 0;
  if (min === max) max = min + 1;
  return { min: Number(plainNumber(min)), max: Number(plainNumber(max)) };
}

/**
 * A Mermaid xychart of one metric series; GitHub renders it. At most 60 points. NaN/inf are not drawn as
 * numbers: the chart's title says how many there were (a NaN plotted as 0 would hide the bug).
 */
export function metricChart(series: MetricSeries): string | null {
  const finite = series.values.filter((v) => Number.isFinite(v));
  if (finite.length < 2) return null;
  const step = Math.max(1, Math.ceil(finite.length / 60));
  const points = finite.filter((_, i) => i % step === 0);
  const xs = points.map((_, i) => i * step + 1);
  const name = series.name.replace(/[^\w .-]/g, '').slice(0, 40) || 'metric';
  const axis = chartAxis(name, points);
  const bad = series.nonFinite ?? 0;
  const title = `${name} (observed${bad ? `; ${bad} NaN/inf value${bad === 1 ? '' : 's'} not drawn` : ''})`;
  return [
    '```mermaid',
    'xychart-beta',
    `  title "${title}"`,
    `  x-axis "step" [${xs.join(', ')}]`,
    `  y-axis "${name}" ${plainNumber(axis.min)} --> ${plainNumber(axis.max)}`,
    `  line [${points.map(plainNumber).join(', ')}]`,
    '```',
  ].join('\n');
}
