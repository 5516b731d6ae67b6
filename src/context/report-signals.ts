/**
 * Light, deterministic reading of a bug report for retrieval: traceback frames, exceptions, quoted identifiers
 * and error-message phrases. Pure: text in, data out. (src/symptoms/ reads reports for the judge; retrieval
 * needs less and must not wait on it.)
 */

export interface TraceFrame {
  file: string;
  line: number;
  func?: string;
  /** 0 for the innermost frame (where it raised), growing outwards. */
  depth: number;
}

export interface ReportSignals {
  frames: TraceFrame[];
  exceptions: Array<{ type: string; message: string }>;
  /** Identifiers the report names: backticked, dotted API names, CamelCase or snake_case words, calls in code. */
  identifiers: string[];
  /** Names quoted inside error messages ("op 'tensor_split' not implemented"): often the very call that fails. */
  errorNames: string[];
  /** Literal fragments of error messages (case kept: code raises them as written), worth looking for in the code's own strings. */
  errorPhrases: string[];
  /** Text for the lexical and semantic queries. */
  query: string;
  /** Whether the report reads like a training problem (loss, epochs, convergence): training loops matter more. */
  aboutTraining: boolean;
}

/** `File "x.py", line 3, in f`; reporters often cut the head off ('…/name_scope.py", line 61, in __exit__'). */
const FRAME = /(?:File ")?([^"\s]*\.pyx?)", line (\d+)(?:, in ([\w<>.]+))?/g;
const EXCEPTION = /^\s*((?:[A-Za-z_][\w]*\.)*[A-Z][\w]*(?:Error|Exception|Warning|Exit|Interrupt|Failure)):\s*(.*)$/gm;
const COMMON_WORDS = new Set(['None', 'True', 'False', 'Traceback', 'File', 'Python', 'PyTorch', 'GitHub', 'README']);

function framesOf(text: string): TraceFrame[] {
  // Tracebacks list the outermost frame first: number depth from the end of each traceback block.
  const blocks = text.split(/Traceback \(most recent call last\):/);
  const frames: TraceFrame[] = [];
  for (const block of blocks) {
    const found = [...block.matchAll(FRAME)];
    for (const [i, m] of found.entries()) {
      const frame: TraceFrame = { file: m[1]!.replace(/\\/g, '/'), line: Number(m[2]), depth: found.length - 1 - i };
      if (m[3]) frame.func = m[3];
      frames.push(frame);
    }
  }
  return frames;
}

/** Keeps the literal words of a message: values (numbers, quoted names, shapes) differ between runs. */
function phrasesOf(message: string): string[] {
  const pieces = message
    .replace(/(['"`]).*?\1/g, '|')
    .replace(/\[[^\]]*\]|\([^)]*\)|\{[^}]*\}/g, '|')
    .replace(/-?\b\d[\w.]*/g, '|')
    .split(/[|:;,]/)
    .map((p) => p.trim().replace(/\s+/g, ' '))
    .filter((p) => p.split(' ').length >= 3 && p.length >= 12);
  return [...new Set(pieces)];
}

function identifiersOf(text: string): string[] {
  const ids = new Set<string>();
  for (const m of text.matchAll(/`([^`\n]{2,80})`/g)) {
    for (const w of m[1]!.matchAll(/[A-Za-z_][\w]*(?:\.[A-Za-z_][\w]*)*/g)) if (w[0].length > 2) ids.add(w[0]);
  }
  for (const m of text.matchAll(/\b[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+\b/g)) {
    // Dotted API names (torch.nn.functional.cross_entropy); file names (train.py) are not APIs.
    if (!/\.(py|md|txt|yaml|yml|json|com|org|io)$/i.test(m[0])) ids.add(m[0]);
  }
  for (const m of text.matchAll(/\b(?:[A-Z][a-z0-9]+){2,}[A-Za-z0-9]*\b|\b[A-Z][a-z0-9]*[A-Z]\w*\b/g)) {
    if (!COMMON_WORDS.has(m[0])) ids.add(m[0]);
  }
  for (const m of text.matchAll(/\b_?[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b/g)) ids.add(m[0]);
  for (const m of text.matchAll(/\b([A-Za-z_][\w.]*)\(/g)) if (m[1]!.length > 2) ids.add(m[1]!);
  return [...ids];
}

export function extractReportSignals(report: { title?: string; body: string }): ReportSignals {
  const text = `${report.title ?? ''}\n${report.body}`;
  const exceptions = [...text.matchAll(EXCEPTION)].map((m) => ({ type: m[1]!, message: m[2]!.trim() }));
  const errorPhrases = [...new Set(exceptions.flatMap((e) => phrasesOf(e.message)))];
  const errorNames = [
    ...new Set(exceptions.flatMap((e) => [...e.message.matchAll(/['"`]([A-Za-z_][\w.]*)['"`]/g)].map((m) => m[1]!.split('.').pop()!))),
  ];
  const frames = framesOf(text);
  // Frame lines are noise for BM25 (every path word would match); the query keeps the rest.
  const query = text.replace(FRAME, ' ').replace(/https?:\/\/\S+/g, ' ');
  const aboutTraining =
    /\b(loss|epochs?|converge\w*|diverg\w*|nan|training|train(s|ed)?|learning rate|optimi[sz]er|gradients?|accuracy)\b/i.test(text);
  return { frames, exceptions, identifiers: identifiersOf(text), errorNames, errorPhrases, query, aboutTraining };
}
