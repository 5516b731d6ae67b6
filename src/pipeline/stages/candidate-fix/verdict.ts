import { fixVerdict } from '../../../workspace/fix-verdict.js';
import type {
  CandidateAttempt,
  CandidateFixRecord,
  CandidateResult,
  CandidateRunRecord,
  ExpectationCheck,
  NoEvidenceKind,
} from './types.js';

/** What one patched candidate showed, before it is read. */
export interface CandidateFacts {
  /** The patched modules' import failed (its message); null when it imported. */
  importFailure: string | null;
  /** The reproduction's runs against the patched copy. */
  runs: readonly Pick<CandidateRunRecord, 'outcome'>[];
  check: Pick<ExpectationCheck, 'unpatched' | 'patched'> | null;
}

/**
 * One candidate's result (issue 41 item 2). The reproduction failed without the patch (the step runs only after a
 * confirmed reproduction), so a patched run that passes every time is fail-to-pass. Still failing is held against the
 * oracle only when the independent expectation check turns from failing to passing with the same patch. Pure.
 */
export function candidateVerdict(f: CandidateFacts): { result: CandidateResult; noEvidence: NoEvidenceKind | null; reason: string } {
  if (f.importFailure)
    return { result: 'no_evidence', noEvidence: 'breaks_import', reason: `the patched project does not import: ${f.importFailure}` };
  const { verdict, reason } = fixVerdict(f.runs.map((r) => r.outcome));
  if (verdict === 'fixed')
    return { result: 'fix_sensitive', noEvidence: null, reason: `with the patch ${reason}; without it the bug shows` };
  if (verdict === 'still_reproduces') {
    const c = f.check;
    if (c && c.unpatched === 'failed' && c.patched === 'passed')
      return {
        result: 'oracle_suspect',
        noEvidence: null,
        reason: `${reason} with a patch under which the independent check of the report's expectation passes (it fails without it)`,
      };
    const why = !c
      ? 'no independent check of the expectation was given'
      : c.unpatched !== 'failed'
        ? `the independent check ${c.unpatched === 'passed' ? 'passes' : 'could not run'} without the patch, so it cannot vouch for it`
        : `the independent check ${c.patched === 'failed' ? 'still fails' : 'could not run'} with the patch`;
    return { result: 'still_fails', noEvidence: null, reason: `${reason} with the patch; ${why}` };
  }
  const infra = f.runs.every((r) => r.outcome === 'infra');
  return { result: 'no_evidence', noEvidence: infra ? 'infra' : 'fails_otherwise', reason: `with the patch ${reason}` };
}

const RANK: Record<CandidateResult, number> = { fix_sensitive: 3, oracle_suspect: 2, still_fails: 1, no_evidence: 0 };

/** The step's answer over its attempts: the strongest result any attempt showed. Pure. */
export function candidateSummary(
  attempts: readonly CandidateAttempt[],
): Pick<CandidateFixRecord, 'answer' | 'result' | 'summary' | 'diff'> {
  if (!attempts.length) return { answer: 'not_tried', result: null, summary: 'no candidate was made', diff: null };
  const best = [...attempts].sort((a, b) => RANK[b.result] - RANK[a.result] || b.n - a.n)[0]!;
  const n = attempts.length;
  const tried = `${n} candidate change${n === 1 ? '' : 's'}`;
  const ran = [...attempts].reverse().find((a) => a.runs.length > 0);
  switch (best.result) {
    case 'fix_sensitive':
      return {
        answer: 'yes',
        result: best.result,
        summary: `${tried}: the reproduction passes with candidate ${best.n} and fails without it`,
        diff: best.diff,
      };
    case 'oracle_suspect':
      return {
        answer: 'no',
        result: best.result,
        summary: `${tried}: the reproduction still fails with a change that makes the report's expectation true; its check may be too narrow`,
        diff: best.diff,
      };
    case 'still_fails':
      return { answer: 'no', result: best.result, summary: `${tried}: the reproduction still fails with each`, diff: best.diff };
    default:
      return {
        answer: 'no_evidence',
        result: best.result,
        summary: `${tried}, no evidence either way: ${attempts.map((a) => a.reason).join('; ')}`,
        diff: ran?.diff ?? null,
      };
  }
}
