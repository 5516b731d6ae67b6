// Runs held to what a report says in its own words (issue 40): a message it quotes with no exception class, a "should
// work" sentence, and the frames a report whose message was cut shows. Pure.
import { clip, words } from './text.js';
import { isLibraryFile } from './parse-tracebacks.js';
import type { ExceptionInfo, Frame, ReportReading, RunReading, Symptom } from './types.js';
import type { Scored } from './compare-crash.js';

/** Share of a quoted message's words a run's message must carry. @defaultValue 0.6 */
export const QUOTE_COVERAGE = 0.6;

/**
 * Exceptions that say the run lacked something of this machine (a package, a file, the network) or that the script
 * itself is broken: none is the report's call failing.
 */
const NOT_THE_CALL = new Set([
  'ModuleNotFoundError',
  'ImportError',
  'FileNotFoundError',
  'URLError',
  'HTTPError',
  'ConnectionError',
  'gaierror',
  'NameError',
  'SyntaxError',
  'IndentationError',
  'AssertionError',
  'KeyboardInterrupt',
  'SystemExit',
]);

/**
 * How much of a quoted message a run's message carries: the share of the quote's words it contains. The quote's first
 * and last word may be cut (`revious return statement…`, `…of type List[Te`): a cut word counts when a run word
 * ends (first) or starts (last) with it.
 */
export function quoteCoverage(quote: string, run: string): number {
  const tokens = quote.toLowerCase().match(/[a-z_]+|\d+/g) ?? [];
  if (tokens.length === 0) return 0;
  const have = words(run);
  const list = [...have];
  const wanted = [...new Set(tokens)];
  let hit = 0;
  for (const w of wanted) {
    if (have.has(w)) hit += 1;
    else if (w === tokens[0] && w.length >= 3 && list.some((r) => r.endsWith(w))) hit += 1;
    else if (w === tokens.at(-1) && w.length >= 2 && list.some((r) => r.startsWith(w))) hit += 1;
  }
  return hit / wanted.length;
}

/** Everything a run's exception says: its class, every line of its message, and the messages it was raised from. */
function exceptionText(reading: RunReading): string {
  const all: ExceptionInfo[] = [...(reading.traceback?.chain ?? []), ...(reading.exception ? [reading.exception] : [])];
  return all.map((e) => `${e.qualifiedType ?? e.type}: ${e.message}`).join('\n');
}

/** The run's exception was raised by a `raise` of the script's own code (not a library's, not the project's). */
function raisedByScript(reading: RunReading, reportCode: string, projectRoots: readonly string[]): string | null {
  const at = reading.traceback?.frames.at(-1);
  if (!at || isLibraryFile(at.file)) return null;
  if (projectRoots.some((r) => r.length > 1 && at.file.startsWith(`${r.replace(/\/+$/, '')}/`))) return null;
  if (!/^raise\b/.test(at.code ?? '') || reportCode.includes(at.code ?? '')) return null;
  return at.code ?? 'raise';
}

/**
 * Judges a run against a report's quoted messages and "should work" sentences; null when the report states neither.
 * A quoted message: the run's exception carries its words (any class). A "should work" sentence: the run raised
 * inside the call the sentence is about (any call of the script when it names none), and not for a reason of this
 * machine (a missing package, file or network) nor the script's own mistake.
 */
