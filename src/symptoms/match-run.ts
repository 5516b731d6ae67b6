import type { ExceptionInfo, MatchResult, MatchVerdict, ReportReading, RunReading, Symptom, ValueComparison } from './types.js';
import { compareLine, valueBasis } from './compare-values.js';
import { isLibraryFile, lastExceptionLine } from './parse-tracebacks.js';
import { matchOracle } from './match-oracle.js';
import { matchStated, sharedProjectFrame } from './match-stated.js';
import { compareCrash, headline, MESSAGE_OVERLAP, messageOverlap, type Scored } from './compare-crash.js';

export { MESSAGE_OVERLAP, messageOverlap } from './compare-crash.js';
import { clip, jaccard, lineShape, maskedWords, screenLines } from './text.js';

/** Inputs that let the matcher check more than the reading holds. */
export interface MatchOptions {
  /** The script that ran: checked for the report's output printed literally and for raising the reported error itself. */
  script?: string;
  /** The run's raw output: the judge's own rules (last exception line, line shapes, values) are applied to it. */
  output?: string;
  /** Folders of the project's checkout in the run (the workspace): its code raises like a library's, not like the script's. */
  projectRoots?: readonly string[];
}

const RANK: Record<MatchVerdict, number> = { not_reproduced: 0, partial: 1, reproduced: 2 };

