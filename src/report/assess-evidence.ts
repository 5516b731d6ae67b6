// What a report gives a run to be held to (issue 40 item 3): its code, the output it pasted, a stated expectation.
// Tier 1 starts whenever it has one of them; needs_info is only for a report with none, and it never asks for what
// the report contains. Pure.
import { statedExpectation } from './restructure.js';
import type { ReportResult } from './types.js';

export interface ReportEvidence {
  /** Python code the report shows. */
  code: boolean;
  /** Output, an error line or a traceback it pasted. */
  output: boolean;
  /** A symptom read from it, or a sentence saying what should happen or what happened instead. */
  expectation: boolean;
}

export function assessEvidence(report: Pick<ReportResult, 'reading' | 'facts' | 'bug'>): ReportEvidence {
  // Defensive over partial records (results stored before these fields existed, hand-built test doubles).
  const { reading, facts, bug } = report;
  return {
    code: (facts.pythonBlocks?.length ?? 0) > 0,
    output: (reading.outputText ?? '').trim() !== '' || (reading.errorLines?.length ?? 0) > 0 || (reading.tracebacks?.length ?? 0) > 0,
    expectation:
      (reading.expected?.length ?? 0) > 0 || (reading.expectations ?? []).length > 0 || statedExpectation(bug?.expected ?? '') !== '',
  };
}

/** Whether the report has anything at all a run could be held to or started from. */
export function hasEvidence(report: Pick<ReportResult, 'reading' | 'facts' | 'bug'>): boolean {
  const e = assessEvidence(report);
  return e.code || e.output || e.expectation;
}
