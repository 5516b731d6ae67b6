import { readPythonStatements, type PyExpr, type PyStatement } from './read-python-statements.js';
import { normalizeName, parseRequirement } from './requirement-line.js';

/**
 * `setup.py` read statically: the `setup(...)` call's `install_requires`, `extras_require`, `python_requires`
 * and `name`, following module-level variables (`install_requires=REQUIRED`), `+`, `.append`/`.extend`,
 * `list(...)`, and the Hugging Face pattern (`deps["torch"]`, `deps_list("torch", "numpy")` over a `_deps`
 * list of pins). A list read from a file (`open("requirements.txt")`) is reported as that file. Never
 * executed. Pure.
 */
export interface SetupPyDeps {
  name: string | null;
  /** null: no `install_requires` this reader could follow. */
  installRequires: string[] | null;
  extras: Record<string, string[]>;
  pythonRequires: string | null;
  /** Requirement files the dependency lists are read from (`requirements.txt`), relative to setup.py. */
  readsFiles: string[];
  /** `ext_modules=`, `CppExtension`, `CUDAExtension`, `Extension(` or `cythonize` appear. */
  extensions: boolean;
}

type Dict = { dict: Map<string, Val> };
type Val = string | Val[] | Dict | { file: string } | null;

const isDict = (v: Val): v is Dict => v !== null && typeof v === 'object' && !Array.isArray(v) && 'dict' in v;

const MAX_DEPTH = 12;

export function readSetupPy(src: string): SetupPyDeps {
  try {
    return readSetupPyUnguarded(src);
  } catch {
    // A file nested deeper than the stack allows is no setup.py we can read; it declares nothing we know.
    return { name: null, installRequires: null, extras: {}, pythonRequires: null, readsFiles: [], extensions: false };
  }
}

