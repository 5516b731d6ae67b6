// Where a synthesised definition goes: before the first module-level statement that runs a use of its name.
import type { Node } from 'web-tree-sitter';
import { readsOf, type Analysis } from './scope.js';

export function statementIndex(a: Analysis, node: Node): number {
  return a.statements.findIndex((s) => s.startIndex <= node.startIndex && node.endIndex <= s.endIndex);
}

/** First module-level statement that runs `name`'s use: directly, or by calling the function that holds it. */
export function firstRunIndex(a: Analysis, uses: { node: Node; fn: Node | null }[], depth = 0): number {
  let best = a.statements.length;
  for (const u of uses) {
    if (!u.fn) {
      const i = statementIndex(a, u.node);
      // A use inside a class body or a def's defaults runs where it stands.
      if (i >= 0) best = Math.min(best, i);
      continue;
    }
    if (depth > 3) continue;
    const fnName = outermostDefName(u.fn);
    if (!fnName) continue;
    const defIndex = statementIndex(a, u.fn);
    const callers = a.statements.flatMap((s, i) =>
      i !== defIndex && readsOf(s, fnName).length ? readsOf(s, fnName).map((n) => ({ node: n, fn: enclosingFunction(n) })) : [],
    );
    best = Math.min(best, firstRunIndex(a, callers, depth + 1));
  }
  return best;
}

/** The top-level def or class a node sits in: what module code calls to run it. */
export function outermostDefName(node: Node): string | null {
  let n: Node | null = node;
  let name: string | null = null;
  while (n && n.type !== 'module') {
    if (n.type === 'function_definition' || n.type === 'class_definition') name = n.childForFieldName('name')?.text ?? name;
    n = n.parent;
  }
  return name;
}

export function enclosingFunction(node: Node): Node | null {
  let n: Node | null = node.parent;
  while (n && n.type !== 'module') {
    if (n.type === 'function_definition') return n;
    n = n.parent;
  }
  return null;
}
