// Crashes compared: the reported exception against the run's, by class and by the words of the message's first
// line, as the benchmark judge compares them. Pure.
import { classifyException } from './classify.js';
import { clip, jaccard, maskedWords, numbersIn, words } from './text.js';
import type { ExceptionInfo, MatchResult, MatchVerdict, SymptomKind, ValueComparison } from './types.js';

/** Message word overlap (Jaccard, numbers kept) needed for a crash to count as the same: the benchmark judge's bar. @defaultValue 0.6 */
export const MESSAGE_OVERLAP = 0.6;

/**
 * Word overlap of a reported message with a run's, where a run message that contains every word of a
 * reported one of 3+ words counts as the same: newer Pythons say more for the same error (ImportError's
 * `cannot import name 'x'` became `cannot import name 'x' from 'mod' (/path/mod.py)`, torch's reshape error gained
 * `because the unspecified dimension size -1 …`). A reported message written with symbolic sizes (`shape [-1, 0, D]`,
 * `(B, C, H, W)`) has each symbol stand for any number of the run's.
 */
export function messageOverlap(reported: string, run: string): number {
  const a = words(reported);
  const b = words(run);
  const symbols = new Set([...reported.matchAll(/(?<=[[(,]\s*)([A-Z])(?=\s*[\],)])/g)].map((m) => (m[1] ?? '').toLowerCase()));
  const runHasNumber = [...b].some((w) => /^\d+$/.test(w));
  if (a.size >= 3 && [...a].every((w) => b.has(w) || (symbols.has(w) && runHasNumber))) return 1;
  return jaccard(a, b);
}

/** Kinds so generic that sharing one says little about two different exceptions. */
const GENERIC_KINDS = new Set<SymptomKind>(['other_crash', 'value_error', 'type_error', 'index_error', 'key_error']);

export function headline(message: string): string {
  return message.split('\n')[0]?.trim() ?? '';
}

export interface Scored {
  verdict: MatchVerdict;
  score: number;
  reasons: string[];
  compared?: ValueComparison[];
  patternOnly?: boolean;
  oracle?: MatchResult['oracle'];
}

export function compareCrash(want: ExceptionInfo, got: ExceptionInfo | null): Scored {
  const scored = compareCrashOnly(want, got);
  const agree = scored.verdict === 'reproduced';
  const note = !got
    ? 'the run raised no exception'
    : got.type !== want.type
      ? 'another exception class'
      : `same class; message word overlap ${jaccard(words(headline(want.message)), words(headline(got.message))).toFixed(2)} (${MESSAGE_OVERLAP} needed)`;
  const compared = [
    {
      what: 'the exception',
      report: clip(`${want.type}: ${headline(want.message)}`, 200),
      run: got ? clip(`${got.type}: ${headline(got.message)}`, 200) : 'no exception',
      basis: 'determined' as const,
      agree,
      note,
    },
  ];
  return { ...scored, compared };
}

function compareCrashOnly(want: ExceptionInfo, got: ExceptionInfo | null): Scored {
  if (!got) return { verdict: 'not_reproduced', score: 0, reasons: [`no exception in the run; the report shows ${want.type}`] };
  const a = headline(want.message);
  const b = headline(got.message);
  const overlap = messageOverlap(a, b);
  const masked = jaccard(maskedWords(a), maskedWords(b));
  const wantKind = classifyException(want);
  const gotKind = classifyException(got);
  const numsA = numbersIn(a).join(', ');
  const numsB = numbersIn(b).join(', ');
  const numberNote =
    numsA !== numsB
      ? [`numbers differ (report: ${numsA || 'none'}; run: ${numsB || 'none'}) — shapes and sizes may legitimately differ`]
      : [];
  if (got.type !== want.type) {
    const sameKind = wantKind === gotKind && !GENERIC_KINDS.has(wantKind);
    return {
      verdict: sameKind ? 'partial' : 'not_reproduced',
      score: sameKind ? 0.3 : 0.1 * overlap,
      reasons: [
        `raised ${got.type}, the report shows ${want.type}${sameKind ? ` (same kind: ${wantKind})` : ''}`,
        `run message: ${clip(b, 160)}`,
      ],
    };
  }
  // The report names only the class ("`IndexError` with the following stacktrace", its message cut off): the same
  // specific class is all there is to compare. A class that many unrelated failures raise decides nothing alone.
  if (!a.trim() && !/^(?:Exception|BaseException|RuntimeError|AssertionError|Error)$/.test(want.type)) {
    return {
      verdict: 'reproduced',
      score: 0.6,
      reasons: [`same exception ${got.type} (${gotKind}); the report names the class only, with no message to compare`],
    };
  }
  if (overlap >= MESSAGE_OVERLAP) {
    return {
      verdict: 'reproduced',
      score: 0.5 + 0.5 * overlap,
      reasons: [`same exception ${got.type} (${gotKind}), message overlap ${overlap.toFixed(2)}`, ...numberNote],
    };
  }
  if (masked >= MESSAGE_OVERLAP) {
    return {
      verdict: 'partial',
      score: 0.4 + 0.2 * masked,
      reasons: [
        `same exception ${got.type} and the same message once numbers are masked (overlap ${masked.toFixed(2)}; ${overlap.toFixed(2)} with numbers)`,
        ...numberNote,
      ],
    };
  }
  return {
    verdict: 'partial',
    score: 0.3,
    reasons: [`same exception ${got.type} with another message (overlap ${overlap.toFixed(2)}): ${clip(b, 160)}`],
  };
}
