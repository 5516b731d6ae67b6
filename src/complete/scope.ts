import type { Node, Tree } from 'web-tree-sitter';
import { loadPythonParser } from '../context/python-parser.js';
import { PATTERN_TYPES, bindingEnd, descendants, isTarget, named, patternBindings, targetNames } from './syntax-walk.js';

export { descendants } from './syntax-walk.js';

/** Python's builtins (3.8–3.12): never "undefined". */
const BUILTINS = new Set(
  (
    'abs aiter all anext any ascii bin bool breakpoint bytearray bytes callable chr classmethod compile complex copyright credits ' +
    'delattr dict dir divmod enumerate eval exec exit filter float format frozenset getattr globals hasattr hash help hex id input int ' +
    'isinstance issubclass iter len license list locals map max memoryview min next object oct open ord pow print property quit range ' +
    'repr reversed round set setattr slice sorted staticmethod str sum super tuple type vars zip __import__ __name__ __file__ __doc__ ' +
    '__builtins__ __spec__ __loader__ __package__ __debug__ __class__ NotImplemented Ellipsis ' +
    'BaseException Exception ArithmeticError AssertionError AttributeError BlockingIOError BrokenPipeError BufferError BytesWarning ' +
    'ChildProcessError ConnectionAbortedError ConnectionError ConnectionRefusedError ConnectionResetError DeprecationWarning EOFError ' +
    'EnvironmentError FileExistsError FileNotFoundError FloatingPointError FutureWarning GeneratorExit IOError ImportError ImportWarning ' +
    'IndentationError IndexError InterruptedError IsADirectoryError KeyError KeyboardInterrupt LookupError MemoryError ModuleNotFoundError ' +
    'NameError NotADirectoryError NotImplementedError OSError OverflowError PendingDeprecationWarning PermissionError ProcessLookupError ' +
    'RecursionError ReferenceError ResourceWarning RuntimeError RuntimeWarning StopAsyncIteration StopIteration SyntaxError SyntaxWarning ' +
    'SystemError SystemExit TabError TimeoutError TypeError UnboundLocalError UnicodeDecodeError UnicodeEncodeError UnicodeError ' +
    'UnicodeTranslateError UnicodeWarning UserWarning ValueError Warning ZeroDivisionError ExceptionGroup BaseExceptionGroup EncodingWarning'
  ).split(' '),
);

/** One read of a name that nothing in the snippet binds. */
export interface NameUse {
  name: string;
  node: Node;
  /** Innermost enclosing function, or null at module level (class bodies count as module level). */
  fn: Node | null;
  /** The module-level statement that contains the use. */
  statement: Node;
}

export interface Param {
  name: string;
  /** Source text of the default, when there is one. */
  default: string | null;
  /** `*args` / `**kwargs`. */
  splat: boolean;
}

export interface FunctionInfo {
  name: string;
  node: Node;
  params: Param[];
  line: number;
}

export interface ClassInfo {
  name: string;
  node: Node;
  bases: string[];
  /** Subclasses `nn.Module` (directly, or through another class of the snippet). */
  isModule: boolean;
  /** `__init__`'s parameters without `self`. */
  initParams: Param[];
  init: Node | null;
  forward: Node | null;
  line: number;
}

/** What tier 0 knows about a snippet's names: the free ones, the definitions, which of them are used. */
export interface Analysis {
  tree: Tree;
  source: string;
  /** Free names (not bound anywhere visible, not builtins), each with every use, in first-use order. */
  undefined: Map<string, NameUse[]>;
  functions: FunctionInfo[];
  classes: ClassInfo[];
  /** Names read anywhere (calls, values, bases): a definition never read is never run. */
  referenced: Set<string>;
  /** Names bound at module level. */
  moduleBindings: Set<string>;
  /** Module-level statements in order. */
  statements: Node[];
}

const FUNCTION_TYPES = new Set(['function_definition']);

