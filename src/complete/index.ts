// Tier 0's completion of a report's code, without a model: 1 extract and repair  2 analyse names (tree-sitter)
// 3 infer what each undefined name must be from its uses  4 synthesise it  5 add a harness that runs what the
// snippet defines but never runs  6 render several candidates for the caller to run and judge.
import type { Node } from 'web-tree-sitter';
import { CONVENTIONAL_IMPORTS, HYPERPARAMETER_DEFAULTS } from '../agent/conventions.js';
import { loadPythonParser } from '../context/python-parser.js';
import { inferRole, type Role } from './infer.js';
import { EXAMPLE_INPUT_HELPER, FAKE_IMAGE_FOLDER, MARK, TARGETS_HELPER, TQDM_NOTEBOOK_FALLBACK, marked } from './python-helpers.js';
import { repairSnippet } from './repair.js';
import { analyzePython, descendants, readsOf, type Analysis, type ClassInfo, type FunctionInfo, type Param } from './scope.js';
import { defineRole, type Definition } from './synthesize.js';

export { MARK } from './python-helpers.js';
export type { Role } from './infer.js';

export interface CompletionInput {
  /** The report's Python blocks, in order. */
  blocks: string[];
  /** Module-level statements of the report's traceback (`<module>` frames), in order. */
  tracebackModuleLines?: string[];
  /** The report's prose and output: image sizes it states, whether it is about training. */
  reportText?: string;
}

/** One runnable completion. */
export interface Candidate {
  script: string;
  /** What distinguishes it from the others ("harness: ResUnet, 300×300 input"). */
  label: string;
  /** The lines tier 0 synthesised (without the mark), for the comment. */
  added: string[];
}

/** A name tier 0 could not complete, and why: what the reporter would have to supply. */
export interface Missing {
  name: string;
  why: string;
  /** Used where it runs at import time (module level): the script cannot run without it. */
  blocking: boolean;
}

export interface Completion {
  /** The reporter's code after extraction and repair, before any synthesis. */
  code: string;
  /** Candidates in the order to try them; the first is the most faithful. Empty when nothing can run. */
  candidates: Candidate[];
  /** One sentence per change, in order (repairs, definitions, harness). */
  edits: string[];
  missing: Missing[];
  /** Time the analysis took (parse, inference, rendering), in milliseconds. */
  analysisMs: number;
}

/** At most this many candidates: each one is a run. @defaultValue 8 */
export const MAX_CANDIDATES = 8;

/** Input sizes tried for image models when the report states none: odd sizes expose skip-connection mismatches. */
const DEFAULT_IMAGE_SIZES = [224, 64, 256, 300, 320, 32];

