// Harnesses: calls for what the snippet defines but never runs (a function called with arguments bound by their
// use, a model class instantiated and run on an input shaped by its first layer).
import { inferRole, type Role } from './infer.js';
import {
  callableOnOneInput,
  constructorArg,
  forwardInputs,
  linearFitSize,
  statedImageSizes,
  strideProbeSizes,
  usesConv,
} from './model-shape.js';
import { enclosingFunction } from './placement.js';
import { descendants, readsOf, type Analysis, type ClassInfo, type FunctionInfo } from './scope.js';
import { defineRole, type Definition, type SynthesisContext } from './synthesize.js';
import type { Missing } from './types.js';

export interface Harness {
  label: string;
  lines: string[];
  defs: Definition[];
  why: string;
}

/** Input sizes tried for image models besides those the report states and those derived from the model's strides. */
const DEFAULT_IMAGE_SIZES = [224, 64, 256];
const SMALL_IMAGE_SIZE = 32;

/** The report is about the backward pass: the harness also runs one. */
const BACKWARD_WORDS = /\.backward\(|\bbackward\b|\bgradient/i;

/**
 * For each of the (last two) model classes nothing instantiates: instantiate it and run it on an input shaped by
 * its first layer, at each image size the report states (or the defaults) when it is convolutional; with a backward
 * pass first when the report is about gradients. A constructor value that cannot be inferred stops it (missing).
 */
export function classHarnesses(
  a: Analysis,
  roots: ClassInfo[],
  body: string,
  reportText: string,
  fresh: (n: string) => string,
  release: (n: string) => void,
  missing: Missing[],
): Harness[] {
  const harnesses: Harness[] = [];
  const backward = BACKWARD_WORDS.test(reportText);
  const fit = linearFitSize(body);
  const sizes = [
    ...statedImageSizes(`${reportText}\n${body}`),
    ...(fit ? [fit] : []),
    ...DEFAULT_IMAGE_SIZES,
    ...strideProbeSizes(body),
    SMALL_IMAGE_SIZE,
  ].filter((v, i, all) => all.indexOf(v) === i);
  for (const root of [...roots].reverse().slice(0, 2)) {
    const conv = usesConv(a, root);
    for (const size of conv ? sizes : [32]) {
      const args = root.initParams.filter((p) => !p.default && !p.splat).map((p) => ({ p, v: constructorArg(root, p, size) }));
      const unknown = args.filter((x) => x.v === null).map((x) => x.p.name);
      if (unknown.length) {
        missing.push({
          name: root.name,
          why:
            `the report defines \`${root.name}\` but never instantiates it, and the value of ` +
            `${unknown.map((u) => `\`${u}\``).join(', ')} cannot be inferred`,
          blocking: false,
        });
        break;
      }
      const m = fresh('model');
      const x = fresh('x');
      const lines = [`${m} = ${root.name}(${args.map((y) => y.v).join(', ')})`];
      const variants: { label: string; lines: string[] }[] = [];
      if (callableOnOneInput(root)) {
        lines.push(`${x} = repgen_example_input(${m}, batch=2, size=${size})`);
        variants.push({ label: 'forward', lines: [...lines, `out = ${m}(${x})`] });
        if (backward)
          variants.unshift({
            label: 'forward + backward',
            lines: [...lines, `out = ${m}(${x})`, '(out[0] if isinstance(out, (tuple, list)) else out).float().mean().backward()'],
          });
      } else {
        // forward(self, image, landmarks): each input shaped by the sub-layer forward first calls it with.
        const inputs = forwardInputs(root);
        if (inputs) {
          const names = inputs.map((i) => fresh(i.param));
          inputs.forEach((i, k) => lines.push(`${names[k]} = repgen_example_input(${m}.${i.layer}, batch=2, size=${size})`));
          variants.push({ label: `forward on ${inputs.length} inputs`, lines: [...lines, `out = ${m}(${names.join(', ')})`] });
          names.forEach(release);
        } else variants.push({ label: 'instantiate', lines });
      }
      for (const v of variants) {
        harnesses.push({
          label: `harness: ${root.name}${conv ? `, ${size}×${size} input` : ''}, ${v.label}`,
          lines: v.lines,
          defs: [],
          why:
            `the report defines \`${root.name}\` but never runs it: ` +
            `instantiated${v.label === 'instantiate' ? '' : ` and called on an input shaped by its first layer (${v.label})`}`,
        });
      }
      release(m);
      release(x);
    }
  }
  return harnesses;
}

/**
 * A call to a function the snippet defines but never calls: each parameter is bound to a module-level name of
 * the same name, or synthesised from its role in the body; a parameter whose role cannot be read stops it.
 */
export function functionHarness(
  a: Analysis,
  fn: FunctionInfo,
  roots: ClassInfo[],
  ctx: SynthesisContext,
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
      const names =
        left.type === 'identifier' ? [left.text] : left.namedChildren.filter((c) => c?.type === 'identifier').map((c) => c?.text ?? '');
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
      if (root && rargs.every((x) => x !== null))
        defs.push({ name: v, lines: [`${v} = ${root.name}(${rargs.join(', ')})`], helpers: [], why: `the report's own \`${root.name}\`` });
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
    missing.push({
      name: `${fn.name}(${p.name})`,
      why:
        `the report defines \`${fn.name}\` but never calls it, and what its parameter \`${p.name}\` should ` +
        `be cannot be inferred (${role.kind === 'unknown' ? role.why : 'there is no model to shape it by'})`,
      blocking: false,
    });
    return null;
  }
  for (const p of fn.params) if (!p.default && !p.splat) args.push(bound.get(p.name) ?? 'None');
  void modelParam;
  const returns = [...descendants(bodyNode)].some(
    (n) => n.type === 'return_statement' && n.namedChildren.length > 0 && enclosingFunction(n)?.id === fn.node.id,
  );
  const call = `${fn.name}(${args.join(', ')})`;
  return {
    label: `harness: ${call}`,
    lines: [returns ? `print(${call})` : call],
    defs,
    why: `the report defines \`${fn.name}\` but never calls it: called with ${args.length ? 'arguments bound by their use in its body' : 'no arguments'}`,
  };
}

function rank(r: Role | undefined): number {
  const order = ['model', 'value', 'namespace', 'criterion', 'loader', 'input', 'target', 'optimizer', 'scheduler', 'unknown'];
  const i = r ? order.indexOf(r.kind) : -1;
  return i < 0 ? order.length : i;
}
