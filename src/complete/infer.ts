import type { Node } from 'web-tree-sitter';
import { conventionalImport, HYPERPARAMETER_DEFAULTS } from '../context/conventions.js';
import { constructorArg } from './model-shape.js';
import { descendants, readsOf, type Analysis } from './scope.js';

/**
 * What an undefined name (or a parameter of a function tier 0 calls) must be, read from how the code uses it.
 * `unknown` is the honest answer when the uses do not say: the engine then reports it as missing.
 */
export type Role =
  | { kind: 'import'; line: string; why?: string }
  | { kind: 'value'; expr: string; why: string }
  | { kind: 'module_stub'; why: string }
  | { kind: 'module_fn'; why: string }
  | { kind: 'namespace'; attrs: string[]; why: string }
  | { kind: 'loader'; arity: number; target: TargetKind; why: string }
  | { kind: 'model'; why: string }
  | { kind: 'optimizer'; why: string }
  | { kind: 'scheduler'; why: string }
  | { kind: 'criterion'; target: TargetKind; why: string }
  | { kind: 'input'; why: string }
  | { kind: 'target'; target: TargetKind; why: string }
  | { kind: 'unknown'; why: string };

/** What the targets of a loss are: class ids (CrossEntropy/NLL, `.eq`, `argmax`) or floats (MSE, BCE, `.float()`). */
export type TargetKind = 'class' | 'float';

const CAMEL = /^[A-Z][A-Za-z0-9]*[a-z][A-Za-z0-9]*$/;
const LOADER_NAME = /(?:loader|dataloader|_dl|batches)$/i;
const MODEL_NAME = /^(?:model|net|network|classifier|encoder|decoder|generator|discriminator|\w+_model|model_\w+|\w*net)$/i;
const CRITERION_NAME = /^(?:criterion|loss_fn|loss_func|lossfn|loss_function|criteria|\w+_criterion|\w+_loss_fn)$/i;
const OPTIMIZER_NAME = /^(?:optimizer|optim|opt|\w+_optimizer|optimizer_\w+)$/i;
const SCHEDULER_NAME = /^(?:scheduler|lr_scheduler|sched|\w+_scheduler)$/i;
const EPOCHS_NAME = /^(?:num_epochs|n_epochs|epochs|epoch_num|max_epochs|nb_epochs|EPOCHS?|NUM_EPOCHS)$/;
const DEVICE_NAME = /^(?:device|dev|DEVICE)$/;
const MODULE_SINKS = /(?:^|\.)(?:add_module|append|Sequential|ModuleList|ModuleDict|extend|insert)$/;

/** The call a node is an argument of, with its position (or keyword). */
function argumentOf(node: Node): { call: Node; fn: string; index: number; keyword: string | null } | null {
  let arg = node;
  let keyword: string | null = null;
  if (arg.parent?.type === 'keyword_argument') {
    keyword = arg.parent.childForFieldName('name')?.text ?? null;
    arg = arg.parent;
  }
  const list = arg.parent;
  if (list?.type !== 'argument_list' || list.parent?.type !== 'call') return null;
  const call = list.parent;
  const positional = list.namedChildren.filter((c) => c && c.type !== 'keyword_argument' && c.type !== 'comment');
  return {
    call,
    fn: call.childForFieldName('function')?.text ?? '',
    index: keyword ? -1 : positional.findIndex((c) => c?.id === arg.id),
    keyword,
  };
}

/** `name.method(...)` method names, and `name.attr` attribute names read. */
function attributesOf(uses: Node[]): { methods: string[]; attrs: string[] } {
  const methods: string[] = [];
  const attrs: string[] = [];
  for (const u of uses) {
    const p = u.parent;
    if (p?.type !== 'attribute' || p.childForFieldName('object')?.id !== u.id) continue;
    const attr = p.childForFieldName('attribute')?.text ?? '';
    if (p.parent?.type === 'call' && p.parent.childForFieldName('function')?.id === p.id) methods.push(attr);
    else attrs.push(attr);
  }
  return { methods, attrs };
}