function result(
  verdict: MatchVerdict,
  score: number,
  reasons: string[],
  extra: Pick<MatchResult, 'compared' | 'patternOnly' | 'oracle'> = {},
): MatchResult {
  const out: MatchResult = { verdict, score: Math.round(Math.min(1, Math.max(0, score)) * 100) / 100, reasons };
  if (extra.compared?.length) out.compared = extra.compared;
  if (extra.patternOnly && verdict === 'partial') out.patternOnly = true;
  if (extra.oracle) out.oracle = extra.oracle;
  return out;
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * Ways a script can fake the report instead of reproducing it: printing the reported output verbatim,
 * raising the reported exception itself, printing a traceback by hand. Lines the report's own code already
 * contains are allowed (a reproduction may reuse the reporter's code).
 */
/**
 * Drops `#` comments (outside string quotes): a comment cannot print anything, and generated scripts often
 * quote the expected error in one ("# expected: RuntimeError: …").
 */
export function stripPythonComments(script: string): string {
  return script
    .split('\n')
    .map((line) => {
      let quote: string | null = null;
      for (let i = 0; i < line.length; i += 1) {
        const c = line[i];
        if (quote) {
          if (c === '\\') i += 1;
          else if (c === quote) quote = null;
        } else if (c === '"' || c === "'") quote = c;
        else if (c === '#') return line.slice(0, i).trimEnd();
      }
      return line;
    })
    .join('\n');
}

/** The text of each `raise Type(...)` of the given class in a script (the part up to the end of its line). */
function raisesOf(script: string, type: string): string[] {
  const re = new RegExp(`raise\\s+(?:[\\w.]+\\.)?${escapeRegExp(type)}\\s*\\((.*)$`, 'gm');
  return [...script.matchAll(re)].map((m) => m[1] ?? '');
}

/**
 * Ways a script can fake the report instead of reproducing it: printing the reported output verbatim,
 * raising the reported exception itself with the reported message, printing a traceback by hand. Lines the
 * report's own code already contains are allowed (a reproduction may reuse the reporter's code).
 */
function fakeSigns(report: ReportReading, rawScript: string): string[] {
  const script = stripPythonComments(rawScript);
  const reportCode = report.codeBlocks.map((b) => b.code).join('\n');
  const signs: string[] = [];
  const literal = new Set<string>();
  const addLiteral = (s: string | undefined) => {
    const t = (s ?? '').trim();
    // Shorter lines ("[0, 0]", "True") are too weak a signature: a real run may print them too.
    if (t.length >= 8) literal.add(t);
  };
  addLiteral(report.lastOutputLine);
  for (const l of report.metricLines.slice(-5)) addLiteral(l);
  for (const s of report.expected) {
    if (s.quoted) addLiteral(headline(s.quoted));
    if (s.exception) {
      addLiteral(headline(s.exception.message));
      addLiteral(`${s.exception.type}: ${headline(s.exception.message)}`);
    }
  }
  for (const l of literal) {
    if (reportCode.includes(l)) continue;
    if (script.includes(l)) signs.push(`the script contains the report's output literally: "${clip(l, 120)}"`);
  }
  for (const s of report.expected) {
    const type = s.exception?.type;
    if (!type) continue;
    const own = new Set(raisesOf(reportCode, type));
    // A `raise ValueError("no data")` guard is fine; one whose message is the reported one is not.
    const want = maskedWords(headline(s.exception?.message ?? ''));
    const faked = raisesOf(script, type).find((args) => !own.has(args) && jaccard(maskedWords(args), want) >= 0.5);
    if (faked !== undefined)
      signs.push(`the script raises ${type} itself, with the reported message, instead of letting the library raise it`);
  }
  if (/Traceback \(most recent call last\)/.test(script) && !/Traceback \(most recent call last\)/.test(reportCode)) {
    signs.push('the script prints a traceback text of its own');
  }
  return [...new Set(signs)];
}

function matchCrash(report: ReportReading, reading: RunReading, opts: MatchOptions): Scored {
  const wanted = report.expected.filter((s): s is Symptom & { exception: ExceptionInfo } => s.exception !== undefined);
  let best: Scored | null = null;
  for (const s of wanted) {
    const c = compareCrash(s.exception, reading.exception);
    if (c.verdict === 'reproduced' && reading.traceback === null && report.tracebacks.length > 0) {
      // An error line with no traceback is what `sys.exit("RuntimeError: …")` prints: not the library raising.
      c.verdict = 'partial';
      c.score = Math.min(c.score, 0.6);
      c.reasons.push('but the run printed the error without a traceback, where the report shows one');
    }
    if (c.verdict === 'reproduced' && opts.output !== undefined) {
      // Stay at least as strict as the benchmark judge: its last exception-looking line must agree too.
      const last = lastExceptionLine(opts.output);
      // TorchScript's class stands alone on its line and its message starts on the next (parse-tracebacks.ts).
      const judged =
        last && !last.message && reading.exception?.type === last.type ? { ...last, message: headline(reading.exception.message) } : last;
      const ok =
        judged !== null &&
        judged.type === s.exception.type &&
        // A report that names the class only has no message for the judge to hold the line to.
        (!headline(s.exception.message).trim() || messageOverlap(headline(s.exception.message), judged.message) >= MESSAGE_OVERLAP);
      if (!ok) {
        c.verdict = 'partial';
        c.score = Math.min(c.score, 0.6);
        c.reasons.push(
          `but the output's last exception line is ` +
            `${judged ? `${judged.type}: ${clip(judged.message, 100)}` : 'missing'} (the benchmark judge reads ` +
            `that line)`,
        );
      }
    }
    // The report names the class and its message is cut (or holds no more than the class), but shows the frames it
    // passed through: the same class raised through the same function of the project is the same failure.
    const shared =
      c.verdict === 'partial' &&
      reading.exception?.type === s.exception.type &&
      !headline(s.exception.message).trim() &&
      (opts.output === undefined || lastExceptionLine(opts.output)?.type === s.exception.type)
        ? sharedProjectFrame(report.frames ?? [], reading.traceback?.frames ?? [])
        : null;
    if (shared) {
      c.verdict = 'reproduced';
      c.score = 0.65;
      c.reasons = [
        `same exception ${s.exception.type}, raised through ${shared.function} (${shared.file.split('/').pop() ?? shared.file}) as in the ` +
          `report's traceback; the report's message is cut, so the frames are the evidence`,
      ];
    }
    for (const v of c.compared ?? []) v.agree = c.verdict === 'reproduced';
    if (!best || RANK[c.verdict] > RANK[best.verdict] || (RANK[c.verdict] === RANK[best.verdict] && c.score > best.score)) best = c;
  }
  return best ?? { verdict: 'not_reproduced', score: 0, reasons: ['the report shows no exception'] };
}

/** A line of prose: mostly plain words, no value-like tokens (`=`, `:` before a value, brackets, numbers with a unit). */
export function isProse(line: string): boolean {
  const tokens = line.trim().split(/\s+/);
  if (tokens.length < 6 || /[=[\]{}()<>|]|\w:\s*\S|^\W/.test(line.trim())) return false;
  const wordy = tokens.filter((t) => /^[A-Za-z][a-z'’-]*[.,;!?]?$/.test(t)).length;
  return wordy / tokens.length >= 0.8;
}

function sameMetricFamily(a: string | undefined, b: string | undefined): boolean {
  if (!a || !b) return true;
  const fam = (m: string) => (/accuracy/.test(m) ? 'accuracy' : /grad/.test(m) ? 'grad' : 'loss');
  return fam(a) === fam(b);
}

/**
 * Silent bugs (docs/verdicts.md): the report's symptom kinds must show, and the line the report ended on must
 * come back in the same shape with its values: determined values within the tolerance, values that depend on
 * the reporter's random state by pattern only.
 */
function matchPattern(report: ReportReading, reading: RunReading, opts: MatchOptions): Scored {
  const reasons: string[] = [];
  // Against the project, the script's own assertion raised in repro.py is no crash of the code under test: there a
  // reproduction must fail while the bug shows (run-candidate.ts), so it prints the reported line, then fails its check.
  const last = reading.traceback?.frames.at(-1);
  const ownAssert =
    (opts.projectRoots?.length ?? 0) > 0 &&
    reading.exception?.type === 'AssertionError' &&
    last !== undefined &&
    /(?:^|[\\/])repro\.py$/.test(last.file);
  const crashed =
    !ownAssert &&
    (reading.traceback !== null ||
      (opts.output !== undefined && /Traceback \(most recent call last\)/.test(opts.output) && lastExceptionLine(opts.output) !== null));
  if (crashed) {
    const e = reading.exception ?? (opts.output ? lastExceptionLine(opts.output) : null);
    return { verdict: 'not_reproduced', score: 0, reasons: [`the run crashed${e ? ` (${e.type})` : ''} where the report shows no crash`] };
  }
  const required = report.expected.filter((s) => s.kind !== 'wrong_values');
  const matched = required.filter((w) => reading.symptoms.some((g) => g.kind === w.kind && sameMetricFamily(w.metric, g.metric)));
  for (const m of matched) reasons.push(`same symptom: ${m.kind}${m.metric ? ` on ${m.metric}` : ''}`);
  const missing = required.filter((w) => !matched.includes(w));
  for (const m of missing) reasons.push(`missing symptom: ${m.kind}${m.metric ? ` on ${m.metric}` : ''}`);

  // A report's "output" block that holds a sentence (the reporter's prose in a fence) is no line a run can print.
  const target = report.lastOutputLine && !isProse(report.lastOutputLine) ? lineShape(report.lastOutputLine) : '';
  if (!target) {
    if (matched.length > 0 && missing.length === 0)
      return {
        verdict: 'reproduced',
        score: 0.6 + 0.3 * (matched.length / required.length),
        reasons: [...reasons, 'the report pasted no output; matched on the symptom it describes'],
      };
    if (matched.length > 0)
      return {
        verdict: 'partial',
        score: 0.5,
        reasons: [...reasons, 'the report pasted no output; some of the symptoms it describes are missing'],
      };
    return { verdict: 'not_reproduced', score: 0, reasons: reasons.length ? reasons : ['the run shows none of the reported symptoms'] };
  }
  const runLines = opts.output !== undefined ? screenLines(opts.output).map((l) => l.trim()) : null;
  const shapes = runLines ? runLines.map(lineShape) : (reading.lineShapes ?? []);
  if (!shapes.includes(target)) {
    reasons.push(`no output line shaped like the report's last line: ${clip(target, 100)}`);
    return matched.length > 0 ? { verdict: 'partial', score: 0.5, reasons } : { verdict: 'not_reproduced', score: 0, reasons };
  }
  reasons.push(`a line shaped like the report's last line appears: ${clip(target, 100)}`);
  const basis = valueBasis(report);
  const reportLine = report.lastOutputLine ?? '';
  const candidates = runLines ? runLines.filter((l) => lineShape(l) === target).map((l) => compareLine(reportLine, l, basis)) : [];
  // The agreeing line with the fewest numbers left uncompared, else the last line of that shape.
  const agreeing = candidates.filter((c) => c.agree).sort((a, b) => (a.notCompared?.length ?? 0) - (b.notCompared?.length ?? 0));
  const cmp: ValueComparison | undefined = agreeing[0] ?? candidates.at(-1);
  const compared = cmp ? [cmp] : [];
  if (cmp) reasons.push(cmp.agree ? `its values: ${cmp.note}` : `its values differ: ${cmp.note}`);
  // Values held to the report: determined ones, or random-state ones whose every number is a pattern value or equal.
  const valuesHeld = cmp !== undefined && cmp.agree && !cmp.notCompared?.length;
  const patternOnly = cmp !== undefined && cmp.agree && !valuesHeld;
  // Symptoms read from the reporter's prose ("the loss becomes NaN") are softer than ones read from pasted
  // output: when the run prints the reported line with the reported values, their absence does not block.
  const hardMissing = missing.filter((m) => report.outputText.includes(m.evidence.split('\n')[0] ?? '\u0000'));
  if (required.length > 0) {
    if (missing.length === 0 && (cmp === undefined || cmp.agree)) return { verdict: 'reproduced', score: cmp ? 1 : 0.9, reasons, compared };
    if (missing.length === 0)
      return { verdict: 'partial', score: 0.6, reasons: [...reasons, 'the symptom shows, but not with the reported values'], compared };
    if (valuesHeld && hardMissing.length === 0) return { verdict: 'reproduced', score: 0.8, reasons, compared };
    if (matched.length > 0) return { verdict: 'partial', score: 0.6, reasons, compared };
    return { verdict: 'partial', score: valuesHeld ? 0.5 : 0.4, reasons, compared };
  }
  // Nothing but the printed values to go on (wrong_values): determined values must agree, not just the shape.
  if (!runLines) return { verdict: 'partial', score: 0.4, reasons: [...reasons, 'values not compared (no output given)'] };
  if (valuesHeld) return { verdict: 'reproduced', score: 0.8, reasons, compared };
  if (patternOnly) {
    return {
      verdict: 'partial',
      score: 0.7,
      reasons: [
        ...reasons,
        `pattern reproduced: the remaining values cannot be compared because ${basis.why.replace(/^the values /, 'they ')}`,
      ],
      compared,
      patternOnly: true,
    };
  }
  return { verdict: 'partial', score: 0.4, reasons, compared };
}

/**
 * Judges a run against a report: `reproduced` / `partial` / `not_reproduced`, a score and the reasons.
 * Crashes match on exception class and message (numbers may differ, and the reasons say so); silent bugs on
 * the metric pattern and on the shape (and values) of the report's last output line. A script that fakes
 * the report — prints its output verbatim, raises the reported error itself — is never `reproduced`.
 * At least as strict as shared/bench/judge.py when `opts.output` is given.
 */
export function matchRun(report: ReportReading, reading: RunReading, opts: MatchOptions = {}): MatchResult {
  // A behavioural bug is decided by the script's assertion of the report's expectation, when it has one (issue 28),
  // also when the report's only statement of it is a sentence in words ("The `r2_score` should never be above 1."):
  // an assertion that sentence backs is held to it (issue 40 item 4), where nothing else could be.
  const againstProject = (opts.projectRoots?.length ?? 0) > 0;
  const oracle =
    opts.script !== undefined ? matchOracle(report, reading, { script: opts.script, output: opts.output ?? '', againstProject }) : null;
  if (report.expected.length === 0 && !oracle) {
    return result('not_reproduced', 0, ['the report shows no symptom (no traceback, error line, metric or output) to compare against']);
  }
  const scored: Scored =
    oracle ??
    (report.expected.some((s) => s.exception)
      ? matchCrash(report, reading, opts)
      : (matchStated(report, reading, opts) ?? matchPattern(report, reading, opts)));
  // The oracle's own AssertionError is the script's by design: raising it is not faking the reporter's.
  const fakes = (opts.script !== undefined ? fakeSigns(report, opts.script) : []).filter(
    (f) => !(oracle?.oracle && /raises AssertionError itself/.test(f)),
  );
  // Where the exception came from: a `raise` in the script itself, where the report's came from a library (or
  // the report shows no frames at all). A dynamically built message gets past the text checks, not past this.
  const reportedFrom = report.tracebacks.at(-1)?.frames.at(-1);
  const runFrom = reading.traceback?.frames.at(-1);
  const reportCode = report.codeBlocks.map((b) => b.code).join('\n');
  const expectedTypes = report.expected.flatMap((s) => (s.exception ? [s.exception.type] : []));
  if (
    opts.script !== undefined &&
    !oracle?.oracle &&
    runFrom &&
    reading.exception &&
    expectedTypes.includes(reading.exception.type) &&
    !isLibraryFile(runFrom.file) &&
    !(opts.projectRoots ?? []).some((r) => r.length > 1 && runFrom.file.startsWith(`${r.replace(/\/+$/, '')}/`)) &&
    /^raise\b/.test(runFrom.code ?? '') &&
    !reportCode.includes(runFrom.code ?? '') &&
    !(reportedFrom && !isLibraryFile(reportedFrom.file))
  ) {
    fakes.push(`the run's exception was raised by the script's own code (${runFrom.code ?? ''}), the report's inside a library`);
  }
  if (fakes.length > 0) {
    return result('not_reproduced', 0, [...fakes, `(without that it would be ${scored.verdict}: ${scored.reasons.join('; ')})`], {
      compared: scored.compared?.map((c) => ({ ...c, agree: false })),
    });
  }
  return result(scored.verdict, scored.score, scored.reasons, scored);
}
