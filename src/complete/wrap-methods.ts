// A report that pastes the inside of an nn.Module (its `__init__` lines, `def forward(self, x)`, the lines of a
// forward body) without the class around it: the pieces are put back into a class, and the `self.*` layers the code
// calls but never shows become stand-ins that keep their input's shape. The class is then a model the snippet
// defines and never runs, which the harness instantiates and calls.
import type { Node } from 'web-tree-sitter';
import { CONVENTIONAL_IMPORTS } from '../context/conventions.js';
import { MARK } from './python-helpers.js';
import { descendants, paramsOf, type Analysis } from './scope.js';

export interface WrappedMethods {
  code: string;
  edits: string[];
}

const INDENT = '    ';
const CAMEL = /^[A-Z][A-Za-z0-9]*[a-z][A-Za-z0-9]*$/;

function defOf(st: Node): Node | null {
  const d = st.type === 'decorated_definition' ? st.childForFieldName('definition') : st;
  return d?.type === 'function_definition' ? d : null;
}

/**
 * `def m(self, ...)` at module level that is a module's method: `forward`/`__init__`, or one that uses `self.x`. A
 * function that only takes a `self` it never reads (a method copied out to be called alone) stays a function.
 */
function isPastedMethod(st: Node): boolean {
  const d = defOf(st);
  if (!d || paramsOf(d)[0]?.name !== 'self') return false;
  const name = d.childForFieldName('name')?.text ?? '';
  return name === 'forward' || name === '__init__' || /\bself\.\w+/.test(d.childForFieldName('body')?.text ?? '');
}

/** Whether a statement reads `self` (outside any nested definition that binds it). */
function readsSelf(st: Node): boolean {
  for (const n of descendants(st)) if (n.type === 'identifier' && n.text === 'self' && n.parent?.type !== 'parameters') return true;
  return false;
}

/** `self.x = ...` (or `self.x: T = ...`). */
function selfAssignment(st: Node): string | null {
  const asg = st.type === 'expression_statement' ? st.namedChildren[0] : null;
  if (asg?.type !== 'assignment') return null;
  const left = asg.childForFieldName('left');
  if (left?.type !== 'attribute' || left.childForFieldName('object')?.text !== 'self') return null;
  return left.childForFieldName('attribute')?.text ?? null;
}

function isSuperInit(st: Node): boolean {
  return st.type === 'expression_statement' && /^super\s*\([^)]*\)\s*\.\s*__init__\s*\(/.test(st.text);
}

function quoted(names: string[]): string {
  return names.map((n) => `\`${n}\``).join(', ');
}

function indented(text: string, by: string): string[] {
  return text.split('\n').map((l) => (l.trim() ? by + l : l));
}

/** Attributes of `self` that are called (`self.conv1(x)`), each with whether every call passes one positional argument. */
function calledSelfAttributes(nodes: Node[]): Map<string, boolean> {
  const out = new Map<string, boolean>();
  for (const st of nodes) {
    for (const n of descendants(st)) {
      if (n.type !== 'call') continue;
      const fn = n.childForFieldName('function');
      if (fn?.type !== 'attribute' || fn.childForFieldName('object')?.text !== 'self') continue;
      const attr = fn.childForFieldName('attribute')?.text ?? '';
      const args = n.childForFieldName('arguments')?.namedChildren.filter((c) => c && c.type !== 'comment') ?? [];
      const one = args.length === 1 && args[0]?.type !== 'keyword_argument';
      out.set(attr, (out.get(attr) ?? true) && one);
    }
  }
  return out;
}

/** Attributes assigned on `self` anywhere (`self.conv1 = ...`, `setattr` aside). */
function assignedSelfAttributes(nodes: Node[]): Set<string> {
  const out = new Set<string>();
  for (const st of nodes) {
    for (const n of descendants(st)) {
      if (n.type !== 'assignment') continue;
      const left = n.childForFieldName('left');
      if (left?.type === 'attribute' && left.childForFieldName('object')?.text === 'self')
        out.add(left.childForFieldName('attribute')?.text ?? '');
    }
  }
  return out;
}

