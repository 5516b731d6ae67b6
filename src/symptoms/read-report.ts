import { failingAssertion } from './failing-assertion.js';
import type { CodeBlock, ExceptionInfo, ReportReading, Symptom, Traceback, VersionPin } from './types.js';
import { classifyException } from './classify.js';
import { classifyPrintedValues, classifySeries } from './classify-series.js';
import {
  findErrorLines,
  framesIn,
  isSourceMarker,
  withoutWarningEcho,
  parseExceptionLine,
  parseTracebackFragments,
  parseTracebacks,
} from './parse-tracebacks.js';
import { isMetricLine, parseMetricPoints, seriesOf, toMetricSeries } from './parse-metrics.js';
import { clip } from './text.js';
import { isWrapperMessage } from './framework-output.js';
import { expectationSymptoms, notWorkingExpectations, readExpectations } from './read-expectations.js';
import { regexLines } from '../regex.js';
import { readReportVersions } from '../env/read/read-report-versions.js';
import { normalizeName } from '../env/read/requirement-line.js';

/**
 * Reads a bug report (markdown issue body) deterministically: code blocks, pasted output, tracebacks,
 * error lines, metric lines, version pins, and the symptoms a reproduction must show. No model involved.
 */

interface Block {
  lang: string;
  code: string;
  kind: 'code' | 'output' | 'versions' | 'other';
}

const CODE_LANGS = new Set(['python', 'py', 'python3', 'ipython', 'ipython3', 'jupyter']);
const OUTPUT_LANGS = new Set([
  'text',
  'txt',
  'console',
  'output',
  'log',
  'logs',
  'shell-session',
  'pytb',
  'pycon',
  'plaintext',
  'stderr',
  'stdout',
  'error',
]);
const PIN = /^\s*[-*]?\s*([A-Za-z][\w.-]*)\s*(?:==|@|>=|~=)\s*v?(\d[\w.+-]*)/;
const KNOWN_PACKAGES = [
  'torch|pytorch|python|cuda|cudnn|numpy|tensorflow|tf|keras|timm|torchvision|torchaudio|transformers|jax|jaxlib',
  'scikit-learn|sklearn|pandas|onnx|onnxruntime|accelerate|lightning|pytorch-lightning|pytorch_lightning|triton',
  'nvidia driver|driver|cupy|scipy|tokenizers|datasets|peft|diffusers|xformers|coremltools|mlx|paddlepaddle',
].join('|');
const VERSION_IN_TEXT = new RegExp(
  `(?:^|[\\s(\`*,|-])(${KNOWN_PACKAGES})(?:\\s+version)?\\s*(?:[:=]+|\\bis\\b)?\\s*v?(\\d+(?:\\.\\d+){0,3}(?:[+a-z][\\w.+-]*)?)(?!\\w|\\.\\d)`,
  'gi',
);