export function matchStated(
  report: ReportReading,
  reading: RunReading,
  opts: { script?: string; projectRoots?: readonly string[] },
): Scored | null {
  const quoted = report.expected.filter((s): s is Symptom & { quoted: string } => s.quoted !== undefined);
  const works = report.expected.filter((s): s is Symptom & { raisedIn: string } => s.raisedIn !== undefined);
  if (!quoted.length && !works.length) return null;
  const e = reading.exception;
  // A report that also shows printed values or metrics (torchmetrics-2014: `# tensor(nan)` and "both ways should work")
  // is judged by those when the run does not raise.
  const others = report.expected.some((s) => s.quoted === undefined && s.raisedIn === undefined);
  if ((!e || !reading.traceback) && others) return null;
  if (!e || !reading.traceback) {
    const what = quoted.length
      ? `the report quotes "${clip(quoted[0]?.quoted ?? '', 120)}"`
      : `the report expects it to work: "${clip(works[0]?.evidence ?? '', 120)}"`;
    return { verdict: 'not_reproduced', score: 0, reasons: [`the run raised no exception; ${what}`] };
  }
  const reportCode = report.codeBlocks.map((b) => b.code).join('\n');
  const own = opts.script !== undefined ? raisedByScript(reading, reportCode, opts.projectRoots ?? []) : null;
  if (own)
    return {
      verdict: 'not_reproduced',
      score: 0,
      reasons: [`the run's exception was raised by the script's own code (${clip(own, 120)})`],
    };
  const runText = exceptionText(reading);
  let best: Scored | null = null;
  for (const s of quoted) {
    const cov = quoteCoverage(s.quoted, runText);
    const c: Scored =
      cov >= QUOTE_COVERAGE
        ? {
            verdict: 'reproduced',
            score: 0.5 + 0.5 * cov,
            reasons: [
              `the run's ${e.type} carries the message the report quotes (${Math.round(cov * 100)}% of its words): "${clip(s.quoted, 160)}"`,
            ],
          }
        : {
            verdict: 'partial',
            score: 0.3 * cov,
            reasons: [
              `the run raised ${e.type} with another message (${Math.round(cov * 100)}% of the quoted words; ${QUOTE_COVERAGE * 100}% needed): ` +
                `${clip(e.message.split('\n')[0] ?? '', 160)}; the report quotes "${clip(s.quoted, 160)}"`,
            ],
          };
    c.compared = [
      {
        what: 'the quoted message',
        report: clip(s.quoted, 200),
        run: clip(`${e.type}: ${e.message.split('\n')[0] ?? ''}`, 200),
        basis: 'determined',
        agree: c.verdict === 'reproduced',
        note: `${Math.round(cov * 100)}% of the quoted words in the run's exception (${QUOTE_COVERAGE * 100}% needed; a cut first or last word counts)`,
      },
    ];
    if (!best || c.score > best.score) best = c;
  }
  if (best?.verdict === 'reproduced') return best;
  for (const s of works) {
    if (NOT_THE_CALL.has(e.type)) {
      const c: Scored = {
        verdict: 'not_reproduced',
        score: 0,
        reasons: [`the run stopped on ${e.type}, which is not the call the report expects to work failing`],
      };
      if (!best) best = c;
      continue;
    }
    // The sentence names the call (`torch.jit.script` for "script-able"): a frame of the run must be in it. One that
    // names none ("should still work") is held to the project: the exception must pass through its code, so a
    // script's misuse of some other library is not the report's expectation failing.
    const call = s.raisedIn ? new RegExp(s.raisedIn) : null;
    const roots = (opts.projectRoots ?? []).filter((r) => r.length > 1).map((r) => `${r.replace(/\/+$/, '')}/`);
    const inCall = call
      ? reading.traceback.frames.some((f) => call.test(f.code ?? '') || call.test(`${f.function}(`))
      : reading.traceback.frames.some((f) => roots.some((r) => f.file.startsWith(r)));
    const c: Scored = inCall
      ? {
          verdict: 'reproduced',
          score: 0.7,
          reasons: [
            `the call the report expects to work raised ${e.type}: ${clip(e.message.split('\n')[0] ?? '', 160)} (the report: "${clip(s.evidence, 160)}")`,
          ],
        }
      : {
          verdict: 'partial',
          score: 0.3,
          reasons: [`the run raised ${e.type}, but not inside the call the report expects to work ("${clip(s.evidence, 160)}")`],
        };
    if (!best || c.score > best.score) best = c;
  }
  return best;
}

/** Whether a frame is a function of a library or project (not the user's script, not Python's or torch's own machinery). */
function projectFunction(f: Frame): boolean {
  const file = f.file.replace(/\\/g, '/');
  if (!f.function || /^<.*>$/.test(f.function)) return false;
  if (/\/lib(?:64)?\/python\d[\d.]*\/(?!site-packages|dist-packages)/.test(file)) return false;
  return !/(?:^|\/)(?:torch|tensorflow|keras\/src\/utils|numpy)\//.test(file);
}

const baseName = (file: string): string => file.replace(/\\/g, '/').split('/').pop() ?? file;

/**
 * The project function a run's traceback shares with the report's frames (same file name and function), or null: a
 * report naming only the class, its message cut, is matched by the same class raised through the same function.
 */
export function sharedProjectFrame(reportFrames: readonly Frame[], runFrames: readonly Frame[]): Frame | null {
  const run = new Set(runFrames.filter(projectFunction).map((f) => `${baseName(f.file)}\u0000${f.function}`));
  return [...reportFrames].reverse().find((f) => projectFunction(f) && run.has(`${baseName(f.file)}\u0000${f.function}`)) ?? null;
}