function readSetupPyUnguarded(src: string): SetupPyDeps {
  const stmts = readPythonStatements(src);
  const vars = collectVariables(stmts);
  const pool = requirementPool(stmts);
  const readsFiles: string[] = [];
  const ev = (e: PyExpr | undefined, depth = 0): Val => evaluate(e, depth, { vars, pool, readsFiles, partial: new Map() });
  const call = findSetupCall(stmts);
  const kw = call?.kwargs ?? {};
  const asStrings = (v: Val): string[] | null =>
    Array.isArray(v) ? v.flatMap((x) => (typeof x === 'string' ? [x] : Array.isArray(x) ? (asStrings(x) ?? []) : [])) : null;
  const install = ev(kw.install_requires);
  const extrasVal = ev(kw.extras_require);
  const extras: Record<string, string[]> = {};
  if (isDict(extrasVal)) {
    for (const [k, v] of extrasVal.dict) extras[normalizeName(k)] = asStrings(v) ?? [];
  }
  const name = ev(kw.name);
  const py = ev(kw.python_requires);
  return {
    name: typeof name === 'string' ? name : null,
    installRequires: asStrings(install),
    extras,
    pythonRequires: typeof py === 'string' ? py : null,
    readsFiles: [...new Set(readsFiles)],
    extensions: /\bext_modules\s*=|\b(?:Cpp|CUDA)Extension\b|\bExtension\s*\(|\bcythonize\s*\(/.test(src),
  };
}

function findSetupCall(stmts: PyStatement[]): Extract<PyExpr, { t: 'call' }> | null {
  let found: Extract<PyExpr, { t: 'call' }> | null = null;
  const visit = (e: PyExpr): void => {
    if (e.t !== 'call') return;
    const fn = e.fn;
    if ((fn.t === 'name' && fn.id === 'setup') || (fn.t === 'attr' && fn.name === 'setup')) found ??= e;
    e.args.forEach(visit);
  };
  for (const s of stmts) visit(s.value);
  return found;
}

/** Every assignment, `+=`, `.append`/`.extend` and `x[k] = v`, in source order, as a list of edits per name. */
type Edit = { kind: 'set' | 'add' | 'append'; value: PyExpr } | { kind: 'item'; key: PyExpr; value: PyExpr };

function collectVariables(stmts: PyStatement[]): Map<string, Edit[]> {
  const vars = new Map<string, Edit[]>();
  const push = (name: string, edit: Edit) => {
    vars.set(name, [...(vars.get(name) ?? []), edit]);
  };
  for (const s of stmts) {
    const t = s.target;
    if (t?.t === 'name' && s.op) {
      // A later plain assignment inside a function or branch does not replace a module-level list.
      if (s.op === '=' && s.indent > 0 && vars.has(t.id)) continue;
      push(t.id, { kind: s.op === '=' ? 'set' : 'add', value: s.value });
    } else if (t?.t === 'sub' && t.obj.t === 'name' && s.op === '=') {
      push(t.obj.id, { kind: 'item', key: t.key, value: s.value });
    } else if (!t && s.value.t === 'call' && s.value.fn.t === 'attr' && s.value.fn.obj.t === 'name') {
      const method = s.value.fn.name;
      const arg = s.value.args[0];
      if (arg && (method === 'append' || method === 'extend')) {
        push(s.value.fn.obj.id, { kind: method === 'append' ? 'append' : 'add', value: arg });
      }
    }
  }
  return vars;
}

/** Every requirement string in a list literal anywhere: what `deps["torch"]` and `deps_list("torch")` pick from. */
function requirementPool(stmts: PyStatement[]): Map<string, string> {
  const pool = new Map<string, string>();
  const visit = (e: PyExpr): void => {
    if (e.t === 'list') {
      for (const item of e.items) {
        if (item.t === 'str') {
          const r = parseRequirement(item.v);
          if (r && !pool.has(r.name)) pool.set(r.name, item.v);
        } else visit(item);
      }
    } else if (e.t === 'dict') e.entries.forEach(([, v]) => visit(v));
  };
  for (const s of stmts) visit(s.value);
  return pool;
}

interface EvalCtx {
  vars: Map<string, Edit[]>;
  pool: Map<string, string>;
  readsFiles: string[];
  /** Names whose edits are being applied, with their value so far. */
  partial: Map<string, Val>;
}

function evaluate(e: PyExpr | undefined, depth: number, ctx: EvalCtx): Val {
  if (!e || depth > MAX_DEPTH) return null;
  const ev = (x: PyExpr | undefined) => evaluate(x, depth + 1, ctx);
  switch (e.t) {
    case 'str':
      return e.v;
    case 'list':
      return e.items.map(ev).filter((v) => v !== null);
    case 'dict': {
      const dict = new Map<string, Val>();
      for (const [k, v] of e.entries) {
        const key = ev(k);
        if (typeof key === 'string') dict.set(key, ev(v));
      }
      return { dict };
    }
    case 'name':
      // Inside its own edits (`x = x + [...]`, `extras["dev"] = extras["torch"] + …`) a name is its value so far.
      if (ctx.partial.has(e.id)) return ctx.partial.get(e.id) ?? null;
      return applyEdits(e.id, ctx.vars.get(e.id) ?? [], depth, ctx);
    case 'add': {
      const a = ev(e.a);
      const b = ev(e.b);
      if (Array.isArray(a) && Array.isArray(b)) return [...a, ...b];
      if (typeof a === 'string' && typeof b === 'string') return a + b;
      return Array.isArray(a) ? a : Array.isArray(b) ? b : null;
    }
    case 'sub': {
      const obj = ev(e.obj);
      const key = ev(e.key);
      if (typeof key !== 'string') return null;
      if (isDict(obj) && obj.dict.has(key)) return obj.dict.get(key) ?? null;
      return ctx.pool.get(normalizeName(key)) ?? null;
    }
    case 'call':
      return evaluateCall(e, ev, ctx);
    default:
      return null;
  }
}

function evaluateCall(e: Extract<PyExpr, { t: 'call' }>, ev: (x: PyExpr | undefined) => Val, ctx: EvalCtx): Val {
  const fn = e.fn.t === 'name' ? e.fn.id : e.fn.t === 'attr' ? e.fn.name : '';
  if (['list', 'tuple', 'sorted', 'set'].includes(fn)) return ev(e.args[0]);
  const args = e.args.map(ev);
  // `open("requirements.txt")`, `read_requirements("requirements/base.txt")`, `parse_requirements(...)`: a file.
  const file = [...args, ...Object.values(e.kwargs).map(ev)].find((a): a is string => typeof a === 'string' && /\.(txt|in)$/.test(a));
  const nested = JSON.stringify(e).match(/"v":"([^"]*requirements[^"]*\.(?:txt|in))"/);
  if (file || nested) {
    ctx.readsFiles.push(file ?? nested?.[1] ?? '');
    return { file: file ?? nested?.[1] ?? '' };
  }
  // `deps_list("torch", "numpy")`: names looked up among the pins the file lists.
  if (args.length && args.every((a) => typeof a === 'string' && ctx.pool.has(normalizeName(a)))) {
    return args.map((a) => ctx.pool.get(normalizeName(a as string)) ?? '');
  }
  return null;
}

function applyEdits(name: string, edits: Edit[], depth: number, ctx: EvalCtx): Val {
  let cur: Val = null;
  for (const edit of edits) {
    ctx.partial.set(name, cur);
    const v = evaluate(edit.value, depth + 1, ctx);
    if (edit.kind === 'set') cur = v;
    else if (edit.kind === 'append') cur = Array.isArray(cur) && v !== null ? [...cur, v] : cur;
    else if (edit.kind === 'add') cur = Array.isArray(cur) && Array.isArray(v) ? [...cur, ...v] : (cur ?? v);
    else if (edit.kind === 'item') {
      const key = evaluate(edit.key, depth + 1, ctx);
      if (isDict(cur) && typeof key === 'string') cur.dict.set(key, v);
    }
  }
  ctx.partial.delete(name);
  return cur;
}
