// Steps 3-6 of tier 0's completion: infer each undefined name's role, synthesise the shared definitions, build the
// harnesses for what the snippet never runs, and render one candidate per harness.
import type { Node } from 'web-tree-sitter';
import { classHarnesses, functionHarness, type Harness } from './harness.js';
import { inferRole, type Role } from './infer.js';
import { batchSize, constructorArg, moduleLevelModel } from './model-shape.js';
import { firstRunIndex } from './placement.js';
import { renderCandidate } from './render-candidate.js';
import { readsOf, type Analysis, type ClassInfo } from './scope.js';
import { defineRole, type Definition, type SynthesisContext } from './synthesize.js';
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
  const ctx: SynthesisContext = {
    model: modelAt?.name ?? needsModel,
    optimizer: [...roles].find(([, r]) => r.kind === 'optimizer')?.[0] ?? /^\s*(\w*optim\w*)\s*=/m.exec(body)?.[1] ?? null,
    floatFromLabels: /\.float\(\)/.test(body),
    outFeatures: /\.unsqueeze\(\s*1\s*\)|\.view\(\s*-1\s*,\s*1\s*\)|\.reshape\(\s*-1\s*,\s*1\s*\)/.test(body) ? 1 : 4,
    batch: batchSize(body),
  };
  const pending = [...roles]
    .filter(([, r]) => r.kind !== 'import')
    .sort((x, y) => DEFINITION_ORDER.indexOf(x[1].kind) - DEFINITION_ORDER.indexOf(y[1].kind));
  for (const [name, role] of pending) {
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
    // A module-level model the report never shows is the reporter's own: a stand-in could not show a bug in it.
    const def = role.kind === 'model' ? null : defineRole(name, role, ctx);
    if (!def) {
      const uses = a.undefined.get(name) ?? [];
      const why =
        role.kind === 'unknown'
          ? role.why
          : role.kind === 'model'
            ? `${role.why}, but the report never shows the model, and a stand-in could not show a bug in it`
            : `${role.why}, but there is no model in the code to shape it by`;
      missing.push({ name, why, blocking: uses.some((u) => u.fn === null) });
      continue;
    }
    base.push(def);
    let at = firstRunIndex(a, a.undefined.get(name) ?? []);
    if (def.lines.some((l) => ctx.model && new RegExp(`\\b${ctx.model}\\b`).test(l)) && modelAt && at <= modelAt.index)
      at = modelAt.index + 1;
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
  for (const fn of [...uncalled].reverse().slice(0, 3)) {
    const h = functionHarness(a, fn, roots, ctx, fresh, missing);
    if (h) harnesses.push(h);
  }
  if (!needsModel) harnesses.push(...classHarnesses(a, roots, body, reportText, fresh, (n) => taken.delete(n), missing));

  const plan = { a, body, imports, dataHelpers, base, baseAt };
  const candidates: Candidate[] = [];
  if (harnesses.length) {
    for (const h of harnesses.slice(0, MAX_CANDIDATES)) candidates.push(renderCandidate(plan, h));
    for (const h of harnesses) edits.push(`${h.label}: ${h.why}`);
  } else candidates.push(renderCandidate(plan, null));
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
