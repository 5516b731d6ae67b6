// Where a free value ends up: followed through the calls that only carry it (`torch.from_numpy(X)`, `.float()`,
// `TensorDataset(X, y)`, `DataLoader(ds)`, `for xb, yb in loader`, `train_test_split(X, y)`) to the call that consumes
// it: a layer or model (`model(xb)`, `attn(query, key, value)`) or a loss (`F.cross_entropy(logits, target)`).
import type { Node } from 'web-tree-sitter';
import { descendants, readsOf, type Analysis } from './scope.js';

/** What a loss needs of its (input, target): class ids, floats of the input's shape, or probabilities and 0/1 floats. */
export type LossKind = 'class' | 'float' | 'probability';

/** Losses by the name they are called or built by (`F.cross_entropy`, `nn.CrossEntropyLoss()`). */
const LOSSES: [RegExp, LossKind][] = [
  [/^(?:cross_entropy|CrossEntropyLoss|nll_loss|NLLLoss|multi_margin_loss|MultiMarginLoss)$/, 'class'],
  [/^(?:binary_cross_entropy|BCELoss)$/, 'probability'],
  [/^(?:mse_loss|MSELoss|l1_loss|L1Loss|smooth_l1_loss|SmoothL1Loss|huber_loss|HuberLoss|kl_div|KLDivLoss)$/, 'float'],
  [/^(?:binary_cross_entropy_with_logits|BCEWithLogitsLoss)$/, 'float'],
];

/** Calls that hand their first argument on, reshaped or converted: the consumer further on decides its shape. */
const CARRIERS = new RegExp(
  [
    '^(?:torch\\.)?(?:from_numpy|tensor|as_tensor|Tensor|FloatTensor|DoubleTensor|LongTensor|IntTensor)$',
    '^(?:np|numpy)\\.(?:array|asarray)$',
    '(?:^|\\.)Variable$',
  ].join('|'),
);
/** Calls whose result has the shape of their first argument. */
const ELEMENTWISE =
  /^(?:F|torch\.nn\.functional|torch)\.(?:softmax|log_softmax|sigmoid|relu|tanh|dropout|normalize|exp|log|abs|clamp|leaky_relu|gelu)$/;
/** Methods that hand the value on (converted, moved, reshaped). */
const PASS_METHODS = new RegExp(
  `^(?:${[
    'float|double|half|long|int|type|to|cuda|cpu|detach|clone|astype|numpy|to_numpy|requires_grad_',
    'view|reshape|unsqueeze|squeeze|permute|transpose|contiguous|flatten',
    'log|exp|sigmoid|softmax|log_softmax|relu|tanh|abs|clamp',
  ].join('|')})$`,
);
/** Wrappers a `for` loop iterates through. */
const ITERATORS = /(?:^|\.)(?:enumerate|tqdm|trange|iter)$/;

/** Where a free value is consumed. */
export type Consumer =
  { kind: 'module'; call: Node; callee: Node; position: number } | { kind: 'loss'; call: Node; loss: LossKind; position: number };

export interface Flow {
  consumer: Consumer;
  /** The value went through `torch.from_numpy` / `np.array` / `torch.tensor`: the free name holds a numpy array. */
  numpy: boolean;
  /** It went through `torch.from_numpy` or `torch.tensor`, which keep numpy's dtype (float64 unless said otherwise). */
  keepsDtype: boolean;
  /** The `TensorDataset(...)` call it is one element of, and which one: rows of a data set, not one batch. */
  dataset: { call: Node; element: number } | null;
}

/** The loss kind of a callee (`F.mse_loss`, an `nn.MSELoss()` bound to a name, `nn.MSELoss()` inline). */
export function lossKindOf(a: Analysis, callee: Node): LossKind | null {
  const text = callee.type === 'call' ? (callee.childForFieldName('function')?.text ?? '') : callee.text;
  const last = text.split('.').at(-1) ?? '';
  const named = (n: string) => LOSSES.find(([re]) => re.test(n))?.[1] ?? null;
  if (callee.type === 'call') return /^(?:nn|torch\.nn)\.\w+$/.test(text) ? named(last) : null;
  if (/^(?:F|torch\.nn\.functional|functional)\.\w+$/.test(text)) return named(last);
  if (callee.type === 'identifier') {
    const ctor = bindingCall(a, callee.text);
    const fn = ctor?.call.childForFieldName('function')?.text ?? '';
    return /^(?:nn|torch\.nn)\.\w+$/.test(fn) ? named(fn.split('.').at(-1) ?? '') : null;
  }
  return null;
}