/** Parameters of a function (or lambda) node. */
export function paramsOf(fn: Node): Param[] {
  const params = fn.childForFieldName('parameters');
  if (!params) return [];
  const out: Param[] = [];
  for (const p of named(params)) {
    if (p.type === 'identifier') out.push({ name: p.text, default: null, splat: false });
    else if (p.type === 'default_parameter' || p.type === 'typed_default_parameter') {
      const name = p.childForFieldName('name');
      if (name) out.push({ name: name.text, default: p.childForFieldName('value')?.text ?? null, splat: false });
    } else if (p.type === 'typed_parameter') {
      const id = named(p).find((c) => c.type === 'identifier' || c.type.endsWith('splat_pattern'));
      if (id?.type === 'identifier') out.push({ name: id.text, default: null, splat: false });
      else if (id) out.push({ name: named(id)[0]?.text ?? '', default: null, splat: true });
    } else if (p.type === 'list_splat_pattern' || p.type === 'dictionary_splat_pattern') {
      const id = named(p)[0];
      if (id) out.push({ name: id.text, default: null, splat: true });
    }
  }
  return out;
}

interface Scope {
  node: Node;
  kind: 'module' | 'function' | 'class';
  names: Set<string>;
  parent: Scope | null;
}

/** Records every binding of every scope in one walk. */
function collectBindings(node: Node, scope: Scope, scopes: Map<number, Scope>, moduleScope: Scope): void {
  const bind = (names: string[], s: Scope = scope) => {
    for (const n of names) s.names.add(n);
  };
  switch (node.type) {
    case 'function_definition':
    case 'class_definition': {
      const name = node.childForFieldName('name');
      if (name) scope.names.add(name.text);
      const inner: Scope = { node, kind: node.type === 'function_definition' ? 'function' : 'class', names: new Set(), parent: scope };
      scopes.set(node.id, inner);
      if (node.type === 'function_definition')
        bind(
          paramsOf(node).map((p) => p.name),
          inner,
        );
      // Defaults, decorators and bases are evaluated in the enclosing scope: walk them there.
      for (const c of named(node)) {
        if (c.type === 'block') collectBindings(c, inner, scopes, moduleScope);
        else collectBindings(c, scope, scopes, moduleScope);
      }
      return;
    }
    case 'lambda':
      bind(paramsOf(node).map((p) => p.name));
      break;
    case 'assignment':
    case 'augmented_assignment': {
      const names: string[] = [];
      targetNames(node.childForFieldName('left'), names);
      bind(names);
      break;
    }
    case 'for_statement':
    case 'for_in_clause': {
      const names: string[] = [];
      targetNames(node.childForFieldName('left'), names);
      bind(names);
      break;
    }
    case 'as_pattern_target':
    case 'named_expression':
    case 'case_pattern':
    case 'keyword_pattern':
    case 'splat_pattern':
    case 'as_pattern':
      bind(patternBindings(node));
      break;
    case 'import_statement':
    case 'import_from_statement': {
      for (const c of named(node)) {
        if (node.type === 'import_from_statement' && c.id === node.childForFieldName('module_name')?.id) continue;
        if (c.type === 'aliased_import') {
          const alias = c.childForFieldName('alias');
          if (alias) scope.names.add(alias.text);
        } else if (c.type === 'dotted_name') {
          const first = named(c)[0];
          if (first) scope.names.add(node.type === 'import_statement' ? first.text : (named(c).at(-1)?.text ?? first.text));
        }
      }
      return;
    }
    case 'global_statement':
      for (const c of named(node)) if (c.type === 'identifier') moduleScope.names.add(c.text);
      return;
    default:
      break;
  }
  for (const c of named(node)) collectBindings(c, scope, scopes, moduleScope);
}

