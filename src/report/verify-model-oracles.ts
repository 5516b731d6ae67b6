// The model's restructured report as a source of oracles, checked against the report (issue 40 item 3): when the
// deterministic reader finds no symptom, the spans of the model's `observed` / `expected` that occur in the report's
// own text (whitespace, case and punctuation normalised) become what a run is held to. A span the report does not
// contain is the model's paraphrase and is never used. Pure.
import { expectationSymptoms, readExpectations, type Expectation } from '../symptoms/read-expectations.js';
import { clip } from '../symptoms/text.js';
import type { ReportReading, Symptom } from '../symptoms/types.js';
import type { BugReport } from './types.js';

/** Lower case, letters and digits only, single spaces: how a span and the report are compared. */
export function normaliseText(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();
}

/** Spans a model's field quotes: its quoted or backticked parts, else its sentences (and the whole field, when short). */
function spansOf(field: string): string[] {
  const quoted = [...field.matchAll(/["“`']([^"”`'\n]{8,600})["”`']/g)].map((m) => (m[1] ?? '').trim());
  const sentences = field
    .split(/(?<=[.!?])\s+|\n+/)
    .map((s) => s.trim())
    .filter((s) => s !== '');
  const spans = [...quoted, ...sentences, ...(field.length <= 600 ? [field.trim()] : [])];
  return [...new Set(spans.map((s) => s.replace(/^[-*•]\s*/, '').replace(/[.:;,]+$/, '')))].filter(
    (s) => normaliseText(s).split(' ').length >= 3,
  );
}

/** The spans of `field` the report contains, longest first, none inside another taken one. */
export function verifiedSpans(field: string, reportText: string): string[] {
  const report = ` ${normaliseText(reportText)} `;
  const found = spansOf(field)
    .filter((s) => report.includes(` ${normaliseText(s)} `))
    .sort((a, b) => b.length - a.length);
  const out: string[] = [];
  for (const s of found) if (!out.some((o) => normaliseText(o).includes(normaliseText(s)))) out.push(s);
  return out.slice(0, 4);
}

/** Words that make an observed span a message a run raises, not a description of wrong values. */
const MESSAGE_LIKE = new RegExp(
  String.raw`\b(?:error|exception|cannot|can't|could not|not supported|unsupported|expected .{1,60} but|but got|must be|is not` +
    String.raw`|failed|mismatch|invalid|not found|not defined|returned a value)\b`,
  'i',
);

/**
 * The symptoms and expectations the model's restructured report adds, or none when the deterministic reader found a
 * symptom already, the report is the deterministic one, or no span of the model's fields occurs in the report.
 */
export function modelOracles(
  bug: Pick<BugReport, 'observed' | 'expected' | 'source'>,
  markdown: string,
  reading: Pick<ReportReading, 'expected' | 'outputText'>,
): { symptoms: Symptom[]; expectations: Expectation[]; spans: string[] } {
  const none = { symptoms: [], expectations: [], spans: [] };
  if (bug.source !== 'llm' || reading.expected.length > 0) return none;
  const expectations: Expectation[] = [];
  const observed = verifiedSpans(bug.observed, markdown);
  const output = normaliseText(reading.outputText);
  for (const span of observed) {
    const inOutput = output !== '' && output.includes(normaliseText(span));
    if (inOutput || MESSAGE_LIKE.test(span)) expectations.push({ kind: 'message', quote: span, observed: span });
    else expectations.push({ kind: 'stated', quote: span, observed: span });
  }
  const expected = verifiedSpans(bug.expected, markdown);
  for (const span of expected) {
    // The span says what should happen: read it as the report's own sentence would be read ("should be script-able").
    const read = readExpectations(span).filter((e) => e.kind !== 'stated' && e.kind !== 'message' && e.kind !== 'printed');
    if (read.length) expectations.push(...read.map((e) => ({ ...e, quote: span })));
    else expectations.push({ kind: 'stated', quote: span, expected: span });
  }
  const symptoms: Symptom[] = [
    ...expectationSymptoms(expectations),
    // A sentence that names no mechanism is still what the run is held to: an oracle assertion of it decides.
    ...expectations
      .filter((e) => e.kind === 'stated')
      .map((e): Symptom => ({ kind: 'wrong_values', category: 'silent', evidence: clip(e.quote, 600) })),
  ];
  return { symptoms, expectations, spans: [...observed, ...expected] };
}
