// Free tensors shaped by what consumes them (data-flow.ts): the input of a layer or model its constructor shapes, the
// (input, target) pair of a loss its signature shapes, and (x, y) data arrays whose rows feed a model and a loss.
import type { Node } from 'web-tree-sitter';
import { CONVENTIONAL_IMPORTS } from '../context/conventions.js';
import { bindingCall, identifiersIn, traceFlow, type Flow, type LossKind } from './data-flow.js';
import { firstRunIndex } from './placement.js';
import type { Analysis, NameUse } from './scope.js';
import { DATA_ROWS, type Definition } from './synthesize.js';

/** Rows of a tensor a loss or a layer gets directly: one small batch, apart from the sequence length and class count. */
const BATCH = 4;
/** Classes of a loss's synthetic (input, target) pair when nothing states them. */
const CLASSES = 10;

/** A definition of a free tensor: `after` are the names it reads that tier 0 defines too (they go first). */
export interface TensorDefinition extends Definition {
  after: string[];
}

const targetKind = (loss: LossKind) => (loss === 'class' ? 'class' : loss === 'probability' ? 'binary' : 'float');

/** The module a consumer calls, as an expression valid where `at` runs: its name when bound by then, else its constructor. */
function moduleExpr(a: Analysis, callee: Node, at: number, modelNames: ReadonlySet<string>): string | null {
  if (callee.type === 'call') return callee.text;
  if (callee.type !== 'identifier') return null;
  if (modelNames.has(callee.text)) return callee.text;
  const b = bindingCall(a, callee.text);
  if (!b) return null;
  if (b.index < at) return callee.text;
  // Bound further down: its constructor runs where the tensor is needed when everything it reads is bound there.
  const boundBefore = (n: string) =>
    Object.hasOwn(CONVENTIONAL_IMPORTS, n) ||
    a.statements
      .slice(0, at)
      .some((st) => new RegExp(`^(?:(?:class|def)\\s+${n}\\b|(?:from\\s+\\S+\\s+)?import\\b.*\\b${n}\\b|${n}\\s*=)`).test(st.text));
  return identifiersIn(b.call).every(boundBefore) ? b.call.text : null;
}

/** The root name of an expression (`a` of `a.float().to(d)`). */
function rootName(node: Node | null): string | null {
  let n = node;
  while (n) {
    if (n.type === 'identifier') return n.text;
    if (n.type === 'attribute') n = n.childForFieldName('object');
    else if (n.type === 'call') n = n.childForFieldName('function');
    else return null;
  }
  return null;
}

function positional(call: Node, i: number): Node | null {
  const args = call.childForFieldName('arguments')?.namedChildren.filter((c) => c && c.type !== 'keyword_argument' && c.type !== 'comment');
  return args?.[i] ?? null;
}

/** `numpy` data: the tensor as float64 first (numpy's default), float32 second, when the wrapper keeps numpy's dtype. */
function asData(name: string, expr: string, flow: Flow, why: string, after: string[], helpers: Definition['helpers']): TensorDefinition {
  if (!flow.numpy) return { name, lines: [`${name} = ${expr}`], helpers, why, after };
  const lines = [`${name} = repgen_numpy(${expr})`];
  const def: TensorDefinition = {
    name,
    lines,
    helpers: [...helpers, 'numpy'],
    why: `${why}; a numpy array, float64 as numpy makes it`,
    after,
  };
  if (flow.keepsDtype) def.variants = [{ label: `${name} float32`, lines: [`${name} = repgen_numpy(${expr}, float64=False)`] }];
  return def;
}

/**
 * Definitions for the free names whose uses reach a consumer. `uses` are every free name's uses; `modelNames` the
 * free names tier 0 defines as the model. Names whose consumer cannot shape them are left out (the caller reports them).
 */