/** The `for` loop that iterates `use` (directly or through enumerate/tqdm/iter/zip), with its target pattern. */
export function iteratingLoop(use: Node): { loop: Node; pattern: Node; enumerated: boolean } | null {
  let n: Node = use;
  let enumerated = false;
  for (let hops = 0; hops < 4; hops += 1) {
    const p = n.parent;
    if (!p) return null;
    if ((p.type === 'for_statement' || p.type === 'for_in_clause') && p.childForFieldName('right')?.id === n.id) {
      const left = p.childForFieldName('left');
      if (!left) return null;
      let pattern = left;
      if (enumerated && (left.type === 'pattern_list' || left.type === 'tuple_pattern') && left.namedChildren.length === 2)
        pattern = left.namedChildren[1] ?? left;
      return { loop: p, pattern, enumerated };
    }
    if (p.type === 'argument_list' && p.parent?.type === 'call') {
      const fn = p.parent.childForFieldName('function')?.text ?? '';
      if (!/(?:^|\.)(?:enumerate|tqdm|trange|iter|notebook\.tqdm|auto\.tqdm)$/.test(fn)) return null;
      if (/enumerate$/.test(fn)) enumerated = true;
      n = p.parent;
      continue;
    }
    return null;
  }
  return null;
}

function patternNames(pattern: Node): string[] {
  if (pattern.type === 'identifier') return [pattern.text];
  return pattern.namedChildren.filter((c): c is Node => c?.type === 'identifier').map((c) => c.text);
}

/** Names bound from `name` by plain rebinding in a scope: `x = x.to(device)`, `inputs = x.float()`. */
function aliases(scope: Node, name: string): string[] {
  const out = new Set([name]);
  for (let round = 0; round < 2; round += 1) {
    for (const n of descendants(scope)) {
      if (n.type !== 'assignment') continue;
      const left = n.childForFieldName('left');
      const right = n.childForFieldName('right');
      if (left?.type !== 'identifier' || !right) continue;
      const head = rootIdentifier(right);
      if (head && out.has(head) && /^[\w.]+(?:\([^()]*\))*(?:\.\w+\([^()]*\))*$/.test(right.text)) out.add(left.text);
    }
  }
  return [...out];
}

/** `a` of `a.b(c).d`. */
function rootIdentifier(node: Node): string | null {
  let n: Node | null = node;
  while (n) {
    if (n.type === 'identifier') return n.text;
    if (n.type === 'attribute') n = n.childForFieldName('object');
    else if (n.type === 'call') n = n.childForFieldName('function');
    else if (n.type === 'subscript') n = n.childForFieldName('value');
    else return null;
  }
  return null;
}

