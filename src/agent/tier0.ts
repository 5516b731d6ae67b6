import { completeCode, type Candidate, type Missing } from '../complete/index.js';
import { substituteMissingModules } from '../complete/substitute-modules.js';
import type { Symptom } from '../symptoms/types.js';
import { RANDOM_WEIGHTS_EDIT, SYNTHETIC_DATA_EDIT, randomWeights, syntheticDownloads, weightsIrrelevant } from './offline-weights.js';
import type { StaticChecker, StaticReport } from './static-checker.js';

/** One recorded edit of tier 0: what was changed in the reporter's code and why. */
export interface SnippetEdit {
  action: 'repair' | 'add_import' | 'define' | 'harness' | 'append_traceback_line' | 'substitute' | 'cpu_fallback' | 'join_blocks';
  detail: string;
}

/**
 * Tier 0's completion of a report's code: the candidates to run (most faithful first), what was done to the
 * reporter's code, and what cannot be known. It is also the starting point handed to tier 1.
 */
export interface CompletedSnippet {
  /** The first candidate, or the repaired code when no candidate can run. */
  script: string;
  /** Every candidate, each with the lines tier 0 added (marked `# added by RepGen` in the script). */
  candidates: Candidate[];
  edits: SnippetEdit[];
  /** Names whose absence stops the script at import time: what the report would have to supply. */
  unresolved: string[];
  /** Everything tier 0 could not complete, with why (blocking or not). */
  missing: Missing[];
  static: StaticReport;
  /** Milliseconds the analysis took (not counting the static checker). */
  analysisMs: number;
}

export interface SnippetInput {
  /** The report's Python blocks, in order. */
  blocks: string[];
  /** Module-level statements of the report's traceback (`<module>` frames), in order. */
  tracebackModuleLines?: string[];
  /** The report's text (prose and output): stated sizes, whether it is about the backward pass. */
  reportText?: string;
  /** The project's own top-level packages (from the checkout). */
  packages?: string[];
  /** What those packages export by name, and from which module. */
  exports?: Record<string, string>;
}

function actionOf(detail: string): SnippetEdit['action'] {
  if (/^joined/.test(detail)) return 'join_blocks';
  if (/^added `(?:import|from) /.test(detail)) return 'add_import';
  if (/^defined /.test(detail)) return 'define';
  if (/^harness/.test(detail)) return 'harness';
  if (/^appended/.test(detail)) return 'append_traceback_line';
  if (/^replaced `(?:ImageFolder|from tqdm)/.test(detail)) return 'substitute';
  return 'repair';
}

/**
 * Tier 0: the report's own code, repaired and completed by program analysis (src/complete), no model. The
 * static checker (pyflakes) reads the first candidate; the agent runs the candidates and keeps the first the
 * symptom matcher accepts.
 */
export async function completeSnippet(
  input: SnippetInput,
  deps: { checker: StaticChecker },
  signal?: AbortSignal,
): Promise<CompletedSnippet> {
  const c = await completeCode({
    blocks: input.blocks,
    tracebackModuleLines: input.tracebackModuleLines,
    reportText: input.reportText,
    packages: input.packages,
    exports: input.exports,
  });
  const script = c.candidates[0]?.script ?? `${c.code.trimEnd()}\n`;
  const staticReport = await deps.checker.check(script, signal);
  return {
    script,
    candidates: c.candidates,
    edits: c.edits.map((detail) => ({ action: actionOf(detail), detail })),
    unresolved: c.missing.filter((m) => m.blocking).map((m) => m.name),
    missing: c.missing,
    static: staticReport,
    analysisMs: c.analysisMs,
  };
}

function mapScripts(snippet: CompletedSnippet, f: (s: string) => string): CompletedSnippet {
  return { ...snippet, script: f(snippet.script), candidates: snippet.candidates.map((k) => ({ ...k, script: f(k.script) })) };
}

/**
 * On a runner without CUDA, a report whose bug is not about devices still runs on the CPU: `'cuda'` devices
 * and `.cuda()` become the CPU, recorded as an edit. Null when the script names no CUDA device.
 */
