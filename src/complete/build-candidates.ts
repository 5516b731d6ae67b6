// Steps 3-6 of tier 0's completion: infer each undefined name's role, synthesise the shared definitions, build the
// harnesses for what the snippet never runs, and render one candidate per harness.
import type { Node } from 'web-tree-sitter';
import { classHarnesses, functionHarness, type Harness } from './harness.js';
import { inferRole, type Role } from './infer.js';
import { kerasDataRole } from './keras-data.js';
import { batchSize, constructorArg, moduleLevelModel } from './model-shape.js';
import { firstRunIndex } from './placement.js';
import { renderCandidate, type RenderPlan } from './render-candidate.js';
import { reportedStatement, standInWidth, unseenFramesOf } from './report-anchors.js';
import { readsOf, type Analysis, type ClassInfo } from './scope.js';
import { defineRole, type Definition, type SynthesisContext } from './synthesize.js';
import { planTensors, type TensorDefinition } from './tensor-plans.js';
import { MAX_CANDIDATES, type Candidate, type CompletionInput, type Missing } from './types.js';

/** The order roles are defined in: what later definitions are shaped by comes first. */
const DEFINITION_ORDER: Role['kind'][] = [
  'value',
  'namespace',
  'module_stub',
  'module_fn',
  'model',
  'criterion',
  'input',
  'target',
  'loader',
  'optimizer',
  'scheduler',
];

/**
 * A name the code uses as a module (`timm.create_model(...)`) without importing it, that is one of the project's own
 * top-level packages: the report is about that project, so `import timm` is what the reporter left out. Likewise a
 * name one of those packages exports.
 */
function projectImport(name: string, uses: readonly { node: Node }[], input: CompletionInput): Role | null {
  if (!uses.length) return null;
  const asObject = (u: { node: Node }) =>
    u.node.parent?.type === 'attribute' && u.node.parent.childForFieldName('object')?.id === u.node.id;
  if (input.packages?.includes(name)) return uses.every(asObject) ? { kind: 'import', line: `import ${name}` } : null;
  // A name the project exports, called or used as an object (`parse_shape(x, 'b c')`, `MultilabelExactMatch(num_labels=3)`):
  // the reporter left out its import. A name only read as a value (`x`, `data`) is never taken from the project.
  const from = Object.hasOwn(input.exports ?? {}, name) ? input.exports?.[name] : undefined;
  const called = (u: { node: Node }) => u.node.parent?.type === 'call' && u.node.parent.childForFieldName('function')?.id === u.node.id;
  return from && uses.every((u) => called(u) || asObject(u)) ? { kind: 'import', line: `from ${from} import ${name}` } : null;
}