/** How the elements a loader yields are used in `scope`: the input goes into a model, the target into a loss. */
export function targetKindIn(scope: Node, targetNames: string[], criterionHint: string | null): TargetKind {
  if (criterionHint && /MSE|L1|SmoothL1|BCE|Huber|KLDiv|Cosine/i.test(criterionHint)) return 'float';
  if (criterionHint && /CrossEntropy|NLL|MultiMargin/i.test(criterionHint)) return 'class';
  for (const t of targetNames) {
    for (const r of readsOf(scope, t)) {
      const p = r.parent;
      const attr = p?.type === 'attribute' ? p.childForFieldName('attribute')?.text : null;
      if (attr && /^(?:float|double|half)$/.test(attr)) return 'float';
      if (attr && /^(?:long|int)$/.test(attr)) return 'class';
    }
  }
  // `pred.eq(y)`, `(pred == y)`, `.max(1)` / `argmax` on the output: a classifier.
  const text = scope.text;
  for (const t of targetNames) {
    if (new RegExp(`\\.eq\\(\\s*${t}\\b|==\\s*${t}\\b|\\b${t}(?:\\.data)?\\s*==`).test(text)) return 'class';
  }
  if (/\.max\(\s*(?:1|dim\s*=\s*1)|\.argmax\(|torch\.max\([^)]*,\s*1\)/.test(text)) return 'class';
  return 'float';
}

/** The loss class a criterion name is bound to anywhere in the snippet (`criterion = nn.MSELoss()`). */
function criterionClass(a: Analysis, name: string | null): string | null {
  if (!name) return null;
  const m = new RegExp(`\\b${name}\\s*=\\s*(?:nn\\.|torch\\.nn\\.)?(\\w+Loss)\\(`).exec(a.source);
  return m?.[1] ?? null;
}

/** In a loop over a loader: which element goes where, and the loss's name. */
export function loaderUse(a: Analysis, use: Node): { arity: number; target: TargetKind; criterion: string | null } | null {
  const it = iteratingLoop(use);
  if (!it) return null;
  const body = it.loop.childForFieldName('body') ?? it.loop;
  let names = patternNames(it.pattern);
  // `for i, data in enumerate(loader):` then `xs, ys = data`: the batch is unpacked in the body.
  if (names.length === 1) {
    const unpack = [...descendants(body)].find(
      (n) =>
        n.type === 'assignment' &&
        n.childForFieldName('right')?.text === names[0] &&
        (n.childForFieldName('left')?.type === 'pattern_list' || n.childForFieldName('left')?.type === 'tuple_pattern'),
    );
    const left = unpack?.childForFieldName('left');
    if (left) names = patternNames(left);
  }
  const fnScope = enclosingScope(use);
  let criterion: string | null = null;
  const targets: string[] = [];
  if (names.length >= 2) {
    const targetAliases = aliases(fnScope, names[1] ?? '');
    targets.push(...targetAliases);
    for (const n of descendants(body)) {
      if (n.type !== 'call') continue;
      const args = n.childForFieldName('arguments')?.namedChildren.filter((c): c is Node => c !== null) ?? [];
      if (args.length >= 2 && targetAliases.includes(rootIdentifier(args[1] as Node) ?? '')) {
        criterion = n.childForFieldName('function')?.text ?? null;
        break;
      }
    }
  }
  const hint = criterionClass(a, criterion) ?? (criterion && /^nn\.\w+Loss|F\.\w+/.test(criterion) ? criterion : null);
  return { arity: Math.max(1, names.length), target: targetKindIn(fnScope, targets, hint), criterion };
}

function enclosingScope(node: Node): Node {
  let n: Node | null = node.parent;
  while (n && n.type !== 'function_definition' && n.type !== 'module') n = n.parent;
  return n ?? node;
}

/** A call's result used as a layer: added to a module, put in a Sequential/ModuleList, or set on `self`. */
function resultIsModule(call: Node, a: Analysis): boolean {
  const sink = argumentOf(call);
  if (sink && MODULE_SINKS.test(sink.fn)) return true;
  const p = call.parent;
  if (p?.type === 'assignment' && p.childForFieldName('right')?.id === call.id) {
    const left = p.childForFieldName('left');
    if (left?.type === 'attribute' && left.childForFieldName('object')?.text === 'self') return true;
    if (left?.type === 'identifier') {
      const scope = enclosingScope(call);
      return readsOf(scope, left.text).some((r) => {
        const s = argumentOf(r);
        return s !== null && MODULE_SINKS.test(s.fn);
      });
    }
  }
  // Called inside an nn.Module's __init__: a sub-layer.
  const inInit = a.classes.some((c) => c.isModule && c.init && c.init.startIndex <= call.startIndex && call.endIndex <= c.init.endIndex);
  return inInit && p?.type !== 'expression_statement';
}

/**
 * A model's output: a call of a model-named or layer-bound name (`net(xs)`), or a name the enclosing scope assigns
 * from one (`preds = net(xs)`). What a free callable is called on with a target is then a loss.
 */
function isModelOutput(a: Analysis, node: Node | null): boolean {
  const isModelCall = (n: Node | null | undefined) => {
    const fn = n?.type === 'call' ? (n.childForFieldName('function')?.text ?? '') : '';
    return MODEL_NAME.test(fn) || a.classes.some((c) => c.isModule && new RegExp(`^\\s*${fn}\\s*=\\s*${c.name}\\(`, 'm').test(a.source));
  };
  if (!node) return false;
  if (isModelCall(node)) return true;
  if (node.type !== 'identifier') return false;
  const scope = enclosingScope(node);
  return [...descendants(scope)].some(
    (n) => n.type === 'assignment' && n.childForFieldName('left')?.text === node.text && isModelCall(n.childForFieldName('right')),
  );
}

/** Infers the role of `name` from its uses (reads of it). */
export function inferRole(a: Analysis, name: string, uses: Node[], param = false): Role {
  const imp = conventionalImport(name, a.source);
  if (imp && !param) return { kind: 'import', line: imp };
  const { methods, attrs } = attributesOf(uses);
  for (const u of uses) {
    const loop = loaderUse(a, u);
    if (loop && (loop.arity >= 2 || LOADER_NAME.test(name)))
      return {
        kind: 'loader',
        arity: loop.arity,
        target: loop.target,
        why: `the code iterates over it as (${loop.arity === 2 ? 'input, target' : `${loop.arity} values`}) batches`,
      };
  }
  if (methods.includes('apply') && MODEL_NAME.test(name)) return { kind: 'model', why: 'the code calls `.apply()` on it' };
  const argOf = uses.map(argumentOf).filter((x) => x !== null);
  if (argOf.some((x) => /(?:^|\.)apply$/.test(x.fn) && x.index === 0))
    return { kind: 'module_fn', why: 'it is passed to `Module.apply`, which calls it on every sub-module' };
  if ((methods.includes('zero_grad') || methods.includes('step')) && (OPTIMIZER_NAME.test(name) || methods.includes('zero_grad'))) {
    return { kind: 'optimizer', why: 'the code calls `.zero_grad()` / `.step()` on it' };
  }
  if (methods.includes('step') && SCHEDULER_NAME.test(name))
    return { kind: 'scheduler', why: 'the code calls `.step()` on it once per epoch' };
  const called = uses
    .filter((u) => u.parent?.type === 'call' && u.parent.childForFieldName('function')?.id === u.id)
    .map((u) => u.parent as Node);
  if (called.length && CAMEL.test(name) && called.some((c) => resultIsModule(c, a))) {
    return { kind: 'module_stub', why: 'it is called like a layer class and its result is used as a sub-module' };
  }
  if (
    CRITERION_NAME.test(name) ||
    called.some(
      (c) =>
        (c.childForFieldName('arguments')?.namedChildren.length ?? 0) === 2 &&
        (/\.backward\(|\.item\(/.test(c.parent?.parent?.text ?? '') ||
          isModelOutput(a, c.childForFieldName('arguments')?.namedChildren[0] ?? null)),
    )
  ) {
    if (called.length || param) {
      const scope = called[0] ? enclosingScope(called[0]) : uses[0] ? enclosingScope(uses[0]) : a.tree.rootNode;
      const targetArg = called[0]?.childForFieldName('arguments')?.namedChildren[1];
      const tname = targetArg ? rootIdentifier(targetArg) : null;
      const float = targetArg && /\.(?:float|double)\(\)/.test(targetArg.text);
      return {
        kind: 'criterion',
        target: float ? 'float' : targetKindIn(scope, tname ? aliases(scope, tname) : [], null),
        why: 'it is called on (output, target) and its result is the loss',
      };
    }
  }
  if (
    MODEL_NAME.test(name) &&
    (called.length ||
      methods.some((m) => /^(?:parameters|train|eval|to|cuda|state_dict|load_state_dict|forward|named_parameters|zero_grad)$/.test(m)))
  ) {
    return { kind: 'model', why: 'the code calls it on inputs and uses its parameters' };
  }
  const stated = HYPERPARAMETER_DEFAULTS[name];
  if (stated && !called.length) return { kind: 'value', expr: stated, why: 'a hyper-parameter; stated default' };
  // `SGD(..., lr=learn_rate)`: the keyword it is passed as names the hyper-parameter, whatever the variable is called.
  const keyword = called.length ? undefined : argOf.map((x) => x.keyword).find((k) => k && HYPERPARAMETER_DEFAULTS[k]);
  if (keyword)
    return {
      kind: 'value',
      expr: HYPERPARAMETER_DEFAULTS[keyword] ?? '',
      why: `it is passed as \`${keyword}=\`; that hyper-parameter's stated default`,
    };
  // `Net(ngpu)`: an argument of a class the report defines gets the value that constructor parameter would get in a harness.
  for (const x of called.length ? [] : argOf) {
    const cls = a.classes.find((c) => c.name === x.fn);
    const p = x.keyword ? cls?.initParams.find((q) => q.name === x.keyword) : cls?.initParams[x.index];
    const v = cls && p && !p.splat ? constructorArg(cls, p, 32) : null;
    if (cls && p && v) return { kind: 'value', expr: v, why: `it is passed to \`${cls.name}\` as \`${p.name}\`, which takes such a value` };
  }
  if (!called.length && EPOCHS_NAME.test(name)) return { kind: 'value', expr: '10', why: 'a number of epochs' };
  if (!called.length && DEVICE_NAME.test(name))
    return { kind: 'value', expr: "torch.device('cuda' if torch.cuda.is_available() else 'cpu')", why: 'a device' };
  for (const u of uses) {
    const cmp = u.parent?.type === 'comparison_operator' ? u.parent : null;
    const str = cmp?.namedChildren.find((c) => c?.type === 'string' && c.id !== u.id);
    if (str && /^(['"])[^'"\n]{1,40}\1$/.test(str.text))
      return { kind: 'value', expr: str.text, why: 'the first value the code compares it with' };
  }
  if (argOf.some((x) => /(?:^|\.)range$/.test(x.fn))) return { kind: 'value', expr: '3', why: 'it is passed to `range()`: a small count' };
  if (!called.length && !methods.length && attrs.length && uses.every((u) => u.parent?.type === 'attribute')) {
    const numeric = uses.every(
      (u) =>
        /^[\w.]+\s*[-+*/]|[-+*/]\s*[\w.]+$|^\w+\.\w+$/.test(u.parent?.parent?.text ?? '') ||
        u.parent?.parent?.type === 'binary_operator' ||
        u.parent?.parent?.type === 'argument_list',
    );
    if (numeric) return { kind: 'namespace', attrs: [...new Set(attrs)], why: 'only its attributes are read, as numbers' };
  }
  const feature = uses.some((u) => {
    const s = argumentOf(u);
    return s !== null && s.index === 0 && MODEL_NAME.test(s.fn);
  });
  if (feature) return { kind: 'input', why: 'it is passed to the model' };
  const target = uses.map(argumentOf).find((s) => s !== null && s.index === 1 && CRITERION_NAME.test(s.fn));
  if (target) return { kind: 'target', target: criterionTargetKind(a, target.fn), why: 'it is the target of the loss' };
  if (param && LOADER_NAME.test(name)) return { kind: 'loader', arity: 2, target: 'class', why: 'its name says it is a data loader' };
  if (called.length)
    return {
      kind: 'unknown',
      why: `it is called${CAMEL.test(name) ? ' like a class' : ''} but never defined, and what it returns cannot be inferred from the code`,
    };
  return { kind: 'unknown', why: 'its uses do not say what it holds' };
}

function criterionTargetKind(a: Analysis, criterion: string): TargetKind {
  const cls = criterionClass(a, criterion);
  return cls && /CrossEntropy|NLL/.test(cls) ? 'class' : 'float';
}