export function mapCudaToCpu(snippet: CompletedSnippet): CompletedSnippet | null {
  const f = (s: string) => s.replace(/\.cuda\(\s*\)/g, ".to('cpu')").replace(/(['"])cuda(?::\d+)?\1/g, "'cpu'");
  const mapped = mapScripts(snippet, f);
  if (mapped.script === snippet.script && mapped.candidates.every((k, i) => k.script === snippet.candidates[i]?.script)) return null;
  return {
    ...mapped,
    edits: [
      ...snippet.edits,
      {
        action: 'cpu_fallback',
        detail:
          "replaced CUDA devices with the CPU ('cuda' → 'cpu', .cuda() → .to('cpu')): this runner has no GPU and the reported bug is not about devices",
      },
    ],
  };
}

/**
 * Runs here have no network: a report whose symptoms do not depend on the weights' values (a crash, a shape, a count)
 * runs with random weights instead of downloading pretrained ones, recorded as an edit. Null when nothing changes.
 */
export function mapWeightsOffline(
  snippet: CompletedSnippet,
  expected: readonly Pick<Symptom, 'kind' | 'category' | 'evidence'>[],
): CompletedSnippet | null {
  if (!weightsIrrelevant(expected)) return null;
  const changed = (m: CompletedSnippet) =>
    m.script !== snippet.script || m.candidates.some((k, i) => k.script !== snippet.candidates[i]?.script);
  const weights = mapScripts(snippet, (s) => randomWeights(s) ?? s);
  const edits = [...snippet.edits];
  if (changed(weights)) edits.push({ action: 'substitute', detail: RANDOM_WEIGHTS_EDIT });
  const data = mapScripts(weights, (s) => syntheticDownloads(s) ?? s);
  if (data.script !== weights.script || data.candidates.some((k, i) => k.script !== weights.candidates[i]?.script))
    edits.push({ action: 'substitute', detail: SYNTHETIC_DATA_EDIT });
  if (!changed(data)) return null;
  return { ...data, edits };
}

/**
 * Packages this runner lacks that have a small faithful stand-in (tqdm, scikit-learn's train_test_split):
 * guarded imports with the stand-in, recorded as edits. Returns the modules no longer needed.
 */
export function standInMissingModules(
  snippet: CompletedSnippet,
  missing: readonly string[],
): { snippet: CompletedSnippet; substituted: string[] } {
  const first = substituteMissingModules(snippet.script, missing);
  if (!first.edits.length) return { snippet, substituted: first.substituted };
  const mapped = mapScripts(snippet, (s) => substituteMissingModules(s, missing).script);
  return {
    snippet: { ...mapped, edits: [...snippet.edits, ...first.edits.map((detail) => ({ action: 'substitute' as const, detail }))] },
    substituted: first.substituted,
  };
}

/**
 * The report's setup the reporter made outside the code (Keras's backend set in a shell or `keras.json`, named only in
 * the report's words): set at the top of the script with `os.environ.setdefault`, before its imports, as the env's import
 * proof set it, and recorded as an edit. Names and values are the caller's fixed words (`KERAS_BACKEND`, `torch`), never
 * the report's text. Null when there is nothing to set.
 */
export function withReportedSetup(snippet: CompletedSnippet, vars: Readonly<Record<string, string>>): CompletedSnippet | null {
  const entries = Object.entries(vars).filter(([k, v]) => /^[A-Z_][A-Z0-9_]{0,63}$/.test(k) && /^[\w.,:-]{0,100}$/.test(v));
  if (!entries.length) return null;
  const added = [
    'import os  # added by RepGen',
    ...entries.map(([k, v]) => `os.environ.setdefault(${JSON.stringify(k)}, ${JSON.stringify(v)})  # added by RepGen`),
  ];
  const f = (s: string): string => {
    const lines = s.split('\n');
    // After a shebang, an encoding line and `from __future__` imports, which must stay first.
    let at = 0;
    while (at < lines.length && /^(?:#!|#.*coding[:=]|from\s+__future__\s+import\b)/.test(lines[at] as string)) at++;
    return [...lines.slice(0, at), ...added, ...lines.slice(at)].join('\n');
  };
  return {
    ...mapScripts(snippet, f),
    edits: [
      ...snippet.edits,
      {
        action: 'harness',
        detail: `set ${entries.map(([k, v]) => `${k}=${v}`).join(', ')} before the imports: the report names it in words, its code sets none`,
      },
    ],
  };
}