/** Identifiers that are not reads: attribute names, keyword names, definition names, parameters, imports. */
function isRead(id: Node): boolean {
  const p = id.parent;
  if (!p) return true;
  if (p.type === 'attribute' && p.childForFieldName('attribute')?.id === id.id) return false;
  if (p.type === 'keyword_argument' && p.childForFieldName('name')?.id === id.id) return false;
  if ((p.type === 'function_definition' || p.type === 'class_definition') && p.childForFieldName('name')?.id === id.id) return false;
  // The name a binder gives (`as e`, `as (f, g)`, `n :=`, a match capture or keyword) is written, not read.
  let up: Node = id;
  while (up.parent && PATTERN_TYPES.has(up.parent.type)) up = up.parent;
  if (up.parent?.type === 'as_pattern_target') return false;
  if (p.type === 'named_expression' && p.childForFieldName('name')?.id === id.id) return false;
  if (p.type === 'splat_pattern' || p.type === 'keyword_pattern') return false;
  if (p.type === 'as_pattern' && p.parent?.type === 'case_pattern') return false;
  if (
    [
      'parameters',
      'lambda_parameters',
      'default_parameter',
      'typed_parameter',
      'typed_default_parameter',
      'list_splat_pattern',
      'dictionary_splat_pattern',
    ].includes(p.type)
  ) {
    if (p.type === 'default_parameter' || p.type === 'typed_default_parameter') return p.childForFieldName('value')?.id === id.id;
    // `*args` in a signature (typed or not) names a parameter; elsewhere (`f(*xs)`, `[*xs]`) it reads xs.
    return p.type === 'list_splat_pattern' && !['parameters', 'lambda_parameters', 'typed_parameter'].includes(p.parent?.type ?? '');
  }
  if (
    ['dotted_name', 'aliased_import', 'import_statement', 'import_from_statement', 'global_statement', 'nonlocal_statement'].includes(
      p.type,
    )
  )
    return false;
  return true;
}

function resolves(name: string, scope: Scope): boolean {
  // A class scope's names are not visible from the functions nested in it.
  for (let s: Scope | null = scope, first = true; s; s = s.parent, first = false) {
    if (s.kind === 'class' && !first) continue;
    if (s.names.has(name)) return true;
  }
  return false;
}

function collectReads(
  node: Node,
  scope: Scope,
  scopes: Map<number, Scope>,
  fn: Node | null,
  statement: Node | null,
  out: NameUse[],
  referenced: Set<string>,
): void {
  const inner = scopes.get(node.id);
  if (inner && (node.type === 'function_definition' || node.type === 'class_definition')) {
    for (const c of named(node)) {
      if (c.type === 'block')
        collectReads(c, inner, scopes, node.type === 'function_definition' ? node : fn, statement ?? node, out, referenced);
      else collectReads(c, scope, scopes, fn, statement ?? node, out, referenced);
    }
    return;
  }
  if (node.type === 'identifier' && isRead(node)) {
    referenced.add(node.text);
    if (!resolves(node.text, scope) && !BUILTINS.has(node.text)) out.push({ name: node.text, node, fn, statement: statement ?? node });
    return;
  }
  for (const c of named(node))
    collectReads(c, scope, scopes, fn, statement ?? (node.parent?.type === 'module' ? node : null), out, referenced);
}

function isModuleBase(base: string, moduleClasses: Set<string>): boolean {
  return /(?:^|\.)Module$|(?:^|\.)(?:LightningModule|Sequential|ModuleList|ModuleDict)$/.test(base) || moduleClasses.has(base);
}

