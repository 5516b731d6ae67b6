// A check the bug never reaches can only fail once the bug is fixed. When every run of a reproduction stops at the same
// failed check of the script's top level, the statements after it never ran in any of them; a check among them (the
// reporter's hope beside the symptom: "should never be above 1" asserted, then "a negative value" asserted too) adds
// nothing to what the runs showed, and can make a correct fix fail the reproduction. Taking those checks out leaves
// every run as it was (nothing before the stop changes, line numbers included) and can only help fail-to-pass. After
// a crash nothing is taken out: there the checks that follow are the script's only word on the working call.
import type { Node } from 'web-tree-sitter';
import { loadPythonParser } from '../../../context/python-parser.js';
import type { AgentResult } from '../../../agent/index.js';
import type { RunReading } from '../../../symptoms/types.js';

/** One check taken out: its first and last script line (1-based) and its first line as written. */
export interface UnreachedCheck {
  line: number;
  endLine: number;
  text: string;
}

export interface UnreachedChecks {
  /** The script with each check replaced by `pass` and its text kept as a comment, line for line. */
  script: string;
  /** The top-level script line every run stopped at. */
  stopLine: number;
  removed: UnreachedCheck[];
}

/** The script file every run executes (run-candidate.ts `candidateRequest`). */
const SCRIPT = 'repro.py';
const LOOPS = new Set(['for_statement', 'while_statement']);
/** `torch.testing.assert_close`, `np.testing.assert_allclose`, `self.assertEqual`, `pytest.fail`. */
const CHECK_CALL = /(?:^|\.)(?:assert\w*|fail)$/;
const EXIT_CALL = /^(?:sys\.exit|exit|quit|os\._exit)$/;
const MAX_SHOWN = 160;

/**
 * The line of the script's top level (its `<module>` frame) at which a run's uncaught exception left it; null when the
 * run ended without one there (it finished, crashed natively, or the traceback names no such frame). Pure.
 */
export function topLevelStop(reading: Pick<RunReading, 'traceback'>): number | null {
  const frame = reading.traceback?.frames.find((f) => f.function === '<module>' && f.file.replace(/\\/g, '/').split('/').at(-1) === SCRIPT);
  return frame && frame.line > 0 ? frame.line : null;
}

/** The blocks a compound statement holds, its clauses' included; none for definitions (their bodies are other frames). */
function childBlocks(stmt: Node): Node[] {
  if (stmt.type === 'function_definition' || stmt.type === 'class_definition' || stmt.type === 'decorated_definition') return [];
  if (stmt.type === 'match_statement') return [];
  const out: Node[] = [];
  for (const c of stmt.namedChildren) {
    if (!c) continue;
    if (c.type === 'block') out.push(c);
    else if (c.type.endsWith('_clause')) for (const b of c.namedChildren) if (b?.type === 'block') out.push(b);
  }
  return out;
}

const contains = (n: Node, row: number): boolean => n.startPosition.row <= row && row <= n.endPosition.row;

/**
 * The top-level statements no run reached: those after the statement holding `row` in each block on its way down,
 * except inside a loop (a later statement of a loop's body may have run in an earlier pass); statements that start on
 * the stop line itself are left (one of them may be the one that failed). `stop` is the innermost statement holding it.
 */
function unreachedStatements(root: Node, row: number): { stop: Node | null; after: Node[] } {
  const after: Node[] = [];
  let block: Node = root;
  let stop: Node | null = null;
  let inLoop = false;
  for (;;) {
    const stmts = block.namedChildren.filter((n): n is Node => n !== null && n.type !== 'comment');
    const i = stmts.findIndex((n) => contains(n, row));
    if (i < 0) break;
    if (!inLoop) after.push(...stmts.slice(i + 1).filter((n) => n.startPosition.row > row));
    stop = stmts[i] as Node;
    const inner = childBlocks(stop).find((b) => contains(b, row));
    if (!inner) break;
    if (LOOPS.has(stop.type)) inLoop = true;
    block = inner;
  }
  return { stop, after };
}

/** Whether a statement is a check: an assert, a raise, an `assert*`/`fail` call, or an exit with a status other than 0. */
function isCheck(n: Node): boolean {
  if (n.type === 'assert_statement' || n.type === 'raise_statement') return true;
  if (n.type !== 'expression_statement') return false;
  const call = n.namedChildren[0];
  if (call?.type !== 'call' || n.namedChildren.length !== 1) return false;
  const fn = call.childForFieldName('function')?.text ?? '';
  if (CHECK_CALL.test(fn)) return true;
  if (!EXIT_CALL.test(fn)) return false;
  const args = call.childForFieldName('arguments')?.namedChildren.filter((a) => a && a.type !== 'comment') ?? [];
  return !(args.length === 0 || (args.length === 1 && /^(?:0|None|False)$/.test(args[0]?.text ?? '')));
}

