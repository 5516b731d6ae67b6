import type { ReportFacts } from '../report/types.js';
import type { ReportReading } from '../symptoms/types.js';
import { CONVENTIONAL_IMPORTS } from '../context/conventions.js';
import { fakeOutputReasons } from './fake-output.js';
import type { AttemptOutcome } from './types.js';

/** 'faked_bug': the script produces the report's text itself; 'irrelevant': it does not touch what the report is about. */
export type RelevanceVerdict =
  | { ok: true; outcome: 'relevant'; reasons: string[] }
  | { ok: false; outcome: Extract<AttemptOutcome, 'faked_bug' | 'irrelevant'>; reasons: string[] };

/** Comments say nothing about what runs; a comment quoting the error is not a fake. */
function stripComments(script: string): string {
  return script
    .split('\n')
    .map((line) => {
      const hash = line.indexOf('#');
      if (hash === -1) return line;
      const before = line.slice(0, hash);
      // Only cut when the # is outside a string: an even number of each quote before it.
      const quotes = (before.match(/'/g) ?? []).length % 2 === 0 && (before.match(/"/g) ?? []).length % 2 === 0;
      return quotes ? before : line;
    })
    .join('\n');
}

const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Identifiers that tie a script to the report: names its code defines, calls in its traceback, APIs in its title. */
export function keyIdentifiers(reading: ReportReading, facts: ReportFacts): string[] {
  const keys = new Set<string>();
  const code = facts.pythonBlocks.join('\n');
  for (const m of code.matchAll(/^\s*(?:def|class)\s+([A-Za-z_]\w*)/gm)) if (m[1] && !m[1].startsWith('_')) keys.add(m[1]);
  for (const tb of reading.tracebacks) {
    for (const f of tb.frames) {
      for (const m of (f.code ?? '').matchAll(/\.?([A-Za-z_]\w{2,})\s*\(/g)) if (m[1]) keys.add(m[1]);
    }
  }
  for (const m of `${reading.title} ${reading.errorLines.join(' ')}`.matchAll(
    /\b(?:nn|F|torch|tf|keras|np)\.([A-Za-z_]\w+)|\b([a-z_]\w{2,})\(\)/g,
  )) {
    const k = m[1] ?? m[2];
    if (k) keys.add(k);
  }
  // Calls that any script makes say nothing about relevance.
  for (const common of [
    'print',
    'range',
    'len',
    'super',
    'forward',
    '__init__',
    'main',
    'format',
    'append',
    'item',
    'size',
    'view',
    'zeros',
    'randn',
    'tensor',
    'Tensor',
    'float',
    'int',
    'str',
    'list',
    'dict',
    'call_impl',
    '_call_impl',
    'forward_call',
    'wrapped_call_impl',
  ])
    keys.delete(common);
  return [...keys];
}

/**
 * The relevance check of tier 1: the script must exercise what the report is about, and must not fake
 * the bug — printing or raising a copy of the reported output is rejected (src/agent/fake-output.ts),
 * while the report's own code, including the lines its traceback quotes, is always allowed.
 * Pure; the matcher's own guard against literal output is a second line of defence.
 */
export function checkRelevance(script: string, reading: ReportReading, facts: ReportFacts): RelevanceVerdict {
  const code = stripComments(script);
  const reasons = fakeOutputReasons(script, reading, facts);
  if (reasons.length) return { ok: false, outcome: 'faked_bug', reasons };

  const keys = keyIdentifiers(reading, facts).filter((k) => !(k in CONVENTIONAL_IMPORTS));
  if (keys.length && !keys.some((k) => new RegExp(`\\b${escape(k)}\\b`).test(code))) {
    reasons.push(`the script uses none of what the report is about (${keys.slice(0, 8).join(', ')})`);
  }
  return reasons.length ? { ok: false, outcome: 'irrelevant', reasons } : { ok: true, outcome: 'relevant', reasons: [] };
}
