import type { Node } from 'web-tree-sitter';
import { loadPythonParser } from '../../context/python-parser.js';

/**
 * The statements of a `setup.py`, far enough to find literal dependency lists, read from the tree-sitter Python tree
 * the context stage ships (one Python grammar in RepGen, not a second parser here): assignments, `+=` and expression
 * statements at any depth, their expressions as a small tree (strings, lists, dicts, names, calls, subscripts, `+`).
 * Nothing is executed; what it cannot follow becomes `other`. Pure once the grammar is loaded.
 */

export type PyExpr =
  | { t: 'str'; v: string }
  | { t: 'list'; items: PyExpr[] }
  | { t: 'dict'; entries: Array<[PyExpr, PyExpr]> }
  | { t: 'name'; id: string }
  | { t: 'attr'; obj: PyExpr; name: string }
  | { t: 'call'; fn: PyExpr; args: PyExpr[]; kwargs: Record<string, PyExpr> }
  | { t: 'sub'; obj: PyExpr; key: PyExpr }
  | { t: 'add'; a: PyExpr; b: PyExpr }
  | { t: 'other' };

/** One statement: `target op value`, or an expression statement (`target` null). */
export interface PyStatement {
  indent: number;
  line: number;
  target: PyExpr | null;
  op: '=' | '+=' | null;
  value: PyExpr;
}

// The grammar is wasm, loaded asynchronously once per process; reading a setup.py stays a synchronous, pure call for
// its callers (the spec is computed synchronously from the files read), so the load happens as this module loads.
const { parser } = await loadPythonParser();

const OTHER: PyExpr = { t: 'other' };

/** The statements of a module, in source order (compound statements' headers left out, their bodies kept). */
export function readPythonStatements(src: string): PyStatement[] {
  const tree = parser.parse(src);
  if (!tree) return [];
  try {
    const out: PyStatement[] = [];
    const visit = (node: Node): void => {
      if (node.type === 'expression_statement') {
        const stmt = statement(node);
        if (stmt) out.push({ ...stmt, indent: node.startPosition.column, line: node.startPosition.row + 1 });
        return;
      }
      for (const child of node.namedChildren) if (child) visit(child);
    };
    visit(tree.rootNode);
    return out;
  } finally {
    tree.delete();
  }
}

function statement(node: Node): Omit<PyStatement, 'indent' | 'line'> | null {
  const first = node.namedChildren.find((c) => c && c.type !== 'comment');
  if (!first) return null;
  if (first.type === 'assignment') {
    const left = first.childForFieldName('left');
    let right = first.childForFieldName('right');
    // `a = b = [...]`: the value is the last one.
    while (right?.type === 'assignment') right = right.childForFieldName('right');
    if (!left || !right) return null;
    return { target: expr(left), op: '=', value: expr(right) };
  }
  if (first.type === 'augmented_assignment') {
    const left = first.childForFieldName('left');
    const right = first.childForFieldName('right');
    if (!left || !right || first.childForFieldName('operator')?.text !== '+=') return { target: null, op: null, value: OTHER };
    return { target: expr(left), op: '+=', value: expr(right) };
  }
  return { target: null, op: null, value: expr(first) };
}

/** The named children that are code (comments are children of the node they sit in). */
function parts(node: Node): Node[] {
  return node.namedChildren.filter((c): c is Node => c !== null && c.type !== 'comment');
}

function expr(node: Node): PyExpr {
  switch (node.type) {
    case 'string':
      return stringValue(node);
    case 'concatenated_string': {
      // Adjacent literals concatenate: `"torch" ">=2.1"`.
      let v = '';
      for (const s of parts(node)) {
        const one = stringValue(s);
        if (one.t !== 'str') return OTHER;
        v += one.v;
      }
      return { t: 'str', v };
    }
    case 'identifier':
      return { t: 'name', id: node.text };
    case 'attribute': {
      const obj = node.childForFieldName('object');
      const name = node.childForFieldName('attribute');
      return obj && name ? { t: 'attr', obj: expr(obj), name: name.text } : OTHER;
    }
    case 'parenthesized_expression': {
      const inner = parts(node);
      return inner.length === 1 && inner[0] ? expr(inner[0]) : OTHER;
    }
    case 'list':
    case 'tuple':
    case 'set':
      return { t: 'list', items: parts(node).map(item) };
    case 'dictionary': {
      const entries: Array<[PyExpr, PyExpr]> = [];
      for (const p of parts(node)) {
        const key = p.type === 'pair' ? p.childForFieldName('key') : null;
        const value = p.type === 'pair' ? p.childForFieldName('value') : null;
        if (key && value) entries.push([expr(key), expr(value)]);
      }
      return { t: 'dict', entries };
    }
    case 'call':
      return call(node);
    case 'subscript': {
      const obj = node.childForFieldName('value');
      const key = node.childForFieldName('subscript');
      return obj && key ? { t: 'sub', obj: expr(obj), key: expr(key) } : OTHER;
    }
    case 'binary_operator': {
      const a = node.childForFieldName('left');
      const b = node.childForFieldName('right');
      if (!a || !b || node.childForFieldName('operator')?.text !== '+') return OTHER;
      return { t: 'add', a: expr(a), b: expr(b) };
    }
    default:
      return OTHER;
  }
}

/** An item of a list or an argument: `*rest` stands for `rest`. */
function item(node: Node): PyExpr {
  if (node.type === 'list_splat' || node.type === 'dictionary_splat') {
    const inner = parts(node)[0];
    return inner ? expr(inner) : OTHER;
  }
  return expr(node);
}

function call(node: Node): PyExpr {
  const fn = node.childForFieldName('function');
  const argList = node.childForFieldName('arguments');
  if (!fn) return OTHER;
  const args: PyExpr[] = [];
  const kwargs: Record<string, PyExpr> = {};
  // `f(x for x in y)`: the arguments are one generator, which says nothing literal.
  if (argList?.type === 'argument_list') {
    for (const a of parts(argList)) {
      if (a.type === 'keyword_argument') {
        const name = a.childForFieldName('name');
        const value = a.childForFieldName('value');
        if (name && value) kwargs[name.text] = expr(value);
      } else args.push(item(a));
    }
  } else if (argList) args.push(OTHER);
  return { t: 'call', fn: expr(fn), args, kwargs };
}

/** A string literal's value: escapes read unless it is raw; an f-string with a substitution is not known. */
function stringValue(node: Node): PyExpr {
  if (node.type !== 'string') return OTHER;
  const m = /^([rRbBuUfF]{0,2})('''|"""|'|")/.exec(node.text);
  if (!m) return OTHER;
  const prefix = (m[1] ?? '').toLowerCase();
  const quote = m[2] ?? '"';
  const inner = node.text.slice(m[0].length, node.text.length - quote.length);
  if (prefix.includes('f') && node.namedChildren.some((c) => c?.type === 'interpolation')) return OTHER;
  if (prefix.includes('r')) return { t: 'str', v: inner };
  const v = inner.replace(/\\([\s\S])/g, (_, e: string) => (e === 'n' ? '\n' : e === 't' ? '\t' : e === '\n' ? '' : e));
  return { t: 'str', v };
}