/** Names a run of statements reads before binding them, that nothing else provides: the parameters of the forward they are the body of. */
function freeInputs(a: Analysis, nodes: Node[]): string[] {
  const out: string[] = [];
  const bound = new Set<string>();
  for (const st of nodes) {
    const asg = st.type === 'expression_statement' ? st.namedChildren[0] : null;
    const right = asg?.type === 'assignment' ? asg.childForFieldName('right') : null;
    for (const n of descendants(right ?? st)) {
      if (n.type !== 'identifier' || n.text === 'self' || bound.has(n.text) || out.includes(n.text)) continue;
      if (n.parent?.type === 'attribute' && n.parent.childForFieldName('attribute')?.id === n.id) continue;
      if (n.parent?.type === 'keyword_argument' && n.parent.childForFieldName('name')?.id === n.id) continue;
      if (a.undefined.has(n.text) && !Object.hasOwn(CONVENTIONAL_IMPORTS, n.text)) out.push(n.text);
    }
    const left = asg?.type === 'assignment' ? asg.childForFieldName('left') : null;
    if (left?.type === 'identifier') bound.add(left.text);
  }
  return out.slice(0, 3);
}

/** Names a statement binds at its top (`h = ...`, `a, b = ...`, `for x in ...`). */
function boundBy(st: Node): string[] {
  const inner = st.type === 'expression_statement' ? st.namedChildren[0] : st;
  const left =
    inner?.type === 'assignment' || inner?.type === 'augmented_assignment' || inner?.type === 'for_statement'
      ? inner.childForFieldName('left')
      : null;
  if (!left) return [];
  return left.type === 'identifier' ? [left.text] : left.namedChildren.filter((c) => c?.type === 'identifier').map((c) => c?.text ?? '');
}

/**
 * The lines of a pasted forward body: from the first line that uses `self` (not an `__init__` line), every following
 * line that uses `self` or a name those lines bind (`h = self.fc(x)` then `out = torch.relu(h)`).
 */
function forwardBody(statements: Node[], loose: Node[], initLines: Node[]): Node[] {
  const start = statements.findIndex((st) => loose.includes(st) && !initLines.includes(st));
  if (start < 0) return [];
  const out: Node[] = [];
  const bound = new Set<string>();
  for (const st of statements.slice(start)) {
    if (initLines.includes(st) || defOf(st) || st.type === 'class_definition' || st.type === 'decorated_definition') continue;
    const reads = [...descendants(st)].some((n) => n.type === 'identifier' && bound.has(n.text));
    if (!loose.includes(st) && !reads) continue;
    out.push(st);
    for (const b of boundBy(st)) bound.add(b);
  }
  return out;
}

/**
 * Puts pasted pieces of an nn.Module back into a class: module-level `def m(self, ...)` methods, `self.x = Layer(...)`
 * lines (an `__init__` body) and other lines that use `self` (a forward body). The class takes the name the code
 * gives it (`super(Net, self)`, or a CamelCase name it calls and never defines), else `Model`; when the snippet has
 * one nn.Module class without a `forward`, pasted methods join it instead. Called `self.*` layers never assigned
 * become `nn.Identity()` stand-ins. Null when nothing in the code is such a piece.
 */
