// Walking a tree-sitter Python tree: children, descendants, what an assignment or a loop binds, and where in a
// statement a binding takes effect (module code runs in order; a read before that point is a read of nothing).
import type { Node } from 'web-tree-sitter';

export const PATTERN_TYPES = new Set([
  'pattern_list',
  'tuple_pattern',
  'list_pattern',
  'list_splat_pattern',
  'tuple',
  'list',
  'parenthesized_expression',
  'expression_list',
]);

export function named(node: Node): Node[] {
  return node.namedChildren.filter((c): c is Node => c !== null);
}

/** Identifiers a target binds: `a`, `a, (b, c)`, `*rest`; not `self.x` or `d[k]`. */
export function targetNames(node: Node | null, out: string[]): void {
  if (!node) return;
  if (node.type === 'identifier') out.push(node.text);
  else if (PATTERN_TYPES.has(node.type)) for (const c of named(node)) targetNames(c, out);
}

/**
 * Names a node binds by itself, besides assignments, loops, definitions and imports: the target of `except … as e`
 * and `with … as f`, the name of `n := …`, and the captures of a `match` case (`case [a, *rest]`, `case {"k": v,
 * **others}`, `case Point(x=px)`, `case int() as n`). `_` is a wildcard and binds nothing.
 */
export function patternBindings(node: Node): string[] {
  const out: string[] = [];
  const capture = (n: Node | undefined): void => {
    // A bare name in a pattern captures; a dotted one (`nn.ReLU`) is a value to compare with.
    if (n?.type === 'dotted_name' && named(n).length === 1 && n.text !== '_') out.push(n.text);
  };
  switch (node.type) {
    case 'as_pattern_target':
      for (const c of named(node)) targetNames(c, out);
      break;
    case 'named_expression': {
      const name = node.childForFieldName('name');
      if (name) out.push(name.text);
      break;
    }
    case 'case_pattern':
      if (named(node).length === 1) capture(named(node)[0]);
      break;
    case 'keyword_pattern':
      capture(named(node).at(-1));
      break;
    case 'splat_pattern': {
      const id = named(node)[0];
      if (id?.type === 'identifier' && id.text !== '_') out.push(id.text);
      break;
    }
    case 'as_pattern': {
      // `case int() as n`; the `as` of `except`/`with` binds through its as_pattern_target instead.
      const last = named(node).at(-1);
      if (node.parent?.type === 'case_pattern' && last?.type === 'identifier') out.push(last.text);
      break;
    }
    default:
      break;
  }
  return out;
}

/** Walks a subtree, depth first, in source order. */
export function* descendants(node: Node): Generator<Node> {
  yield node;
  for (const c of named(node)) yield* descendants(c);
}

/**
 * Where the first binding of `name` inside a statement takes effect, as a source offset: the end of an assignment
 * (its right side runs first), the end of a `for` target, the start of a definition. Infinity when it binds none.
 */
export function bindingEnd(statement: Node, name: string): number {
  let best = Number.POSITIVE_INFINITY;
  for (const n of descendants(statement)) {
    if (n.startIndex >= best) continue;
    let target: Node | null = null;
    let end = n.endIndex;
    if (n.type === 'assignment' || n.type === 'augmented_assignment') target = n.childForFieldName('left');
    else if (n.type === 'for_statement' || n.type === 'for_in_clause') {
      target = n.childForFieldName('left');
      end = target?.endIndex ?? end;
    } else if ((n.type === 'function_definition' || n.type === 'class_definition') && n.childForFieldName('name')?.text === name) {
      best = Math.min(best, n.startIndex);
      continue;
    }
    const names: string[] = [];
    targetNames(target, names);
    if (names.includes(name)) best = Math.min(best, end);
    // `except … as e`, `with … as f`, `n := …`, a match capture: bound once the binder itself has run.
    else if (patternBindings(n).includes(name)) best = Math.min(best, n.endIndex);
  }
  return best;
}

/** Part of what an assignment or a `for` binds (`x` of `x = ...`, `for x, y in ...`), not a read. */
export function isTarget(node: Node): boolean {
  let n = node;
  while (n.parent && PATTERN_TYPES.has(n.parent.type)) n = n.parent;
  const p = n.parent;
  const binders = ['assignment', 'for_statement', 'for_in_clause'];
  return !!p && binders.includes(p.type) && p.childForFieldName('left')?.id === n.id;
}
