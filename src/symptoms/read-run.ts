import type { RunReading, Symptom, Traceback } from './types.js';
import { classifyException } from './classify.js';
import { classifyPrintedValues, classifySeries } from './classify-series.js';
import { lastExceptionLine, parseTracebacks, parseWarnings } from './parse-tracebacks.js';
import { parseMetricPoints, seriesOf, toMetricSeries } from './parse-metrics.js';
import { clip, lineShape, screenLines } from './text.js';
import { dropFrameworkNoise } from './framework-output.js';

/** What the executor knows about how a run ended (a subset of RunResult). */
export interface RunFlags {
  exitCode?: number | null;
  timedOut?: boolean;
  oomKilled?: boolean;
  /** The signal that ended the process (`SIGSEGV`), when it was not our own timeout or memory kill. */
  signal?: string | null;
}

/** Distinct line shapes kept on a reading. @defaultValue 5000 */
export const MAX_LINE_SHAPES = 5000;

/** The excerpt that shows a crash: where in the user's code, and the exception line. */
function crashEvidence(tb: Traceback | null, type: string, message: string): string {
  const parts: string[] = [];
  const where = tb?.userFrame;
  if (where) parts.push(`File "${where.file}", line ${where.line}, in ${where.function}${where.code ? `\n    ${where.code}` : ''}`);
  const last = tb?.frames.at(-1);
  if (last && last !== where) parts.push(`File "${last.file}", line ${last.line}, in ${last.function}`);
  parts.push(message ? `${type}: ${message}` : type);
  return clip(parts.join('\n'), 1200);
}

function distinctShapes(lines: string[]): string[] {
  const seen = new Set<string>();
  // Newest lines first, so that a capped list keeps the end of the run, where verdict lines are.
  for (let i = lines.length - 1; i >= 0 && seen.size < MAX_LINE_SHAPES; i -= 1) {
    const l = lines[i] ?? '';
    if (l.trim() === '' || l.length > 2000) continue;
    seen.add(lineShape(l));
  }
  return [...seen].reverse();
}

/**
 * Reads one run's interleaved output: the final exception and its traceback, warnings, metric series, and
 * the symptoms they show (crash kind, NaN/Inf, flat or diverging loss, stuck accuracy, timeout, OOM kill).
 * Pure: the executor's flags come in as data.
 */
export function readRun(raw: string, run: RunFlags = {}): RunReading {
  // TensorFlow's and JAX's start-up lines are the same on every run: never evidence, never compared.
  const output = dropFrameworkNoise(raw);
  const tracebacks = parseTracebacks(output);
  const traceback = tracebacks.at(-1) ?? null;
  let exception = traceback?.exception ?? null;
  // A failed run that printed no traceback (logging.exception, a framework's own report) still names its error.
  if (!exception && run.exitCode !== undefined && run.exitCode !== null && run.exitCode !== 0) {
    const line = lastExceptionLine(output);
    if (line && !/Warning$/.test(line.type)) exception = line;
  }
  const symptoms: Symptom[] = [];
  if (exception) {
    symptoms.push({
      kind: classifyException(exception),
      category: 'crash',
      evidence: crashEvidence(traceback, exception.qualifiedType ?? exception.type, exception.message),
      exception: { type: exception.type, message: exception.message },
    });
  }
  const points = parseMetricPoints(output);
  const silent = classifySeries(points);
  symptoms.push(...silent, ...classifyPrintedValues(output, silent));
  const lines = screenLines(output);
  const tail = lines
    .filter((l) => l.trim() !== '')
    .slice(-3)
    .join('\n');
  if (run.oomKilled && !symptoms.some((s) => s.kind === 'out_of_memory')) {
    symptoms.push({
      kind: 'out_of_memory',
      category: 'crash',
      evidence: clip(`killed by the memory limit${tail ? `; last output:\n${tail}` : ''}`),
    });
  }
  if (run.signal && !run.timedOut && !run.oomKilled && !exception) {
    // A native crash (SIGSEGV in a CUDA or BLAS library, SIGABRT from a C++ assert) prints no Python traceback.
    symptoms.push({
      kind: 'other_crash',
      category: 'crash',
      evidence: clip(`killed by ${run.signal}${tail ? `; last output:\n${tail}` : ''}`),
    });
  }
  if (run.timedOut) {
    symptoms.push({
      kind: 'timeout',
      category: 'hang',
      evidence: clip(`no exit before the time limit${tail ? `; last output:\n${tail}` : ''}`),
    });
  }
  return {
    exception,
    traceback,
    warnings: parseWarnings(output),
    metrics: toMetricSeries(seriesOf(points)),
    symptoms,
    lineShapes: distinctShapes(lines),
  };
}
