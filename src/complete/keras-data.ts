// Keras reports train on data they never show: `model.fit(X_train, y_train, …)`. The model the snippet builds says
// what X must be (its input shape: `Input(shape=…)`, `input_shape=`, `input_dim=`, or a `x.reshape(-1, …)` the code
// applies), and the loss it compiles with and its last Dense layer say what y must be (class ids, one-hot rows, 0/1,
// floats). Random arrays of those shapes let the report's own code run to its bug (issue 29 item 4). Pure.
import type { Node } from 'web-tree-sitter';
import type { Role } from './infer.js';

/** Model methods that take (x, y) as their first two arguments. */
const FIT_METHODS = /^(?:fit|evaluate|train_on_batch|test_on_batch|predict|predict_on_batch|fit_generator)$/;
const SAMPLES = 32;

/** Which of (x, y) a use of a name is: an argument of `.fit(…)` and kin, or of `validation_data=(…)`. */
function dataSlot(node: Node): 'x' | 'y' | null {
  const p = node.parent;
  if (!p) return null;
  if (p.type === 'keyword_argument') {
    const key = p.childForFieldName('name')?.text;
    const call = p.parent?.parent;
    if ((key === 'x' || key === 'y') && call?.type === 'call' && fitCall(call)) return key;
    return null;
  }
  if (p.type === 'tuple' && p.parent?.type === 'keyword_argument' && p.parent.childForFieldName('name')?.text === 'validation_data') {
    const i = p.namedChildren.findIndex((c) => c?.id === node.id);
    return i === 0 ? 'x' : i === 1 ? 'y' : null;
  }
  if (p.type !== 'argument_list' || p.parent?.type !== 'call' || !fitCall(p.parent)) return null;
  const positional = p.namedChildren.filter((c) => c?.type !== 'keyword_argument');
  const i = positional.findIndex((c) => c?.id === node.id);
  return i === 0 ? 'x' : i === 1 && !/predict/.test(fitName(p.parent)) ? 'y' : null;
}

function fitName(call: Node): string {
  const fn = call.childForFieldName('function');
  return fn?.type === 'attribute' ? (fn.childForFieldName('attribute')?.text ?? '') : '';
}

function fitCall(call: Node): boolean {
  return FIT_METHODS.test(fitName(call));
}

/** Integer dimensions of a shape tuple's text (`28, 28, 1`); a `None` time axis becomes 8; null when one is a name. */
function dims(text: string): number[] | null {
  const parts = text
    .split(',')
    .map((d) => d.trim())
    .filter(Boolean);
  if (!parts.length) return null;
  const out = parts.map((d) => (d === 'None' ? 8 : /^\d+$/.test(d) ? Number(d) : NaN));
  return out.every((n) => Number.isInteger(n) && n > 0) ? out : null;
}

/** The input shape of the model the code builds (the first one it states), without the batch axis. */
export function kerasInputShape(body: string, name: string): number[] | null {
  const reshape = new RegExp(String.raw`\b${name}\.reshape\(\s*\(?\s*-1\s*,([^()]*)\)`).exec(body);
  if (reshape?.[1]) return dims(reshape[1].replace(/\)\s*$/, ''));
  const forms = [
    /\bbatch_input_shape\s*=\s*[([]\s*None\s*,([^()[\]]*)[)\]]/,
    /\binput_shape\s*=\s*[([]([^()[\]]*)[)\]]/,
    /\bInput\(\s*(?:shape\s*=\s*)?[([]([^()[\]]*)[)\]]/,
  ];
  for (const re of forms) {
    const m = re.exec(body);
    if (m?.[1] !== undefined) return dims(m[1]);
  }
  const dim = /\binput_dim\s*=\s*(\d+)/.exec(body);
  return dim?.[1] ? [Number(dim[1])] : null;
}

/** The loss the model compiles with, lower-cased without underscores (`sparsecategoricalcrossentropy`). */
function kerasLoss(body: string): string {
  const m = /\.compile\([^]*?\bloss\s*=\s*(?:['"]([\w]+)['"]|(?:[\w.]+\.)?(\w+)\s*\()/.exec(body);
  return (m?.[1] ?? m?.[2] ?? '').toLowerCase().replace(/_/g, '');
}

/** Units of the model's last Dense layer, when written as a number. */
function lastUnits(body: string): number | null {
  const all = [...body.matchAll(/\bDense\(\s*(?:units\s*=\s*)?(\w+)/g)].map((m) => m[1] ?? '');
  const last = all.at(-1);
  return last && /^\d+$/.test(last) ? Number(last) : null;
}

/**
 * The role of an undefined name the code passes to a Keras model's `fit`/`evaluate`/`predict` as x or y, or null
 * when it is not such a name, the code is not Keras code, or its shape cannot be read from the model.
 */
export function kerasDataRole(name: string, uses: readonly { node: Node }[], body: string): Role | null {
  if (!/\.compile\(|\bkeras\b|\bSequential\(/.test(body)) return null;
  const slots = new Set(uses.map((u) => dataSlot(u.node)).filter((s) => s !== null));
  // `x = x.reshape(-1, 28, 28, 1)` then `model.fit(x, y)`: the undefined use is the reshape, the fit use comes later.
  const reshaped = uses.some(
    (u) => u.node.parent?.type === 'attribute' && u.node.parent.childForFieldName('attribute')?.text === 'reshape',
  );
  if (reshaped && new RegExp(String.raw`\.(?:fit|evaluate|predict)\(\s*${name}\b`).test(body)) slots.add('x');
  if (slots.size !== 1) return null;
  if (slots.has('x')) {
    const shape = kerasInputShape(body, name);
    if (!shape) return null;
    return {
      kind: 'value',
      expr: `np.random.rand(${[SAMPLES, ...shape].join(', ')}).astype('float32')`,
      why: `it is the model's input: ${SAMPLES} random samples of the input shape (${shape.join(', ')}) the code gives the model`,
    };
  }
  const units = lastUnits(body);
  const u = units ?? 10;
  const of = units === null ? `${u} outputs (RepGen's choice: the last Dense layer's size is not a number in the code)` : `${u} outputs`;
  const loss = kerasLoss(body);
  if (/sparsecategorical/.test(loss))
    return {
      kind: 'value',
      expr: `np.random.randint(0, ${u}, size=(${SAMPLES},))`,
      why: `class ids for a sparse categorical loss over ${of}`,
    };
  if (/categorical/.test(loss))
    return {
      kind: 'value',
      expr: `np.eye(${u}, dtype='float32')[np.random.randint(0, ${u}, size=${SAMPLES})]`,
      why: `one-hot rows for a categorical loss over ${of}`,
    };
  if (/binary/.test(loss))
    return {
      kind: 'value',
      expr: `np.random.randint(0, 2, size=(${SAMPLES}, ${u})).astype('float32')`,
      why: `0/1 labels for a binary loss over ${of}`,
    };
  return { kind: 'value', expr: `np.random.rand(${SAMPLES}, ${u}).astype('float32')`, why: `float targets for ${of}` };
}