export function planTensors(
  a: Analysis,
  names: string[],
  uses: ReadonlyMap<string, NameUse[]>,
  modelNames: ReadonlySet<string>,
): Map<string, TensorDefinition> {
  const flows = new Map<string, Flow>();
  for (const n of names) {
    const f = traceFlow(
      a,
      (uses.get(n) ?? []).map((u) => u.node),
      modelNames,
    );
    if (f) flows.set(n, f);
  }
  const at = (n: string) => firstRunIndex(a, uses.get(n) ?? []);
  const out = new Map<string, TensorDefinition>();
  // 1 inputs of layers and models: shaped by the module itself at run time.
  for (const [n, f] of flows) {
    if (f.consumer.kind !== 'module') continue;
    const { callee, position } = f.consumer;
    const attention = /MultiheadAttention/.test(bindingCall(a, callee.text)?.call.text ?? callee.text);
    if (position > (attention ? 2 : 0)) continue;
    const mod = moduleExpr(a, callee, at(n), modelNames);
    if (!mod) continue;
    const rows = f.dataset ? DATA_ROWS : BATCH;
    const what = f.dataset
      ? `rows of the data set whose batches \`${callee.text}\` is called on`
      : `the input \`${callee.text}\` is called on`;
    out.set(
      n,
      asData(n, `repgen_example_input(${mod}, batch=${rows})`, f, `${what}, shaped by its first layer`, modelNames.has(mod) ? [mod] : [], [
        'example_input',
      ]),
    );
  }
  // 2 targets of a loss: from the model's output on the inputs they come with, or from the loss's input when it exists.
  for (const [n, f] of flows) {
    if (f.consumer.kind !== 'loss' || f.consumer.position !== 1) continue;
    const kind = targetKind(f.consumer.loss);
    const partner = positional(f.consumer.call, 0);
    const inputs = f.dataset
      ? [...flows].find(([m, g]) => m !== n && g.dataset?.call.id === f.dataset?.call.id && g.consumer.kind === 'module' && out.has(m))
      : undefined;
    const mod = inputs && inputs[1].consumer.kind === 'module' ? moduleExpr(a, inputs[1].consumer.callee, at(n), modelNames) : null;
    if (inputs && mod) {
      const x = inputs[0];
      const def = asData(
        n,
        `repgen_targets_like(repgen_output(${mod}, ${x}), '${kind}')`,
        f,
        `the targets of the loss, one per row of \`${x}\``,
        [x],
        ['output', 'targets_like'],
      );
      out.set(n, def);
      continue;
    }
    const p = rootName(partner);
    const pairedInput = [...flows].some(
      ([m, g]) => m !== n && g.consumer.kind === 'loss' && g.consumer.call.id === f.consumer.call.id && g.consumer.position === 0,
    );
    const bound =
      !pairedInput &&
      p &&
      partner?.type === 'identifier' &&
      !flows.has(p) &&
      a.statements.some((st, i) => i < at(n) && new RegExp(`^${p}\\s*=`).test(st.text));
    if (bound && p) {
      out.set(
        n,
        asData(n, `repgen_targets_like(${p}, '${kind}')`, f, `the target of the loss on \`${p}\`, shaped by it`, [], ['targets_like']),
      );
    }
  }
  // 3 a loss's (input, target) both free: a pair of its signature's shapes.
  for (const [n, f] of flows) {
    if (f.consumer.kind !== 'loss' || f.consumer.position !== 0 || out.has(n)) continue;
    const target = [...flows].find(
      ([m, g]) => m !== n && g.consumer.kind === 'loss' && g.consumer.call.id === f.consumer.call.id && g.consumer.position === 1,
    );
    const loss = f.consumer.loss;
    const why = `the input of \`${f.consumer.call.childForFieldName('function')?.text ?? 'the loss'}\``;
    if (target && !out.has(target[0])) {
      const [y, g] = target;
      const input =
        loss === 'class'
          ? `torch.randn(${BATCH}, ${CLASSES})`
          : loss === 'probability'
            ? `torch.rand(${BATCH}, 1)`
            : `torch.randn(${BATCH}, 1)`;
      const tgt =
        loss === 'class'
          ? `torch.randint(0, ${CLASSES}, (${BATCH},))`
          : loss === 'probability'
            ? `torch.randint(0, 2, (${BATCH}, 1)).float()`
            : `torch.randn(${BATCH}, 1)`;
      const shape =
        loss === 'class' ? `(${BATCH}, ${CLASSES}) scores` : `(${BATCH}, 1) ${loss === 'probability' ? 'probabilities' : 'values'}`;
      out.set(n, asData(n, input, f, `${why}: ${shape}, as its signature takes`, [], []));
      const tWhy =
        loss === 'class'
          ? `class ids in [0, ${CLASSES}), one per row of \`${n}\``
          : `${loss === 'probability' ? '0/1 ' : ''}floats of \`${n}\`'s shape`;
      out.set(y, asData(y, tgt, g, `the target of that loss: ${tWhy}`, [n], []));
      continue;
    }
    // The target exists (bound before): scores over as many classes as its largest id, or values of its shape.
    const t = rootName(positional(f.consumer.call, 1));
    if (t && !flows.has(t) && a.statements.some((st, i) => i < at(n) && new RegExp(`^${t}\\s*=`).test(st.text))) {
      const expr = loss === 'class' ? `torch.randn(len(${t}), int(${t}.max()) + 1)` : `torch.rand_like(torch.as_tensor(${t}).float())`;
      out.set(n, asData(n, expr, f, `${why}, shaped by its target \`${t}\``, [], []));
    }
  }
  return out;
}