/** The call a name is bound to at module level (`attn = nn.MultiheadAttention(32, 4)`), with the statement's index. */
export function bindingCall(a: Analysis, name: string): { call: Node; index: number } | null {
  for (let i = 0; i < a.statements.length; i += 1) {
    const st = a.statements[i] as Node;
    const asg = st.type === 'expression_statement' ? st.namedChildren[0] : null;
    if (asg?.type !== 'assignment' || asg.childForFieldName('left')?.text !== name) continue;
    const right = asg.childForFieldName('right');
    return right?.type === 'call' ? { call: right, index: i } : null;
  }
  return null;
}

/** A library's model factory (`timm.create_model`, `build_model`, `get_network`): what it returns is a model. */
const MODEL_FACTORY = /(?:^|\.)(?:create|build|get|make|init)_(?:model|network|net|backbone|encoder)$/;

/**
 * Whether a callee is a layer or model: bound to `nn.X(...)`, to one of the snippet's nn.Module classes, to a model
 * factory's result, or built inline.
 */
export function isModuleCallee(a: Analysis, callee: Node, modelNames: ReadonlySet<string>): boolean {
  const modules = new Set(a.classes.filter((c) => c.isModule).map((c) => c.name));
  const ctorIsModule = (call: Node) => {
    const fn = call.childForFieldName('function')?.text ?? '';
    return (
      (/^(?:nn|torch\.nn)\.[A-Z]\w*$/.test(fn) && !/Loss$/.test(fn)) ||
      modules.has(fn) ||
      /^(?:models|torchvision\.models)\.\w+$/.test(fn) ||
      MODEL_FACTORY.test(fn)
    );
  };
  if (callee.type === 'call') return ctorIsModule(callee);
  if (callee.type !== 'identifier') return false;
  if (modelNames.has(callee.text)) return true;
  const b = bindingCall(a, callee.text);
  return !!b && ctorIsModule(b.call);
}

function positionalIndex(list: Node, arg: Node): number {
  return list.namedChildren.filter((c) => c && c.type !== 'keyword_argument' && c.type !== 'comment').findIndex((c) => c?.id === arg.id);
}

function scopeOf(node: Node): Node {
  let n: Node | null = node.parent;
  while (n && n.type !== 'function_definition' && n.type !== 'module') n = n.parent;
  return n ?? node;
}

/** Names a `for` loop binds from each element its iterable yields (`for i, (x, y) in enumerate(loader)` → [x, y]). */
function loopElements(forNode: Node, enumerated: boolean): Node[] {
  let left = forNode.childForFieldName('left');
  if (!left) return [];
  if (enumerated && (left.type === 'pattern_list' || left.type === 'tuple_pattern') && left.namedChildren.length === 2)
    left = left.namedChildren[1] ?? left;
  if (left.type === 'identifier') return [left];
  return left.namedChildren.filter((c): c is Node => c !== null);
}

interface State {
  node: Node;
  numpy: boolean;
  keepsDtype: boolean;
  dataset: { call: Node; element: number } | null;
  /** Element of the container being followed (a data set's row part), or null for the value itself. */
  element: number | null;
}

/**
 * Follows a free name's uses to the call that consumes the value. `modelNames` are free names already known to be
 * the model (they are consumers too). Null when no use reaches a layer, a model or a loss within a few steps.
 */