export function buildCandidates(
  a: Analysis,
  body: string,
  input: CompletionInput,
  dataHelpers: string[],
  edits: string[],
): { candidates: Candidate[]; missing: Missing[] } {
  const missing: Missing[] = [];
  const imports: string[] = [];
  const roles = new Map<string, Role>();
  const helperNames = new Set(dataHelpers.flatMap((h) => [...h.matchAll(/^(?:class|def)\s+(\w+)/gm)].map((m) => m[1] ?? '')));
  for (const [name, uses] of a.undefined) {
    if (helperNames.has(name)) continue;
    const role =
      projectImport(name, uses, input) ?? kerasDataRole(name, uses, body) ?? inferRole(a, name, withParameterUses(uses.map((u) => u.node)));
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

  // Free tensors whose uses say nothing by name are shaped by what consumes them (a layer, a model, a loss).
  const modelNames = new Set([...roles].filter(([, r]) => r.kind === 'model').map(([n]) => n));
  // What runs after the statement the report's traceback ends in never ran: a name used only there blocks nothing.
  const reportedAt = reportedStatement(a, input.tracebackModuleLines ?? []) ?? Number.POSITIVE_INFINITY;
  const blocks = (name: string) => {
    const uses = a.undefined.get(name) ?? [];
    return uses.some((u) => u.fn === null) && firstRunIndex(a, uses) <= reportedAt;
  };
  // The traceback runs through code of the reporter's that the report does not show: a stand-in cannot show its failure.
  const unseen = unseenFramesOf(a, reportText);

  const base: Definition[] = [];
  const baseAt = new Map<string, number>();
  const ctx: SynthesisContext = {
    model: modelAt?.name ?? needsModel,
    optimizer: [...roles].find(([, r]) => r.kind === 'optimizer')?.[0] ?? /^\s*(\w*optim\w*)\s*=/m.exec(body)?.[1] ?? null,
    floatFromLabels: /\.float\(\)/.test(body),
    outFeatures: /\.unsqueeze\(\s*1\s*\)|\.view\(\s*-1\s*,\s*1\s*\)|\.reshape\(\s*-1\s*,\s*1\s*\)/.test(body) ? 1 : 4,
    batch: batchSize(body),
  };
  // Names the roles leave unshaped (no role, or an input/target with no model variable to shape it by).
  const unshaped = [...roles].filter(([, r]) => r.kind === 'unknown' || ((r.kind === 'input' || r.kind === 'target') && !ctx.model));
  const tensors = planTensors(
    a,
    unshaped.map(([n]) => n),
    a.undefined,
    modelNames,
  );
  const pending = [...roles]
    .filter(([, r]) => r.kind !== 'import')
    .sort((x, y) => DEFINITION_ORDER.indexOf(x[1].kind) - DEFINITION_ORDER.indexOf(y[1].kind));
  for (const [name, role] of pending) {
    if (tensors.has(name)) continue;
    if (role.kind === 'model' && roots.length) {
      const root = roots[roots.length - 1] as ClassInfo;
      const args = root.initParams.filter((p) => !p.default && !p.splat).map((p) => constructorArg(root, p, 32));
      if (args.every((x) => x !== null)) {
        base.push({
          name,
          lines: [`${name} = ${root.name}(${args.join(', ')})`],
          helpers: [],
          why: `${role.why}; the report's own \`${root.name}\``,
        });
        baseAt.set(name, firstRunIndex(a, a.undefined.get(name) ?? []));
        continue;
      }
    }
    // A model the report never shows: a stand-in lets the code around it run (what it feeds the model, the loss on
    // its output), unless the traceback fails inside the reporter's unseen code, which a stand-in could not show.
    const def =
      role.kind === 'model'
        ? unseen.length
          ? null
          : defineRole(name, role, { ...ctx, outFeatures: standInWidth(body, ctx.outFeatures) })
        : defineRole(name, role, ctx);
    if (!def) {
      const why =
        role.kind === 'unknown'
          ? role.why
          : role.kind === 'model'
            ? `${role.why}, but the report never shows the model, and the traceback fails inside code it does not show (${quoted(unseen)})`
            : `${role.why}, but there is no model in the code to shape it by`;
      missing.push({ name, why, blocking: blocks(name) });
      continue;
    }
    base.push(def);
    let at = firstRunIndex(a, a.undefined.get(name) ?? []);
    if (def.lines.some((l) => ctx.model && new RegExp(`\\b${ctx.model}\\b`).test(l)) && modelAt && at <= modelAt.index)
      at = modelAt.index + 1;
    baseAt.set(name, at);
  }
  placeTensors(a, tensors, base, baseAt);
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
  for (const fn of [...uncalled].reverse().slice(0, 3)) {
    const h = functionHarness(a, fn, roots, ctx, fresh, missing);
    if (h) harnesses.push(h);
  }
  if (!needsModel) harnesses.push(...classHarnesses(a, roots, body, reportText, fresh, (n) => taken.delete(n), missing));

  const candidates: Candidate[] = [];
  for (const { plan, label } of variantPlans({ a, body, imports, dataHelpers, base, baseAt })) {
    const rendered = harnesses.length ? harnesses.map((h) => renderCandidate(plan, h)) : [renderCandidate(plan, null)];
    candidates.push(...rendered.map((c) => (label ? { ...c, label: `${c.label}; ${label}` } : c)));
  }
  for (const h of harnesses) edits.push(`${h.label}: ${h.why}`);
  return { candidates: missing.some((m) => m.blocking) ? [] : candidates.slice(0, MAX_CANDIDATES), missing: dedupeMissing(missing) };
}

/**
 * Adds the tensor definitions after what they read, each before the first statement that runs its name; a model
 * definition one of them reads moves up to it.
 */
function placeTensors(a: Analysis, tensors: Map<string, TensorDefinition>, base: Definition[], baseAt: Map<string, number>): void {
  const done = new Set<string>();
  const add = (d: TensorDefinition, depth = 0): void => {
    if (done.has(d.name) || depth > 4) return;
    done.add(d.name);
    let at = firstRunIndex(a, a.undefined.get(d.name) ?? []);
    for (const dep of d.after) {
      const t = tensors.get(dep);
      if (t) add(t, depth + 1);
      const depAt = baseAt.get(dep);
      if (depAt === undefined || depAt <= at) continue;
      if (t) at = depAt;
      else baseAt.set(dep, at);
    }
    base.push(d);
    baseAt.set(d.name, at);
  };
  for (const d of tensors.values()) add(d);
}

/**
 * The plans to render: the definitions as they are, then, when some have variants (numpy data as float64, then
 * float32), one plan per variant with every varied definition taking its variant of that rank.
 */
function variantPlans(plan: RenderPlan): { plan: RenderPlan; label: string | null }[] {
  const ranks = Math.max(0, ...plan.base.map((d) => d.variants?.length ?? 0));
  const out: { plan: RenderPlan; label: string | null }[] = [{ plan, label: null }];
  for (let r = 0; r < ranks; r += 1) {
    const labels: string[] = [];
    const base = plan.base.map((d) => {
      const v = d.variants?.[r];
      if (!v) return d;
      labels.push(v.label);
      return { ...d, lines: v.lines };
    });
    out.push({ plan: { ...plan, base }, label: labels.join(', ') });
  }
  return out;
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

function quoted(names: string[]): string {
  return names.map((n) => `\`${n}\``).join(', ');
}

function dedupeMissing(missing: Missing[]): Missing[] {
  const seen = new Set<string>();
  return missing.filter((m) => (seen.has(m.name) ? false : (seen.add(m.name), true)));
}