/** Parses and analyses a snippet. The caller deletes `tree` when done (wasm memory). */
export async function analyzePython(source: string): Promise<Analysis> {
  const { parser } = await loadPythonParser();
  const tree = parser.parse(source);
  if (!tree) throw new Error('tree-sitter gave up on the snippet');
  const root = tree.rootNode;
  const moduleScope: Scope = { node: root, kind: 'module', names: new Set(), parent: null };
  const scopes = new Map<number, Scope>();
  collectBindings(root, moduleScope, scopes, moduleScope);
  const reads: NameUse[] = [];
  const referenced = new Set<string>();
  for (const st of named(root)) collectReads(st, moduleScope, scopes, null, st, reads, referenced);
  // Module code runs in order: a name read at module level before the first statement that binds it is
  // undefined there (`if loss == 'MSE':` above the loop that assigns `loss`), as CPython and pyflakes see it.
  const statements = named(root);
  const firstBinding = new Map<string, number>();
  statements.forEach((st, i) => {
    const own: Scope = { node: st, kind: 'module', names: new Set(), parent: null };
    collectBindings(st, own, new Map(), own);
    for (const n of own.names) if (!firstBinding.has(n)) firstBinding.set(n, i);
  });
  const readsBeforeBinding: NameUse[] = [];
  const moduleReads: NameUse[] = [];
  for (const st of statements)
    collectReads(st, { node: root, kind: 'module', names: new Set(), parent: null }, scopes, null, st, moduleReads, new Set());
  for (const r of moduleReads) {
    if (r.fn || BUILTINS.has(r.name) || !moduleScope.names.has(r.name)) continue;
    const at = statements.findIndex((st) => st.id === r.statement.id);
    const bound = firstBinding.get(r.name);
    if (bound === undefined || at < 0 || isClassBodyOrNested(r.node)) continue;
    // In the statement that first binds it, a read that runs before the binding (`loss = loss(p, y)` in a loop whose
    // first pass has no `loss` yet) is undefined there too.
    const early = at === bound && !isTarget(r.node) && r.node.startIndex < bindingEnd(statements[at] as Node, r.name);
    if (at < bound || early) readsBeforeBinding.push(r);
  }
  reads.push(...readsBeforeBinding);
  const undefinedNames = new Map<string, NameUse[]>();
  for (const r of reads) {
    const list = undefinedNames.get(r.name) ?? [];
    list.push(r);
    undefinedNames.set(r.name, list);
  }
  const functions: FunctionInfo[] = [];
  const classes: ClassInfo[] = [];
  const moduleClasses = new Set<string>();
  for (const top of named(root)) {
    const def = top.type === 'decorated_definition' ? top.childForFieldName('definition') : top;
    if (!def) continue;
    const name = def.childForFieldName('name')?.text;
    if (!name) continue;
    if (def.type === 'function_definition') functions.push({ name, node: def, params: paramsOf(def), line: def.startPosition.row + 1 });
    if (def.type === 'class_definition') {
      const bases = named(def.childForFieldName('superclasses') ?? def)
        .filter((b) => b.type === 'identifier' || b.type === 'attribute')
        .map((b) => b.text);
      const body = named(def.childForFieldName('body') ?? def);
      const method = (m: string) =>
        body
          .map((c) => (c.type === 'decorated_definition' ? c.childForFieldName('definition') : c))
          .find((c) => c?.type === 'function_definition' && c.childForFieldName('name')?.text === m) ?? null;
      const init = method('__init__');
      const isModule = bases.some((b) => isModuleBase(b, moduleClasses));
      if (isModule) moduleClasses.add(name);
      classes.push({
        name,
        node: def,
        bases,
        isModule,
        initParams: init ? paramsOf(init).slice(1) : [],
        init,
        forward: method('forward'),
        line: def.startPosition.row + 1,
      });
    }
  }
  // A definition's own name inside its body (recursion, super(Cls, self)) does not make it used.
  const selfReads = new Map<string, number>();
  for (const d of [...functions, ...classes]) {
    let n = 0;
    const walk = (x: Node): void => {
      if (x.type === 'identifier' && x.text === d.name && isRead(x)) n += 1;
      for (const c of named(x)) walk(c);
    };
    const body = d.node.childForFieldName('body');
    if (body) walk(body);
    selfReads.set(d.name, n);
  }
  const totalReads = new Map<string, number>();
  const countAll = (x: Node): void => {
    if (x.type === 'identifier' && isRead(x)) totalReads.set(x.text, (totalReads.get(x.text) ?? 0) + 1);
    for (const c of named(x)) countAll(c);
  };
  countAll(root);
  for (const [name, n] of selfReads) if ((totalReads.get(name) ?? 0) <= n) referenced.delete(name);
  return { tree, source, undefined: undefinedNames, functions, classes, referenced, moduleBindings: moduleScope.names, statements };
}

/** Inside a class body or a lambda/comprehension: not run in plain statement order. */
function isClassBodyOrNested(node: Node): boolean {
  for (let n = node.parent; n && n.type !== 'module'; n = n.parent) {
    if (n.type === 'class_definition' || n.type === 'lambda' || n.type.endsWith('comprehension') || n.type === 'generator_expression')
      return true;
  }
  return false;
}

/** Every read of `name` inside `scopeNode` (not crossing into nested definitions that rebind it). */
export function readsOf(scopeNode: Node, name: string): Node[] {
  const out: Node[] = [];
  for (const n of descendants(scopeNode)) if (n.type === 'identifier' && n.text === name && isRead(n)) out.push(n);
  return out;
}

export { FUNCTION_TYPES };
