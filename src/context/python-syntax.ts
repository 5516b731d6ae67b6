import type { Node, Parser } from 'web-tree-sitter';
import { loadPythonParser } from './python-parser.js';

/** Where a parse went wrong, 1-based, for feedback to the model. */
export interface SyntaxProblem {
  line: number;
  column: number;
  text: string;
}

export interface PythonParse {
  ok: boolean;
  problems: SyntaxProblem[];
  /** Names of top-level functions and classes, and which of them are called anywhere. */
  definitions: { name: string; kind: 'function' | 'class'; line: number; params: string[] }[];
  calledNames: Set<string>;
}

/** The context builder's parser (one wasm load per process, shared; parsing is synchronous). */
async function getParser(): Promise<Parser> {
  return (await loadPythonParser()).parser;
}

function collectProblems(node: Node, lines: string[], out: SyntaxProblem[]): void {
  if (out.length >= 5) return;
  if (node.type === 'ERROR' || node.isMissing) {
    const line = node.startPosition.row + 1;
    out.push({
      line,
      column: node.startPosition.column + 1,
      text: node.isMissing ? `missing ${node.type} near: ${(lines[line - 1] ?? '').trim()}` : (lines[line - 1] ?? '').trim(),
    });
    return;
  }
  if (!node.hasError) return;
  for (const child of node.children) if (child) collectProblems(child, lines, out);
}

function collectCalls(node: Node, out: Set<string>): void {
  if (node.type === 'call') {
    const fn = node.childForFieldName('function');
    if (fn?.type === 'identifier') out.add(fn.text);
    if (fn?.type === 'attribute') {
      const attr = fn.childForFieldName('attribute');
      if (attr) out.add(attr.text);
    }
  }
  // Classes passed as values (`block = DenseLayer`, `apply(weights_init)`) count as used too.
  if (node.type === 'argument_list' || node.type === 'assignment') {
    for (const child of node.namedChildren) if (child?.type === 'identifier') out.add(child.text);
  }
  for (const child of node.namedChildren) if (child) collectCalls(child, out);
}

function paramNames(node: Node): string[] {
  const params = node.childForFieldName('parameters');
  if (!params) return [];
  const names: string[] = [];
  for (const p of params.namedChildren) {
    if (!p) continue;
    if (p.type === 'identifier') names.push(p.text);
    else {
      const name = p.childForFieldName('name') ?? p.namedChildren.find((c) => c?.type === 'identifier');
      if (name && !p.type.includes('splat')) names.push(name.text);
    }
  }
  return names;
}

/** Parses Python with tree-sitter: syntax problems, top-level definitions, called names. */
export async function parsePython(source: string): Promise<PythonParse> {
  const parser = await getParser();
  const tree = parser.parse(source);
  if (!tree) return { ok: false, problems: [{ line: 1, column: 1, text: 'the parser gave up' }], definitions: [], calledNames: new Set() };
  try {
    const lines = source.split('\n');
    const problems: SyntaxProblem[] = [];
    collectProblems(tree.rootNode, lines, problems);
    const definitions: PythonParse['definitions'] = [];
    for (const top of tree.rootNode.namedChildren) {
      const def = top?.type === 'decorated_definition' ? top.childForFieldName('definition') : top;
      if (!def) continue;
      if (def.type === 'function_definition' || def.type === 'class_definition') {
        const name = def.childForFieldName('name')?.text;
        if (!name) continue;
        let params = paramNames(def);
        if (def.type === 'class_definition') {
          const init = def
            .childForFieldName('body')
            ?.namedChildren.find((c) => c?.type === 'function_definition' && c.childForFieldName('name')?.text === '__init__');
          params = init ? paramNames(init).slice(1) : [];
        }
        definitions.push({
          name,
          kind: def.type === 'function_definition' ? 'function' : 'class',
          line: def.startPosition.row + 1,
          params,
        });
      }
    }
    const calledNames = new Set<string>();
    collectCalls(tree.rootNode, calledNames);
    return { ok: problems.length === 0 && !tree.rootNode.hasError, problems, definitions, calledNames };
  } finally {
    tree.delete();
  }
}

/** Share of lines that parse as Python: tells a Python snippet from C++, shell or pasted output. */
export async function pythonLikelihood(source: string): Promise<number> {
  const parser = await getParser();
  const tree = parser.parse(source);
  if (!tree) return 0;
  try {
    const total = source.split('\n').filter((l) => l.trim()).length || 1;
    const bad = new Set<number>();
    const walk = (node: Node): void => {
      if (node.type === 'ERROR' || node.isMissing) {
        for (let r = node.startPosition.row; r <= node.endPosition.row; r++) bad.add(r);
        return;
      }
      if (node.hasError) for (const c of node.children) if (c) walk(c);
    };
    walk(tree.rootNode);
    return Math.max(0, 1 - bad.size / total);
  } finally {
    tree.delete();
  }
}