function collectChecks(n: Node, out: Node[]): void {
  if (isCheck(n)) {
    out.push(n);
    return;
  }
  for (const c of n.namedChildren) if (c) collectChecks(c, out);
}

/** The check's lines when it stands on them alone (only indentation before it, only a comment after it); else null. */
function wholeLines(n: Node, lines: readonly string[]): { first: number; last: number; indent: string } | null {
  const first = n.startPosition.row;
  const last = n.endPosition.row;
  const head = lines[first] ?? '';
  const indent = /^[ \t]*/.exec(head)?.[0] ?? '';
  if (n.startPosition.column !== indent.length || !head.slice(indent.length).startsWith(n.text.split('\n')[0] ?? '')) return null;
  const tail = (lines[last] ?? '').slice(n.endPosition.column).trim();
  return tail === '' || tail.startsWith('#') ? { first, last, indent } : null;
}

/**
 * The script without the checks no run reached, or null when there is nothing to take out: the runs did not all stop
 * at one top-level line, no check follows it, or the edited script would not parse as the original did. Each check
 * becomes `pass` with its text after a comment, its other lines comments, so every line keeps its number.
 */
export async function withoutUnreachedChecks(script: string, stops: readonly (number | null)[]): Promise<UnreachedChecks | null> {
  const stopLine = stops[0];
  if (stopLine === null || stopLine === undefined || stops.some((s) => s !== stopLine)) return null;
  const { parser } = await loadPythonParser();
  const tree = parser.parse(script);
  if (!tree) return null;
  try {
    if (tree.rootNode.hasError) return null;
    const lines = script.split('\n');
    // Only after a failed check: the bug's symptom is stated there, and what follows adds expectations of a fixed
    // version. After a crash, the checks that follow are all the script says of what the call should give once it works.
    const { stop, after } = unreachedStatements(tree.rootNode, stopLine - 1);
    if (!stop || !isCheck(stop)) return null;
    const checks: Node[] = [];
    for (const stmt of after) collectChecks(stmt, checks);
    checks.sort((a, b) => a.startPosition.row - b.startPosition.row);
    const removed: UnreachedCheck[] = [];
    const out = [...lines];
    for (const check of checks) {
      const at = wholeLines(check, lines);
      if (!at) continue;
      const shown = (lines[at.first] ?? '').trim();
      const cut = shown.length > MAX_SHOWN ? `${shown.slice(0, MAX_SHOWN)}…` : shown;
      out[at.first] = `${at.indent}pass  # RepGen: not checked, no run reaches it (each stops at line ${stopLine}): ${cut}`;
      for (let r = at.first + 1; r <= at.last; r++) out[r] = `${at.indent}# ${(lines[r] ?? '').trimStart()}`;
      removed.push({ line: at.first + 1, endLine: at.last + 1, text: cut });
    }
    if (!removed.length) return null;
    const edited = out.join('\n');
    const check = parser.parse(edited);
    const parses = check ? !check.rootNode.hasError : false;
    check?.delete();
    return parses ? { script: edited, stopLine, removed } : null;
  } finally {
    tree.delete();
  }
}

/** The note the evidence carries when checks were taken out: where the runs stopped and each check, by line. Pure. */
export function unreachedChecksNote(u: UnreachedChecks): string {
  const list = u.removed.map((r) => `line ${r.line}${r.endLine > r.line ? `-${r.endLine}` : ''} \`${r.text}\``).join('; ');
  return (
    `Took out ${u.removed.length} check(s) after the failed check at line ${u.stopLine} that no run reached (every run stopped there): ${list}. ` +
    'A check the bug never reaches cannot show it, and could fail a correct fix; each is kept in the script as a comment.'
  );
}

/**
 * The agent's reproduction without the checks none of its runs reached (the attempt's run and every confirmation run,
 * `confirm`), with the note saying so; null when nothing changes. The runs stay the evidence: the edit changes nothing
 * any of them executed.
 */
export async function withoutUnreachedChecksOf(
  agent: AgentResult,
  confirm: { infra: string | null; runs: readonly { stopLine?: number | null }[] } | null,
): Promise<{ agent: AgentResult; note: string } | null> {
  if (agent.status !== 'reproduced' || !agent.final || confirm?.infra) return null;
  const stops = [topLevelStop(agent.final.reading), ...(confirm?.runs.map((r) => r.stopLine ?? null) ?? [])];
  const trimmed = await withoutUnreachedChecks(agent.final.script, stops);
  if (!trimmed) return null;
  return { agent: { ...agent, final: { ...agent.final, script: trimmed.script } }, note: unreachedChecksNote(trimmed) };
}