export function wrapPastedMethods(a: Analysis): WrappedMethods | null {
  const statements = a.statements;
  const methods = statements.filter(isPastedMethod);
  const loose = statements.filter(
    (st) => !defOf(st) && st.type !== 'class_definition' && st.type !== 'decorated_definition' && readsSelf(st),
  );
  if (!methods.length && !loose.length) return null;
  if (!methods.length && !loose.some((st) => /\bself\.\w+/.test(st.text))) return null;
  const initLines = loose.filter((st) => selfAssignment(st) !== null || isSuperInit(st));
  const bodyLines = forwardBody(statements, loose, initLines);
  const methodNames = methods.map((m) => defOf(m)?.childForFieldName('name')?.text ?? '');
  const edits: string[] = [];
  const lines = a.source.split('\n');
  const textOf = (st: Node) => lines.slice(st.startPosition.row, st.endPosition.row + 1).join('\n');

  // One nn.Module class of the snippet without the pasted methods: they are its missing pieces.
  const modules = a.classes.filter((c) => c.isModule);
  const host =
    modules.length === 1 && !initLines.length && !bodyLines.length && methodNames.every((m) => m !== '__init__') ? modules[0] : undefined;
  if (host && !host.forward && methodNames.includes('forward')) {
    const skip = new Set(
      methods.flatMap((m) => Array.from({ length: m.endPosition.row - m.startPosition.row + 1 }, (_, i) => m.startPosition.row + i)),
    );
    const out: string[] = [];
    lines.forEach((l, row) => {
      if (!skip.has(row)) out.push(l);
      if (row === host.node.endPosition.row) out.push(...methods.flatMap((m) => ['', ...indented(textOf(m), INDENT)]));
    });
    edits.push(
      `put the pasted method${methods.length > 1 ? 's' : ''} ${quoted(methodNames)} into \`${host.name}\`, ` +
        `the report's nn.Module class that lacks ${methods.length > 1 ? 'them' : 'it'}`,
    );
    return { code: out.join('\n'), edits };
  }

  const superName =
    initLines.map((st) => /^super\s*\(\s*(\w+)\s*,/.exec(st.text)?.[1]).find(Boolean) ??
    methods.map((m) => /\bsuper\s*\(\s*(\w+)\s*,\s*self\s*\)/.exec(m.text)?.[1]).find(Boolean);
  const calledClass = [...a.undefined.entries()].find(
    ([n, uses]) =>
      CAMEL.test(n) && uses.some((u) => u.node.parent?.type === 'call' && u.node.parent.childForFieldName('function')?.id === u.node.id),
  )?.[0];
  const name = superName ?? calledClass ?? 'Model';

  const pieces = [...methods, ...initLines, ...bodyLines];
  const assigned = assignedSelfAttributes(pieces);
  const standIns = [...calledSelfAttributes(pieces)]
    .filter(([attr, one]) => one && !assigned.has(attr) && !methodNames.includes(attr))
    .map(([attr]) => attr);
  const cls: string[] = [`class ${name}(nn.Module):  ${MARK}`];
  const initMethod = methods.find((m) => defOf(m)?.childForFieldName('name')?.text === '__init__');
  if (!initMethod) {
    cls.push(`${INDENT}def __init__(self):  ${MARK}`, `${INDENT}${INDENT}super().__init__()  ${MARK}`);
    for (const st of initLines) if (!isSuperInit(st)) cls.push(...indented(textOf(st), INDENT + INDENT));
    for (const attr of standIns) cls.push(`${INDENT}${INDENT}self.${attr} = nn.Identity()  ${MARK}`);
  }
  for (const m of methods) {
    const text = indented(textOf(m), INDENT);
    if (m === initMethod) {
      // A pasted __init__ keeps its own lines; the stand-ins go at its end, and super().__init__() first when it lacks one.
      const body = defOf(m)?.childForFieldName('body');
      const bodyIndent = body ? INDENT + ' '.repeat(body.startPosition.column) : INDENT + INDENT;
      const headerRows = body ? body.startPosition.row - m.startPosition.row : 1;
      if (!/\bsuper\s*\(/.test(m.text)) text.splice(headerRows, 0, `${bodyIndent}super().__init__()  ${MARK}`);
      text.push(...standIns.map((attr) => `${bodyIndent}self.${attr} = nn.Identity()  ${MARK}`));
    }
    cls.push('', ...text);
  }
  if (bodyLines.length && !methodNames.includes('forward')) {
    const inputs = freeInputs(a, bodyLines);
    cls.push('', `${INDENT}def forward(self${inputs.map((i) => `, ${i}`).join('')}):  ${MARK}`);
    for (const st of bodyLines) cls.push(...indented(textOf(st), INDENT + INDENT));
    const last = bodyLines.at(-1);
    if (last && last.type !== 'return_statement') {
      const left = last.type === 'expression_statement' ? last.namedChildren[0]?.childForFieldName('left') : null;
      const ret = left?.type === 'identifier' ? left.text : inputs[0];
      if (ret) cls.push(`${INDENT}${INDENT}return ${ret}  ${MARK}`);
    }
  }

  // The class goes where the first piece was; everything else keeps its place.
  const taken = new Set(pieces.map((p) => p.id));
  const first = Math.min(...pieces.map((p) => p.startPosition.row));
  const out: string[] = [];
  let row = 0;
  let placed = false;
  for (const st of statements) {
    if (!taken.has(st.id)) continue;
    out.push(...lines.slice(row, st.startPosition.row));
    if (!placed && st.startPosition.row === first) {
      out.push(...cls);
      placed = true;
    }
    row = st.endPosition.row + 1;
  }
  out.push(...lines.slice(row));
  const what = [
    methods.length ? `the method${methods.length > 1 ? 's' : ''} ${methodNames.map((m) => `\`${m}\``).join(', ')}` : '',
    initLines.length ? `${initLines.length} \`self.…\` line${initLines.length > 1 ? 's' : ''} (an \`__init__\` body)` : '',
    bodyLines.length ? `${bodyLines.length} line${bodyLines.length > 1 ? 's' : ''} using \`self\` (a \`forward\` body)` : '',
  ].filter(Boolean);
  edits.push(`put ${what.join(', ')} pasted without their class into \`class ${name}(nn.Module)\``);
  if (standIns.length)
    edits.push(
      `defined ${quoted(standIns.map((a) => `self.${a}`))} as \`nn.Identity()\` ` +
        "(called as a layer but never shown; a stand-in that keeps its input's shape)",
    );
  return { code: out.join('\n'), edits };
}