function splitBlocks(markdown: string): { blocks: Block[]; prose: string } {
  const lines = markdown.split(/\r?\n/);
  const blocks: Block[] = [];
  const prose: string[] = [];
  for (let i = 0; i < lines.length; i += 1) {
    const open = /^\s*(`{3,}|~{3,})\s*([\w+#.-]*)/.exec(lines[i] ?? '');
    if (!open) {
      // An indented code block (CommonMark: four spaces or a tab, after a blank line, not a list item's continuation).
      const indented = indentedBlock(lines, i);
      if (indented) {
        blocks.push({ lang: '', code: indented.code, kind: blockKind('', indented.code) });
        for (let k = i; k < indented.end; k += 1) prose.push('');
        i = indented.end - 1;
        continue;
      }
      prose.push(lines[i] ?? '');
      continue;
    }
    const fence = open[1] ?? '```';
    const body: string[] = [];
    let j = i + 1;
    for (; j < lines.length; j += 1) {
      const l = (lines[j] ?? '').trim();
      if (l.startsWith(fence[0]!.repeat(fence.length)) && l.replace(/[`~]/g, '') === '') break;
      body.push(lines[j] ?? '');
    }
    const lang = (open[2] ?? '').toLowerCase();
    const code = body.join('\n');
    blocks.push({ lang, code, kind: blockKind(lang, code) });
    prose.push('');
    i = j;
  }
  return { blocks, prose: prose.join('\n') };
}

/** The indented code block starting at line `i`, with the line after it, or null (see splitBlocks). */
function indentedBlock(lines: readonly string[], i: number): { code: string; end: number } | null {
  const isIndented = (l: string | undefined): boolean => l !== undefined && /^(?: {4}|\t)\s*\S/.test(l);
  if (!isIndented(lines[i]) || (i > 0 && (lines[i - 1] ?? '').trim() !== '')) return null;
  // After a list item, indented lines continue the item: they are prose, not code.
  const before = lines
    .slice(0, i)
    .reverse()
    .find((l) => l.trim() !== '');
  if (before !== undefined && /^\s*(?:[-*+]|\d+[.)])\s/.test(before)) return null;
  let end = i;
  while (end < lines.length && (isIndented(lines[end]) || ((lines[end] ?? '').trim() === '' && isIndented(lines[end + 1])))) end += 1;
  const code = lines
    .slice(i, end)
    .map((l) => l.replace(/^(?: {4}|\t)/, ''))
    .join('\n');
  return { code, end };
}

function looksLikeCode(code: string): boolean {
  const lines = code.split('\n').filter((l) => l.trim() !== '');
  if (lines.length === 0) return false;
  const codey = lines.filter((l) =>
    regexLines()`
      ^\s*(import |from \S+ import |def |class |return\b|for .+:|if .+:|elif |else:|while |with .+:|try:
      |except|raise |print\(|@\w|#)|^\s*[\w.[\]'"]+\s*[+\-*/]?=(?!=)
    `.test(l),
  ).length;
  return codey / lines.length >= 0.5;
}

/**
 * A line of an environment report (`python -m torch.utils.collect_env`, `transformers-cli env`, `diffusers-cli env`,
 * an issue template's list): a key naming a version or a platform fact, a colon, a value.
 */
const ENV_FACTS = [
  'OS',
  'CPU',
  'Platform',
  'Python platform',
  'Is debug build',
  'Is CUDA available',
  'Is XNNPACK available',
  'GPU models and configuration',
  'Nvidia driver version',
  'CUDA used to build PyTorch',
  'ROCM used to build PyTorch',
  'Libc version',
  'Architecture',
  'Using GPU in script\\??',
  'Using distributed or parallel set-up in script\\??',
];
const ENV_KEY_LINE = new RegExp(
  String.raw`^\s*(?:[-*]\s+)?\`?[\w .()/+-]{0,60}?(?:version|Version)s?\`?(?:\s*\([^)]*\))?\s*:` +
    String.raw`|^\s*(?:[-*]\s+)?(?:${ENV_FACTS.join('|')})\s*:`,
);

/**
 * Whether a block is the reporter's environment listing rather than what their code printed: it opens with
 * collect_env's banner, or most of its lines are `key: value` facts about versions and the platform. Versions are
 * read from it; a symptom never is (its last line, `ROCM used to build PyTorch: N/A`, is no output of the bug).
 */
function isEnvironmentReport(nonBlank: readonly string[]): boolean {
  if (/^Collecting environment information/.test(nonBlank[0]?.trim() ?? '')) return true;
  if (nonBlank.length < 3 || nonBlank.some((l) => l.length > 500 || isMetricLine(l))) return false;
  return nonBlank.filter((l) => ENV_KEY_LINE.test(l)).length >= 0.6 * nonBlank.length;
}

function blockKind(lang: string, code: string): Block['kind'] {
  if (/Traceback \(most recent call last\)/.test(code)) return 'output';
  const nonBlank = code.split('\n').filter((l) => l.trim() !== '');
  if (nonBlank.length > 0 && nonBlank.every((l) => PIN.test(l) || /^\s*#/.test(l))) return 'versions';
  if (!CODE_LANGS.has(lang) && findErrorLines(code).length === 0 && isEnvironmentReport(nonBlank.slice(0, 400))) return 'versions';
  if (CODE_LANGS.has(lang)) {
    // A python-tagged block holding only error lines (no code) is pasted output.
    const errorOnly =
      nonBlank.length > 0 &&
      nonBlank.every((l) => /^\s*(\.\.\.|\^+|File ")/.test(l) || parseExceptionLine(l) !== null || /^\s{2,}/.test(l));
    return errorOnly && findErrorLines(code).length > 0 ? 'output' : 'code';
  }
  if (OUTPUT_LANGS.has(lang)) return 'output';
  if (lang === '') {
    // Printed metrics or errors make a block output even when some of its lines look like calls.
    // Only the head is sampled: a pasted training log can be megabytes long.
    const head = code.split('\n', 200);
    if (findErrorLines(code).length > 0 || head.some((l) => l.length < 2000 && isMetricLine(l))) return 'output';
    return looksLikeCode(code) ? 'code' : 'output';
  }
  return 'other';
}

function parseVersions(markdown: string): VersionPin[] {
  const pins = new Map<string, string>();
  const add = (name: string, version: string) => {
    let n = name.toLowerCase().trim();
    if (n === 'pytorch') n = 'torch';
    if (!pins.has(n)) pins.set(n, version.replace(/[.,;:)]+$/, ''));
  };
  for (const line of markdown.split(/\r?\n/)) {
    if (line.length > 2000) continue;
    const pin = PIN.exec(line);
    if (pin && /==|@/.test(line)) add(pin[1] ?? '', pin[2] ?? '');
    for (const m of line.matchAll(VERSION_IN_TEXT)) add(m[1] ?? '', m[2] ?? '');
  }
  // The environment reader knows more forms (issue templates such as `- PyTorch version (GPU?): 2.8.0+cu129`,
  // collect_env, pip/conda tables, `torch.__version__` printouts); what it adds never replaces a pin read above.
  const seen = new Set([...pins.keys()].map(normalizeName));
  for (const v of readReportVersions(markdown).versions) {
    if (seen.has(v.name)) continue;
    seen.add(v.name);
    pins.set(v.name, v.local ? `${v.version}+${v.local}` : v.version);
  }
  return [...pins].map(([name, version]) => ({ name, version }));
}

const PROSE_RULES: Array<[Symptom['kind'], Symptom['category'], RegExp]> = [
  ['nan_inf', 'silent', /\b(nan|inf)s?\b(?! ?=)/i],
  [
    'loss_not_decreasing',
    'silent',
    regexLines('i')`
    loss\b.{0,60}\b(not|n't|never)\b.{0,20}(decreas|go(es|ing)? down|chang|improv|mov)
    |loss (is |stays |remains )?(constant|stuck|the same|flat)|(constant|same|stuck) loss
  `,
  ],
  ['loss_diverging', 'silent', /loss\b.{0,40}(increas|explod|diverg|blow(s|ing)? up)/i],
  ['accuracy_stuck', 'silent', /accuracy\b.{0,60}(stuck|constant|the same|(not|n't|never)\b.{0,20}(improv|chang|increas))/i],
  [
    'constant_predictions',
    'silent',
    /(predicts?|predictions?|outputs?)\b.{0,40}(always|all) (the same|identical|zero|one class)|same (prediction|output) for (all|every)/i,
  ],
  ['out_of_memory', 'crash', /out of memory|\bOOM\b/],
  ['timeout', 'hang', /\b(hangs?|hanging|freezes|deadlocks?|never (finishes|returns|ends))\b/i],
];

function proseSymptoms(prose: string): Symptom[] {
  const out: Symptom[] = [];
  const sentences = prose.split(/(?<=[.!?])\s+|\n/).filter((s) => s.trim() !== '' && s.length < 1000);
  for (const [kind, category, re] of PROSE_RULES) {
    const hit = sentences.find((s) => re.test(s));
    if (hit) out.push({ kind, category, evidence: clip(hit.trim()) });
  }
  return out;
}

function crashSymptom(e: ExceptionInfo, tb: Traceback | null): Symptom {
  const where = tb?.frames.at(-1);
  const line = e.message ? `${e.qualifiedType ?? e.type}: ${e.message}` : e.type;
  return {
    kind: classifyException(e),
    category: 'crash',
    evidence: clip(where ? `File "${where.file}", line ${where.line}, in ${where.function}\n${line}` : line, 1200),
    exception: { type: e.type, message: e.message },
  };
}

/** A sentence that says what should or did not happen ("should raise a ValueError", "no error") names no observed exception. */
const NOT_OBSERVED = /\b(?:should|must|expect(?:ed|ing|s)?|instead of|would|no\s+(?:error|exception)|without|rather than|not\s+raise)\b/i;

/**
 * The one exception class the title and prose name as what happened, or null when they name none or several.
 * Sentences about what should happen are left out. Pure.
 */
function namedException(text: string): string | null {
  const names = new Set<string>();
  for (const sentence of text.split(/(?<=[.!?])\s+|\n/)) {
    if (sentence.length > 1000 || NOT_OBSERVED.test(sentence)) continue;
    for (const m of sentence.matchAll(/(?<![\w.])`?([A-Z][A-Za-z]*(?:Error|Exception))`?(?![\w(])/g)) names.add(m[1] ?? '');
  }
  return names.size === 1 ? ([...names][0] ?? null) : null;
}

/**
 * A wrapper's message (`ValueError: in user code:` with the trace cut before the original error) stands for the error
 * an exception line of the same class elsewhere in the report states, often the title. Pure.
 */
function statedInner(e: ExceptionInfo, errorLines: readonly string[]): ExceptionInfo {
  if (!isWrapperMessage(e.message)) return e;
  for (const line of errorLines) {
    const stated = parseExceptionLine(line);
    if (stated && stated.type === e.type && stated.message.trim() && !isWrapperMessage(stated.message))
      return { type: e.type, message: stated.message };
  }
  return e;
}

/** Reads a markdown bug report. Pure; tolerates empty, huge and prose-only bodies. */
export function readReport(markdown: string): ReportReading {
  const text = markdown.replace(/\r\n/g, '\n');
  const firstLine = text.split('\n', 1)[0] ?? '';
  const title = /^#\s+/.test(firstLine) ? firstLine.replace(/^#\s+/, '').trim() : '';
  const body = title ? text.slice(firstLine.length) : text;
  const { blocks, prose } = splitBlocks(body);
  const outputBlocks = blocks.filter((b) => b.kind === 'output');
  const pasted = outputBlocks.map((b) => b.code).join('\n\n');
  // Tracebacks pasted without a fence live in the prose; fenced ones in output blocks.
  let tracebacks = [...parseTracebacks(pasted), ...parseTracebacks(prose)];
  if (tracebacks.length === 0) tracebacks = [...parseTracebackFragments(pasted), ...parseTracebackFragments(prose)];
  const errorLines = [...new Set([...findErrorLines(pasted), ...findErrorLines(prose), ...(title ? findErrorLines(title) : [])])];
  // A compiler's source excerpt (`~~~~ <--- HERE`) under its message, and the source line Python echoes under a
  // warning (`  warnings.warn(`), are no output of the run.
  const outputLines = withoutWarningEcho(pasted.split('\n').filter((l) => l.trim() !== '' && !isSourceMarker(l)));
  const expectations = readExpectations(text);
  const points = parseMetricPoints(pasted);
  const metricLines: string[] = [];
  for (let i = 0; i < points.length; i += 1)
    if (i === 0 || points[i]?.lineNo !== points[i - 1]?.lineNo) metricLines.push(points[i]?.line ?? '');

  const expected: Symptom[] = [];
  const seen = new Set<string>();
  const addCrash = (e: ExceptionInfo, tb: Traceback | null) => {
    const key = `${e.type}\u0000${e.message.split('\n')[0]}`;
    if (seen.has(key)) return;
    seen.add(key);
    expected.push(crashSymptom(e, tb));
  };
  for (const tb of tracebacks) addCrash(statedInner(tb.exception, errorLines), tb);
  if (expected.length === 0) {
    // No full traceback: the error lines, the pasted ones first; a truncated title (`…Got...`) only as a last resort.
    const fromBody = [...findErrorLines(pasted), ...findErrorLines(prose)];
    const candidates = fromBody.length > 0 ? fromBody : title ? findErrorLines(title) : [];
    for (const line of candidates) {
      const e = parseExceptionLine(line);
      if (e) addCrash(e, null);
    }
  }
  if (expected.length === 0) {
    // No exception line at all (a stack trace cut before its last line), but the title or the prose says which
    // exception the code raised: "BinaryAUROC raises IndexError …", "`IndexError` with the following stacktrace".
    const named = namedException(`${title}\n${prose}`);
    if (named) addCrash({ type: named, message: '' }, null);
  }
  if (expected.length === 0) {
    // A code comment after the call names the class it got (`os.environ[k]  # KeyError`, `# raises ValueError: …`).
    for (const e of expectations) if (e.kind === 'message' && e.category) addCrash({ type: e.category, message: e.observed ?? '' }, null);
  }
  if (expected.length === 0) {
    // A silent bug the reporter states as their own assertion, marked as the failing line.
    const asserted = failingAssertion(blocks.filter((b) => b.kind !== 'output').map((b) => b.code));
    if (asserted) expected.push(asserted);
  }
  if (expected.length === 0) {
    const silent = classifySeries(points);
    expected.push(...silent, ...classifyPrintedValues(pasted, silent));
    const fromProse = proseSymptoms(`${title}\n${prose}`).filter((s) => !expected.some((x) => x.kind === s.kind));
    expected.push(...fromProse);
    // A Python warning the report says it got ("I get the following warning:") and no other symptom: the last one is
    // the bug. A run reproduces it raised, the warning made an error before the call, from inside the library.
    const warned = expectations.filter((e) => e.kind === 'warning' && e.category).at(-1);
    if (expected.length === 0 && warned?.category) addCrash({ type: warned.category, message: warned.observed ?? '' }, null);
    // A message the report quotes as what it got, with no class (a compiler's, a comment's `# gives "…"`), before the
    // last output line: that line may be the message's source excerpt.
    if (expected.length === 0) expected.push(...expectationSymptoms(expectations.filter((e) => e.kind === 'message')));
    const last = outputLines.at(-1);
    if (expected.length === 0 && last) expected.push({ kind: 'wrong_values', category: 'silent', evidence: clip(last.trim()) });
  }
  // No traceback, output or marked assert, but the report says in words what it expected or saw: that is checkable.
  // Nothing but words at all (no code, no output, no other statement): "X doesn't work" is the report's expectation that
  // X works, failing. Beside code it may as well mean a wrong result ("`apply_to_collection` doesn't work for cached
  // properties", whose code shows stale values): that report is read by its code and its other words.
  if (expected.length === 0 && blocks.length === 0 && !expectations.some((e) => e.kind !== 'stated'))
    expectations.push(...notWorkingExpectations(`${title}\n${prose}`));
  if (expected.length === 0) expected.push(...expectationSymptoms(expectations));
  const codeBlocks: CodeBlock[] = blocks.filter((b) => b.kind === 'code' || b.kind === 'other').map(({ lang, code }) => ({ lang, code }));
  const outputText = [pasted, ...errorLines.filter((l) => !pasted.includes(l))].filter((s) => s.trim() !== '').join('\n');
  const mentions = [
    ...new Set(
      [
        ...`${title}\n${prose}`
          .slice(0, 200_000)
          .matchAll(/\b(?:since|with|in|after|from|on|version|release|v)\s+v?(\d+\.\d+(?:\.\d+)+)\b/gi),
      ].map((m) => m[1] ?? ''),
    ),
  ].slice(0, 8);
  const frames = tracebacks.length ? tracebacks.flatMap((tb) => tb.frames) : framesIn(`${pasted}\n${prose}`);
  return {
    title,
    codeBlocks,
    tracebacks,
    errorLines,
    metricLines,
    metrics: toMetricSeries(seriesOf(points)),
    versions: parseVersions(text),
    outputText,
    expected,
    expectations,
    lastOutputLine: (outputLines.at(-1) ?? '').trim(),
    ...(frames.length ? { frames: frames.slice(-40) } : {}),
    ...(mentions.length ? { versionMentions: mentions } : {}),
  };
}
