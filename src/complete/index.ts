// Tier 0's completion of a report's code, without a model: 1 extract and repair  2 analyse names (tree-sitter)
// 3 infer what each undefined name must be from its uses  4 synthesise it  5 add a harness that runs what the
// snippet defines but never runs  6 render several candidates for the caller to run and judge.
// Steps 3-6 are build-candidates.ts; this file runs 1-2 and the traceback's statements.
import { loadPythonParser } from '../context/python-parser.js';
import { buildCandidates } from './build-candidates.js';
import { assertStatedRaise, assertStatedValue } from './prose-oracle.js';
import { MARK } from './python-helpers.js';
import { repairSnippet } from './repair.js';
import { analyzePython } from './scope.js';
import { substituteData, substituteNotebook } from './substitute-data.js';
import type { Completion, CompletionInput } from './types.js';
import { wrapPastedMethods } from './wrap-methods.js';

export { MARK } from './python-helpers.js';
export type { Role } from './infer.js';
export { statedImageSizes, strideProbeSizes } from './model-shape.js';
export { MAX_CANDIDATES, type Candidate, type Completion, type CompletionInput, type Missing } from './types.js';

async function parses(): Promise<(c: string) => boolean> {
  const { parser } = await loadPythonParser();
  return (c: string) => {
    const tree = parser.parse(c);
    if (!tree) return false;
    const ok = !tree.rootNode.hasError;
    tree.delete();
    return ok;
  };
}

/**
 * Completes the report's code. Pure apart from the tree-sitter parser (loaded once per process). Returns the
 * candidates to run, the edits, and what cannot be known.
 */
export async function completeCode(input: CompletionInput): Promise<Completion> {
  // The parser's wasm is loaded once per process (a worker serves many reports): not part of one report's analysis.
  const ok = await parses();
  const started = performance.now();
  const edits: string[] = [];
  const blocks = input.blocks.map((b) => b.replace(/\s+$/, '')).filter((b) => b.trim());
  if (blocks.length > 1) edits.push(`joined the report's ${blocks.length} code blocks in order`);
  const repaired = repairSnippet(blocks.join('\n\n'), ok);
  edits.push(...repaired.edits);
  let body = repaired.code;
  for (const oracle of [assertStatedValue, assertStatedRaise]) {
    const stated = oracle(body, input.reportText);
    body = stated.code;
    edits.push(...stated.edits);
  }
  const data = substituteData(body);
  body = data.code;
  edits.push(...data.edits);
  const nb = substituteNotebook(body);
  body = nb.code;
  edits.push(...nb.edits);

  let a = await analyzePython(body);
  // Pieces of an nn.Module pasted without their class (`def forward(self, x)`, `self.conv1 = ...` lines) go back into one.
  const wrapped = wrapPastedMethods(a);
  if (wrapped && ok(wrapped.code)) {
    body = wrapped.code;
    edits.push(...wrapped.edits);
    a.tree.delete();
    a = await analyzePython(body);
  }
  try {
    // A traceback statement that runs something the snippet defines but never calls is what the reporter ran.
    const neverCalled = new Set([...a.functions, ...a.classes].filter((d) => !a.referenced.has(d.name)).map((d) => d.name));
    let appended = false;
    for (const line of input.tracebackModuleLines ?? []) {
      const t = line.trim();
      if (!t || body.split('\n').some((l) => l.trim() === t)) continue;
      const calls = [...t.matchAll(/([A-Za-z_]\w*)\s*\(/g)].map((m) => m[1] ?? '');
      if (calls.some((c) => neverCalled.has(c)) && ok(t)) {
        body = `${body}\n\n${t}  ${MARK}`;
        edits.push(`appended \`${t}\`, the statement the report's traceback shows it ran`);
        appended = true;
      }
    }
    if (appended) {
      a.tree.delete();
      a = await analyzePython(body);
    }
    const result = buildCandidates(a, body, input, data.helpers, edits);
    return { code: repaired.code, ...result, edits, analysisMs: Math.round(performance.now() - started) };
  } finally {
    a.tree.delete();
  }
}
