import type { Node } from 'web-tree-sitter';
import { loadPythonParser } from './python-parser.js';

/** One call (or base class, or decorator) of a script, resolved through its imports and aliases. */
export interface ResolvedCall {
  /** The expression as written: `K.log`. */
  written: string;
  /** The dotted path it reaches: `torch.log` (`import torch as K`). */
  resolved: string;
}

export interface ScriptCalls {
  /** Every dotted path an import statement names (`from tensorflow import keras` → `tensorflow`, `tensorflow.keras`). */
  imported: string[];
  /** Calls whose callee resolves to an imported module; calls on local values (`model.fit`) are not here. */
  calls: ResolvedCall[];
}

/** Names Python gives every script: a call to one is never a call into a star-imported module. */
const BUILTINS = new Set(
  (
    'abs all any ascii bin bool breakpoint bytearray bytes callable chr classmethod compile complex delattr dict dir divmod ' +
    'enumerate eval exec filter float format frozenset getattr globals hasattr hash help hex id input int isinstance ' +
    'issubclass iter len list locals map max memoryview min next object oct open ord pow print property range repr ' +
    'reversed round set setattr slice sorted staticmethod str sum super tuple type vars zip __import__ exit quit'
  ).split(' '),
);

/** `a.b.c` for an identifier or attribute chain; null when the chain starts at anything else (a call, a subscript). */
function dotted(node: Node): string | null {
  if (node.type === 'identifier') return node.text;
  if (node.type === 'attribute') {
    const object = node.childForFieldName('object');
    const attribute = node.childForFieldName('attribute');
    const head = object ? dotted(object) : null;
    return head && attribute ? `${head}.${attribute.text}` : null;
  }
  return null;
}

function walk(node: Node, visit: (n: Node) => void): void {
  visit(node);
  for (const child of node.namedChildren) if (child) walk(child, visit);
}

/**
 * What a script imports and what it calls into, by module, read from its syntax tree: the name a binding gives
 * is never taken for the module (`import torch as K` makes `K.log` a call of `torch.log`; `from tensorflow import
 * keras as tf` makes `tf.layers.Dense` one of `tensorflow.keras.layers.Dense`). Plain aliases (`nn = torch.nn`)
 * are followed; star imports own the calls to names the script never binds. Tolerates syntax errors (tree-sitter).
 */
export async function resolveScriptCalls(script: string): Promise<ScriptCalls> {
  const { parser } = await loadPythonParser();
  const tree = parser.parse(script);
  if (!tree) return { imported: [], calls: [] };
  try {
    const bindings = new Map<string, string>();
    const imported: string[] = [];
    const stars: string[] = [];
    const localNames = new Set<string>();
    walk(tree.rootNode, (n) => {
      if (n.type === 'import_statement') {
        for (const item of n.childrenForFieldName('name')) {
          if (item?.type === 'aliased_import') {
            const name = item.childForFieldName('name')?.text;
            const alias = item.childForFieldName('alias')?.text;
            if (!name || !alias) continue;
            bindings.set(alias, name);
            imported.push(name);
          } else if (item?.type === 'dotted_name') {
            // `import a.b` binds `a`, and `a.b.f()` reaches a.b.f through it.
            const root = item.text.split('.')[0] ?? item.text;
            bindings.set(root, root);
            imported.push(item.text);
          }
        }
      } else if (n.type === 'import_from_statement') {
        const moduleNode = n.childForFieldName('module_name');
        // A relative import is the script's own package: never a framework.
        if (!moduleNode || moduleNode.type !== 'dotted_name') return;
        const module = moduleNode.text;
        imported.push(module);
        if (n.namedChildren.some((c) => c?.type === 'wildcard_import')) stars.push(module);
        for (const item of n.childrenForFieldName('name')) {
          const name = item?.type === 'aliased_import' ? item.childForFieldName('name')?.text : item?.text;
          const alias = item?.type === 'aliased_import' ? item.childForFieldName('alias')?.text : item?.text;
          if (!name || !alias) continue;
          bindings.set(alias, `${module}.${name}`);
          // `from tensorflow import keras` imports a module as much as `import tensorflow.keras` does.
          imported.push(`${module}.${name}`);
        }
      } else if (n.type === 'function_definition' || n.type === 'class_definition') {
        const name = n.childForFieldName('name')?.text;
        if (name) localNames.add(name);
      } else if (n.type === 'assignment') {
        const left = n.childForFieldName('left');
        if (left?.type === 'identifier') localNames.add(left.text);
      }
    });
    // Plain aliases of imported names, in source order: `nn = torch.nn`, `Dense = layers.Dense`.
    walk(tree.rootNode, (n) => {
      if (n.type !== 'assignment') return;
      const left = n.childForFieldName('left');
      const right = n.childForFieldName('right');
      const path = right ? dotted(right) : null;
      if (left?.type !== 'identifier' || !path) return;
      const target = resolve(path, bindings);
      if (target) bindings.set(left.text, target);
    });
    const calls: ResolvedCall[] = [];
    const add = (callee: Node | null): void => {
      const path = callee ? dotted(callee) : null;
      if (!path) return;
      const root = path.split('.')[0] ?? path;
      const resolved =
        resolve(path, bindings) ??
        (stars.length && !localNames.has(root) && !BUILTINS.has(root) && !bindings.has(root) ? `${stars[0]}.${path}` : null);
      if (resolved) calls.push({ written: path, resolved });
    };
    walk(tree.rootNode, (n) => {
      if (n.type === 'call') add(n.childForFieldName('function'));
      // Subclassing or decorating with a framework's class is calling into it as much as a call is.
      else if (n.type === 'decorator') add(n.namedChildren[0] ?? null);
      else if (n.type === 'class_definition')
        for (const base of n.childForFieldName('superclasses')?.namedChildren ?? []) if (base) add(base);
    });
    return { imported: [...new Set(imported)], calls };
  } finally {
    tree.delete();
  }
}

/** `K.log` → `torch.log` when K is bound to torch; null when the chain's root is no import's binding. */
function resolve(path: string, bindings: Map<string, string>): string | null {
  const [root, ...rest] = path.split('.');
  const target = root === undefined ? undefined : bindings.get(root);
  if (!target) return null;
  return [target, ...rest].join('.');
}