export function traceFlow(a: Analysis, uses: Node[], modelNames: ReadonlySet<string>): Flow | null {
  const queue: State[] = uses.map((u) => ({ node: u, numpy: false, keepsDtype: false, dataset: null, element: null }));
  const seen = new Set<number>();
  for (let steps = 0; queue.length && steps < 200; steps += 1) {
    const s = queue.shift() as State;
    if (seen.has(s.node.id)) continue;
    seen.add(s.node.id);
    const p = s.node.parent;
    if (!p) continue;
    const follow = (node: Node, change: Partial<State> = {}) => queue.push({ ...s, node, ...change });
    const followName = (target: Node, change: Partial<State> = {}) => {
      if (target.type !== 'identifier') return;
      const scope = scopeOf(target);
      for (const r of readsOf(scope, target.text)) if (r.startIndex > target.endIndex) follow(r, change);
    };
    if (p.type === 'argument_list' || (p.type === 'keyword_argument' && p.parent?.type === 'argument_list')) {
      const list = p.type === 'argument_list' ? p : (p.parent as Node);
      const call = list.parent;
      const callee = call?.childForFieldName('function');
      if (call?.type !== 'call' || !callee) continue;
      const arg = p.type === 'argument_list' ? s.node : p;
      const keyword = p.type === 'keyword_argument' ? p.childForFieldName('name')?.text : null;
      const pos = keyword ? -1 : positionalIndex(list, arg);
      const fn = callee.text;
      if (s.element === null && pos >= 0 && isModuleCallee(a, callee, modelNames))
        return { consumer: { kind: 'module', call, callee, position: pos }, numpy: s.numpy, keepsDtype: s.keepsDtype, dataset: s.dataset };
      const loss = s.element === null && pos >= 0 && pos <= 1 ? lossKindOf(a, callee) : null;
      if (loss)
        return { consumer: { kind: 'loss', call, loss, position: pos }, numpy: s.numpy, keepsDtype: s.keepsDtype, dataset: s.dataset };
      if (pos === 0 && CARRIERS.test(fn)) {
        const keeps = /(?:from_numpy|\.tensor|^tensor|as_tensor)$/.test(fn);
        follow(call, { numpy: s.numpy || !/Variable$/.test(fn), keepsDtype: s.keepsDtype || keeps });
      } else if (pos === 0 && ELEMENTWISE.test(fn)) follow(call);
      else if (/(?:^|\.)TensorDataset$/.test(fn) && pos >= 0 && s.element === null)
        follow(call, { element: pos, dataset: { call, element: pos } });
      else if (/(?:^|\.)DataLoader$/.test(fn) && (pos === 0 || keyword === 'dataset')) follow(call);
      else if (ITERATORS.test(fn) && pos === 0) follow(call);
      else if (/(?:^|\.)train_test_split$/.test(fn) && pos >= 0 && s.element === null) {
        // `X_train, X_test, y_train, y_test = train_test_split(X, y)`: the i-th array's training part is the (2i)-th name.
        const asg = call.parent?.type === 'assignment' ? call.parent : null;
        const left = asg?.childForFieldName('left');
        const train = left?.namedChildren.filter((c): c is Node => c !== null)[2 * pos];
        if (train) followName(train);
      }
      continue;
    }
    if (p.type === 'attribute' && p.childForFieldName('object')?.id === s.node.id) {
      const method = p.childForFieldName('attribute')?.text ?? '';
      if (p.parent?.type === 'call' && PASS_METHODS.test(method)) follow(p.parent);
      else if (/^(?:values|T)$/.test(method)) follow(p);
      continue;
    }
    if (p.type === 'assignment' && p.childForFieldName('right')?.id === s.node.id) {
      const left = p.childForFieldName('left');
      if (left?.type === 'identifier') followName(left);
      continue;
    }
    if (
      (p.type === 'for_statement' || p.type === 'for_in_clause') &&
      p.childForFieldName('right')?.id === s.node.id &&
      s.element !== null
    ) {
      const enumerated = /(?:^|\.)enumerate\s*\(/.test(s.node.text);
      const target = loopElements(p, enumerated)[s.element];
      if (target) for (const r of readsOf(p.childForFieldName('body') ?? p, target.text)) follow(r, { element: null });
    }
  }
  return null;
}

/** Every identifier an expression reads (for checking that what it needs is bound where it goes). */
export function identifiersIn(node: Node): string[] {
  const out = new Set<string>();
  for (const n of descendants(node)) {
    if (n.type !== 'identifier') continue;
    const p = n.parent;
    if (p?.type === 'attribute' && p.childForFieldName('attribute')?.id === n.id) continue;
    if (p?.type === 'keyword_argument' && p.childForFieldName('name')?.id === n.id) continue;
    out.add(n.text);
  }
  return [...out];
}