/** The report is about the backward pass: the harness also runs one. */
const BACKWARD_WORDS = /\.backward\(|\bbackward\b|\bgradient/i;

async function parses(code: string): Promise<(c: string) => boolean> {
  const { parser } = await loadPythonParser();
  return (c: string) => {
    const tree = parser.parse(c);
    if (!tree) return false;
    const ok = !tree.rootNode.hasError;
    tree.delete();
    return ok;
  };
}

/** Image sizes the report states (`Resize(224)`, `128x128`, `img_size = 64`), most specific first. */
export function statedImageSizes(text: string): number[] {
  const out: number[] = [];
  const add = (n: number) => {
    if (n >= 8 && n <= 1024 && !out.includes(n)) out.push(n);
  };
  for (const m of text.matchAll(/\b(?:Resize|CenterCrop|RandomCrop|RandomResizedCrop|img_size|image_size|input_size|im_size|resolution)\s*[(=:]\s*\(?\s*(\d{2,4})/g)) add(Number(m[1]));
  for (const m of text.matchAll(/\b(\d{2,4})\s*[x×]\s*(\d{2,4})\b/g)) if (m[1] === m[2]) add(Number(m[1]));
  for (const m of text.matchAll(/\[\s*\d+\s*,\s*\d+\s*,\s*(\d{2,4})\s*,\s*(\d{2,4})\s*\]/g)) if (m[1] === m[2]) add(Number(m[1]));
  return out;
}

/** Data that lives only on the reporter's machine, swapped for synthetic data of the same kind. */
function substituteData(code: string): { code: string; edits: string[]; helpers: string[] } {
  const re = /\b(?:torchvision\.)?(?:datasets\.)?ImageFolder\s*\(/g;
  if (!re.test(code)) return { code, edits: [], helpers: [] };
  const edits = ["replaced `ImageFolder` (a folder of images on the reporter's machine) with random images through the report's own transforms (`RepgenFakeImages`, torchvision's FakeData)"];
  let out = code.replace(re, 'RepgenFakeImages(');
  // Worker processes only add start-up time once the data is generated in memory.
  const workers = /\bnum_workers\s*=\s*[1-9]\d*/g;
  if (workers.test(out)) {
    out = out.replace(workers, 'num_workers=0');
    edits.push('set `num_workers=0` in the DataLoader: the synthetic images are made in memory, so worker processes would only add start-up time');
  }
  return { code: out, edits, helpers: [FAKE_IMAGE_FOLDER] };
}

/** `from tqdm import notebook`: there is no notebook in a script run; the console bar (or none) stands in. */
function substituteNotebook(code: string): { code: string; edits: string[] } {
  const re = /^from tqdm import notebook\s*$/m;
  if (!re.test(code)) return { code, edits: [] };
  return { code: code.replace(re, marked(TQDM_NOTEBOOK_FALLBACK).join('\n')), edits: ['replaced `from tqdm import notebook` with the console progress bar: a script run has no notebook'] };
}

interface Plan {
  header: string[];
  /** Definitions to insert before module-level statement i (statements.length = before the harness). */
  inserts: Map<number, Definition[]>;
  helpers: Set<string>;
}

function statementIndex(a: Analysis, node: Node): number {
  return a.statements.findIndex((s) => s.startIndex <= node.startIndex && node.endIndex <= s.endIndex);
}

/** First module-level statement that runs `name`'s use: directly, or by calling the function that holds it. */
function firstRunIndex(a: Analysis, uses: { node: Node; fn: Node | null }[], depth = 0): number {
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
    const callers = a.statements.flatMap((s, i) => (i !== defIndex && readsOf(s, fnName).length ? readsOf(s, fnName).map((n) => ({ node: n, fn: enclosingFunction(n) })) : []));
    best = Math.min(best, firstRunIndex(a, callers, depth + 1));
  }
  return best;
}

/** The top-level def or class a node sits in: what module code calls to run it. */
function outermostDefName(node: Node): string | null {
  let n: Node | null = node;
  let name: string | null = null;
  while (n && n.type !== 'module') {
    if (n.type === 'function_definition' || n.type === 'class_definition') name = n.childForFieldName('name')?.text ?? name;
    n = n.parent;
  }
  return name;
}

function enclosingFunction(node: Node): Node | null {
  let n: Node | null = node.parent;
  while (n && n.type !== 'module') {
    if (n.type === 'function_definition') return n;
    n = n.parent;
  }
  return null;
}

/** The variable that holds the model at module level: assigned from one of the snippet's nn.Module classes. */
function moduleLevelModel(a: Analysis): { name: string; index: number } | null {
  const modules = new Set(a.classes.filter((c) => c.isModule).map((c) => c.name));
  let named: { name: string; index: number } | null = null;
  for (let i = 0; i < a.statements.length; i += 1) {
    const s = a.statements[i];
    const m = s ? /^(\w+)\s*=\s*([\w.]+)\s*\(/.exec(s.text) : null;
    if (!m?.[1] || !m[2]) continue;
    if (modules.has(m[2])) return { name: m[1], index: i };
    // `model = nn.Linear(3, 1)`, `net = models.resnet18()`: a library model bound to a model-like name.
    if (!named && /^(?:model|net|network|classifier|\w+_model|model_\w+)$/i.test(m[1]) && /^(?:nn|torch\.nn|models|torchvision\.models)\.\w+$|^[A-Z]\w*$/.test(m[2])) named = { name: m[1], index: i };
  }
  return named;
}

/** A value for a constructor parameter, from its name and its uses in `__init__`; null when it cannot be known. */
function constructorArg(cls: ClassInfo, p: Param, size: number): string | null {
  const init = cls.init;
  const body = init?.childForFieldName('body');
  if (body) {
    for (const n of descendants(body)) {
      if (n.type !== 'assignment' || n.childForFieldName('right')?.text !== p.name) continue;
      const left = n.childForFieldName('left');
      if (left?.type === 'pattern_list' || left?.type === 'tuple_pattern') {
        const names = left.namedChildren.map((c) => c?.text ?? '');
        if (names.length === 3 && /chan/i.test(names[0] ?? '')) return `(3, ${size}, ${size})`;
        return `(${names.map((nm) => (/chan/i.test(nm) ? '3' : /class/i.test(nm) ? '10' : String(size))).join(', ')})`;
      }
    }
    if (readsOf(body, p.name).some((r) => r.parent?.type === 'call' && r.parent.childForFieldName('function')?.id === r.id)) return null;
  }
  const name = p.name;
  const stated = HYPERPARAMETER_DEFAULTS[name];
  if (stated && /^[\d.]+$/.test(stated)) return stated;
  if (/chan/i.test(name)) return '3';
  if (/class/i.test(name)) return '10';
  if (/(?:size|dim|feat|num|^n_|len|count|hidden|depth|width|height|units|vocab|gpu|layers|heads)/i.test(name)) return '16';
  if (/(?:rate|drop|prob|eps|lr|momentum|alpha|beta|gamma)/i.test(name)) return '0.1';
  return null;
}

/** `forward`'s parameters beyond the input, all with defaults: the model can be called on one tensor. */
function callableOnOneInput(cls: ClassInfo): boolean {
  if (!cls.forward) return true;
  const params = cls.forward.childForFieldName('parameters')?.namedChildren ?? [];
  const plain = params.filter((p) => p?.type === 'identifier' || p?.type === 'typed_parameter');
  return plain.length <= 2;
}

function usesConv(a: Analysis, cls: ClassInfo, seen = new Set<string>()): boolean {
  if (seen.has(cls.name)) return false;
  seen.add(cls.name);
  const text = cls.node.text;
  if (/\b(?:Conv[23]d|ConvTranspose[23]d|BatchNorm2d|MaxPool2d|AvgPool2d|models\.\w+\()/.test(text)) return true;
  return a.classes.some((c) => c.name !== cls.name && new RegExp(`\\b${c.name}\\b`).test(text) && usesConv(a, c, seen));
}

interface Harness {
  label: string;
  lines: string[];
  defs: Definition[];
  why: string;
}

/**
 * Completes the report's code. Pure apart from the tree-sitter parser (loaded once per process). Returns the
 * candidates to run, the edits, and what cannot be known.
 */
export async function completeCode(input: CompletionInput): Promise<Completion> {
  const started = performance.now();
  const edits: string[] = [];
  const blocks = input.blocks.map((b) => b.replace(/\s+$/, '')).filter((b) => b.trim());
  if (blocks.length > 1) edits.push(`joined the report's ${blocks.length} code blocks in order`);
  const ok = await parses('');
  const repaired = repairSnippet(blocks.join('\n\n'), ok);
  edits.push(...repaired.edits);
  let body = repaired.code;
  const data = substituteData(body);
  body = data.code;
  edits.push(...data.edits);
  const nb = substituteNotebook(body);
  body = nb.code;
  edits.push(...nb.edits);

  let a = await analyzePython(body);
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

function buildCandidates(a: Analysis, body: string, input: CompletionInput, dataHelpers: string[], edits: string[]): { candidates: Candidate[]; missing: Missing[] } {
  const missing: Missing[] = [];
  const imports: string[] = [];
  const roles = new Map<string, Role>();
  const helperNames = new Set(dataHelpers.flatMap((h) => [...h.matchAll(/^(?:class|def)\s+(\w+)/gm)].map((m) => m[1] ?? '')));
  for (const [name, uses] of a.undefined) {
    if (helperNames.has(name)) continue;
    const role = inferRole(a, name, withParameterUses(uses.map((u) => u.node)));
    roles.set(name, role);
    if (role.kind === 'import') {
      imports.push(role.line);
      edits.push(`added \`${role.line}\` (the code uses \`${name}\` without importing it)`);
    }
  }
  const reportText = input.reportText ?? '';
  const modelAt = moduleLevelModel(a);
  const roots = a.classes.filter((c) => c.isModule && !a.referenced.has(c.name));
  const uncalled = a.functions.filter((f) => !a.referenced.has(f.name) && !/^test/.test(f.name));
  // A model the code needs but does not define: the snippet's own never-instantiated model class when it has one.
  const needsModel = [...roles].find(([, r]) => r.kind === 'model')?.[0] ?? null;

  const base: Definition[] = [];
  const baseAt = new Map<string, number>();
  const floatFromLabels = /\.float\(\)/.test(body);
  const outFeatures = /\.unsqueeze\(\s*1\s*\)|\.view\(\s*-1\s*,\s*1\s*\)|\.reshape\(\s*-1\s*,\s*1\s*\)/.test(body) ? 1 : 4;
  const ctx = { model: modelAt?.name ?? needsModel, optimizer: [...roles].find(([, r]) => r.kind === 'optimizer')?.[0] ?? (/^\s*(\w*optim\w*)\s*=/m.exec(body)?.[1] ?? null), floatFromLabels, outFeatures, batch: batchSize(body) };
  const order: Role['kind'][] = ['value', 'namespace', 'module_stub', 'module_fn', 'model', 'criterion', 'input', 'target', 'loader', 'optimizer', 'scheduler'];
  const pending = [...roles].filter(([, r]) => r.kind !== 'import').sort((x, y) => order.indexOf(x[1].kind) - order.indexOf(y[1].kind));
  for (const [name, role] of pending) {
    if (role.kind === 'model' && roots.length) {
      const root = roots[roots.length - 1] as ClassInfo;
      const args = root.initParams.filter((p) => !p.default && !p.splat).map((p) => constructorArg(root, p, 32));
      if (args.every((x) => x !== null)) {
        base.push({ name, lines: [`${name} = ${root.name}(${args.join(', ')})`], helpers: [], why: `${role.why}; the report's own \`${root.name}\`` });
        baseAt.set(name, firstRunIndex(a, a.undefined.get(name) ?? []));
        continue;
      }
    }
    // A module-level model the report never shows is the reporter's own: a stand-in could not show a bug in it.
    const def = role.kind === 'model' ? null : defineRole(name, role, ctx);
    if (!def) {
      const uses = a.undefined.get(name) ?? [];
      const why = role.kind === 'unknown' ? role.why : role.kind === 'model' ? `${role.why}, but the report never shows the model, and a stand-in could not show a bug in it` : `${role.why}, but there is no model in the code to shape it by`;
      missing.push({ name, why, blocking: uses.some((u) => u.fn === null) });
      continue;
    }
    base.push(def);
    let at = firstRunIndex(a, a.undefined.get(name) ?? []);
    if (def.lines.some((l) => ctx.model && new RegExp(`\\b${ctx.model}\\b`).test(l)) && modelAt && at <= modelAt.index) at = modelAt.index + 1;
    baseAt.set(name, at);
  }
  for (const d of base) edits.push(`defined \`${d.name}\` (${d.why})`);

  // Harnesses: the snippet defines things it never runs.
  const harnesses: Harness[] = [];
  const taken = new Set([...a.moduleBindings, ...a.undefined.keys()]);
  const fresh = (n: string) => {
    let name = n;
    for (let i = 2; taken.has(name); i += 1) name = `${n}_${i}`;
    taken.add(name);
    return name;
  };
  const backward = BACKWARD_WORDS.test(reportText);
  for (const fn of [...uncalled].reverse().slice(0, 3)) {
    const h = functionHarness(a, fn, roots, ctx, fresh, missing);
    if (h) harnesses.push(h);
  }
  const sizes = [...statedImageSizes(`${reportText}\n${body}`), ...DEFAULT_IMAGE_SIZES].filter((v, i, all) => all.indexOf(v) === i);
  for (const root of [...roots].reverse().slice(0, 2)) {
    if (needsModel) break;
    const conv = usesConv(a, root);
    for (const size of conv ? sizes : [32]) {
      const args = root.initParams.filter((p) => !p.default && !p.splat).map((p) => ({ p, v: constructorArg(root, p, size) }));
      const unknown = args.filter((x) => x.v === null).map((x) => x.p.name);
      if (unknown.length) {
        missing.push({ name: root.name, why: `the report defines \`${root.name}\` but never instantiates it, and the value of ${unknown.map((u) => `\`${u}\``).join(', ')} cannot be inferred`, blocking: false });
        break;
      }
      const m = fresh('model');
      const x = fresh('x');
      const lines = [`${m} = ${root.name}(${args.map((y) => y.v).join(', ')})`];
      const variants: { label: string; lines: string[] }[] = [];
      if (callableOnOneInput(root)) {
        lines.push(`${x} = repgen_example_input(${m}, batch=2, size=${size})`);
        variants.push({ label: 'forward', lines: [...lines, `out = ${m}(${x})`] });
        if (backward) variants.unshift({ label: 'forward + backward', lines: [...lines, `out = ${m}(${x})`, '(out[0] if isinstance(out, (tuple, list)) else out).float().mean().backward()'] });
      } else variants.push({ label: 'instantiate', lines });
      for (const v of variants) {
        harnesses.push({ label: `harness: ${root.name}${conv ? `, ${size}×${size} input` : ''}, ${v.label}`, lines: v.lines, defs: [], why: `the report defines \`${root.name}\` but never runs it: instantiated${v.label === 'instantiate' ? '' : ` and called on an input shaped by its first layer (${v.label})`}` });
      }
      taken.delete(m);
      taken.delete(x);
    }
  }

  const render = (h: Harness | null): Candidate => {
    const added: string[] = [];
    const defs = [...base, ...(h?.defs ?? [])];
    const helpers = new Set<string>(defs.flatMap((d) => d.helpers));
    const harnessText = h ? [...h.lines, ...(h.defs.flatMap((d) => d.lines))].join('\n') : '';
    if (/repgen_example_input/.test(harnessText)) helpers.add('example_input');
    const header: string[] = [];
    const need = (line: string) => {
      if (!imports.includes(line) && !new RegExp(`^${line.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\s*$`, 'm').test(body)) header.push(line);
    };
    const allText = `${defs.map((d) => d.lines.join('\n')).join('\n')}\n${harnessText}\n${dataHelpers.join('\n')}`;
    const hasImport = (mod: string) => new RegExp(`^\\s*import ${mod}\\s*(?:$|,|#| as )`, 'm').test(body) || imports.some((i) => i === `import ${mod}`);
    if ((helpers.size || /\btorch\./.test(allText)) && !hasImport('torch')) need('import torch');
    if ((helpers.has('example_input') || /\bnn\./.test(allText)) && !/^\s*(?:import torch\.nn as nn|from torch import nn)\b/m.test(body) && !imports.includes(CONVENTIONAL_IMPORTS.nn ?? '')) need('import torch.nn as nn');
    if (/\bDataLoader\(/.test(allText) && !/\bimport\b[^\n]*\bDataLoader\b/.test(body) && !imports.some((i) => /DataLoader/.test(i))) need('from torch.utils.data import DataLoader');
    if (/\bTensorDataset\(/.test(allText) && !/\bimport\b[^\n]*\bTensorDataset\b/.test(body) && !imports.some((i) => /TensorDataset/.test(i))) need('from torch.utils.data import TensorDataset');
    if (helpers.has('types')) need('import types');
    if (dataHelpers.length && !hasImport('torchvision')) need('import torchvision');
    const order = Object.values(CONVENTIONAL_IMPORTS);
    const imps = [...imports].sort((x, y) => order.indexOf(x) - order.indexOf(y));
    const top = [...imps, ...header];
    const helperText = [...(helpers.has('example_input') ? [EXAMPLE_INPUT_HELPER] : []), ...(helpers.has('targets') ? [TARGETS_HELPER] : []), ...dataHelpers];
    const lines: string[] = [];
    for (const l of top) {
      // There is no notebook in a script run: `notebook.tqdm` gets the console bar (or none).
      const text = l === 'from tqdm import notebook' ? TQDM_NOTEBOOK_FALLBACK : l;
      lines.push(...marked(text));
      added.push(...text.split('\n'));
    }
    for (const ht of helperText) {
      lines.push(...marked(ht));
      added.push(...ht.split('\n'));
    }
    if (lines.length) lines.push('');
    // The reporter's code, statement by statement, with definitions inserted before their first run.
    const at = new Map<number, Definition[]>();
    for (const d of base) {
      const i = baseAt.get(d.name) ?? a.statements.length;
      at.set(i, [...(at.get(i) ?? []), d]);
    }
    const srcLines = body.replace(/\s+$/, '').split('\n');
    const emit = (defsHere: Definition[] | undefined) => {
      for (const d of defsHere ?? []) {
        lines.push(...marked(d.lines.join('\n')));
        added.push(...d.lines);
      }
    };
    let row = 0;
    const cuts = [...at.keys()].filter((i) => i < a.statements.length).sort((x, y) => x - y);
    for (const i of cuts) {
      const startRow = (a.statements[i] as Node).startPosition.row;
      lines.push(...srcLines.slice(row, startRow));
      emit(at.get(i));
      row = startRow;
    }
    lines.push(...srcLines.slice(row));
    const tail = at.get(a.statements.length);
    if (tail?.length || h) lines.push('');
    emit(tail);
    if (h) {
      for (const d of h.defs) {
        lines.push(...marked(d.lines.join('\n')));
        added.push(...d.lines);
      }
      lines.push(...marked(h.lines.join('\n')));
      added.push(...h.lines);
    }
    return { script: `${lines.join('\n').replace(/^\n+/, '')}\n`, label: h?.label ?? 'the report\'s code, completed', added };
  };

  const candidates: Candidate[] = [];
  if (harnesses.length) {
    for (const h of harnesses.slice(0, MAX_CANDIDATES)) candidates.push(render(h));
    for (const h of harnesses) edits.push(`${h.label}: ${h.why}`);
  } else candidates.push(render(null));
  // Harness edits are alternatives: say so once rather than per candidate.
  return { candidates: missing.some((m) => m.blocking) ? [] : candidates, missing: dedupeMissing(missing) };
}

/**
 * A name used as a parameter's default (`def f(criterion=criterion)`) is used wherever the parameter is: its
 * reads in the function body join the name's own.
 */
function withParameterUses(uses: Node[]): Node[] {
  const out = [...uses];
  for (const u of uses) {
    const p = u.parent;
    if ((p?.type !== 'default_parameter' && p?.type !== 'typed_default_parameter') || p.childForFieldName('value')?.id !== u.id) continue;
    const param = p.childForFieldName('name')?.text;
    const fn = p.parent?.parent;
    const body = fn?.type === 'function_definition' ? fn.childForFieldName('body') : null;
    if (param && body) out.push(...readsOf(body, param));
  }
  return out;
}

function dedupeMissing(missing: Missing[]): Missing[] {
  const seen = new Set<string>();
  return missing.filter((m) => (seen.has(m.name) ? false : (seen.add(m.name), true)));
}

/** `batch_size=16` in the report's code, else 16. */
function batchSize(code: string): number {
  const m = /\bbatch_size\s*=\s*(\d{1,4})\b/.exec(code);
  const n = m ? Number(m[1]) : 16;
  return n >= 1 && n <= 256 ? n : 16;
}

/**
 * A call to a function the snippet defines but never calls: each parameter is bound to a module-level name of
 * the same name, or synthesised from its role in the body; a parameter whose role cannot be read stops it.
 */
function functionHarness(
  a: Analysis,
  fn: FunctionInfo,
  roots: ClassInfo[],
  ctx: { model: string | null; optimizer: string | null; floatFromLabels: boolean; outFeatures: number; batch: number },
  fresh: (n: string) => string,
  missing: Missing[],
): Harness | null {
  const bodyNode = fn.node.childForFieldName('body');
  if (!bodyNode) return null;
  const defs: Definition[] = [];
  const args: string[] = [];
  const freeValues = a.statements
    .flatMap((s) => (s.type === 'expression_statement' && s.namedChildren[0]?.type === 'assignment' ? [s.namedChildren[0]] : []))
    .flatMap((asg) => {
      const left = asg?.childForFieldName('left');
      const right = asg?.childForFieldName('right');
      if (!left || !right) return [];
      const names = left.type === 'identifier' ? [left.text] : left.namedChildren.filter((c) => c?.type === 'identifier').map((c) => c?.text ?? '');
      return names;
    })
    .filter((n) => !fn.params.some((p) => p.name === n));
  const roleOf = new Map<string, Role>();
  for (const p of fn.params) if (!p.default && !p.splat) roleOf.set(p.name, inferRole(a, p.name, readsOf(bodyNode, p.name), true));
  const modelParam = [...roleOf].find(([, r]) => r.kind === 'model')?.[0] ?? null;
  let modelVar = ctx.model;
  const local = { ...ctx };
  const ordered = [...fn.params].sort((x, y) => rank(roleOf.get(x.name)) - rank(roleOf.get(y.name)));
  const bound = new Map<string, string>();
  for (const p of ordered) {
    if (p.default || p.splat) continue;
    if (p.name === 'self') {
      bound.set(p.name, 'None');
      continue;
    }
    if (a.moduleBindings.has(p.name)) {
      bound.set(p.name, p.name);
      continue;
    }
    const role = roleOf.get(p.name) as Role;
    const v = fresh(p.name);
    if (role.kind === 'model') {
      const root = roots[roots.length - 1];
      const rargs = root ? root.initParams.filter((q) => !q.default && !q.splat).map((q) => constructorArg(root, q, 32)) : [];
      if (root && rargs.every((x) => x !== null)) defs.push({ name: v, lines: [`${v} = ${root.name}(${rargs.join(', ')})`], helpers: [], why: `the report's own \`${root.name}\`` });
      else {
        const d = defineRole(v, role, local);
        if (d) defs.push(d);
      }
      modelVar = v;
      local.model = v;
      bound.set(p.name, v);
      continue;
    }
    if (role.kind === 'optimizer') local.optimizer = v;
    const d = role.kind === 'unknown' ? null : defineRole(v, role, { ...local, model: modelVar });
    if (d) {
      defs.push(d);
      bound.set(p.name, v);
      continue;
    }
    const next = role.kind === 'unknown' ? freeValues.shift() : undefined;
    if (next) {
      bound.set(p.name, next);
      continue;
    }
    missing.push({ name: `${fn.name}(${p.name})`, why: `the report defines \`${fn.name}\` but never calls it, and what its parameter \`${p.name}\` should be cannot be inferred (${role.kind === 'unknown' ? role.why : 'there is no model to shape it by'})`, blocking: false });
    return null;
  }
  for (const p of fn.params) if (!p.default && !p.splat) args.push(bound.get(p.name) ?? 'None');
  void modelParam;
  const returns = [...descendants(bodyNode)].some((n) => n.type === 'return_statement' && n.namedChildren.length > 0 && enclosingFunction(n)?.id === fn.node.id);
  const call = `${fn.name}(${args.join(', ')})`;
  return { label: `harness: ${call}`, lines: [returns ? `print(${call})` : call], defs, why: `the report defines \`${fn.name}\` but never calls it: called with ${args.length ? 'arguments bound by their use in its body' : 'no arguments'}` };
}

function rank(r: Role | undefined): number {
  const order = ['model', 'value', 'namespace', 'criterion', 'loader', 'input', 'target', 'optimizer', 'scheduler', 'unknown'];
  const i = r ? order.indexOf(r.kind) : -1;
  return i < 0 ? order.length : i;
}
