import { CONVENTIONAL_IMPORTS, HYPERPARAMETER_DEFAULTS } from './conventions.js';
import { parsePython } from './python-syntax.js';
import type { StaticChecker, StaticReport } from './static-checker.js';

/** One recorded edit of tier 0: what was changed in the reporter's code and why. */
export interface SnippetEdit {
  action: 'join_blocks' | 'cpu_fallback' | 'strip_prompts' | 'add_import' | 'define_default' | 'define_from_comparison' | 'synthesize_data' | 'call_entry' | 'append_traceback_line';
  detail: string;
}

export interface CompletedSnippet {
  script: string;
  edits: SnippetEdit[];
  /** Names still undefined after the edits: what the report would have to supply. */
  unresolved: string[];
  static: StaticReport;
}

export interface SnippetInput {
  /** The report's Python blocks, in order. */
  blocks: string[];
  /** Module-level statements of the report's traceback (`<module>` frames), in order. */
  tracebackModuleLines?: string[];
}

const FEATURE_NAME = /^(?:x|X|inputs?|features|data_x|x_\w+|\w+_(?:features|inputs|x))$/;
const TARGET_NAME = /^(?:y|Y|targets?|labels?|data_y|y_\w+|\w+_(?:targets|labels|y))$/;

/** Removes `>>> ` / `... ` prompts and notebook magics, which are not Python. */
function stripPrompts(code: string): { code: string; changed: boolean } {
  const lines = code.split('\n');
  const prompted = lines.filter((l) => /^(>>>|\.\.\.)( |$)/.test(l)).length;
  const magics = lines.filter((l) => /^\s*[%!]/.test(l)).length;
  if (!prompted && !magics) return { code, changed: false };
  const kept = lines
    .filter((l) => !/^\s*[%!]/.test(l))
    // In a REPL transcript, lines without a prompt are the interpreter's output: drop them.
    .filter((l) => !prompted || /^(>>>|\.\.\.)( |$)/.test(l))
    .map((l) => l.replace(/^(>>>|\.\.\.) ?/, ''));
  return { code: kept.join('\n'), changed: true };
}

function definesName(script: string, name: string): boolean {
  return new RegExp(`^\\s*${name}\\s*=`, 'm').test(script);
}

/**
 * Tier 0: the report's own code, completed by recorded edits only: blocks joined in order, conventional
 * imports added, obviously missing hyper-parameters given stated defaults (pyflakes says which names are
 * missing), and a call added when the report defines a function it never calls. Nothing is invented
 * about the bug itself.
 */
export async function completeSnippet(input: SnippetInput, deps: { checker: StaticChecker }, signal?: AbortSignal): Promise<CompletedSnippet> {
  const edits: SnippetEdit[] = [];
  const blocks = input.blocks.map((b) => b.replace(/\s+$/, '')).filter((b) => b.trim());
  if (blocks.length > 1) edits.push({ action: 'join_blocks', detail: `joined the report's ${blocks.length} code blocks in order` });
  let body = blocks.join('\n\n');
  const stripped = stripPrompts(body);
  if (stripped.changed) {
    body = stripped.code;
    edits.push({ action: 'strip_prompts', detail: 'removed interactive prompts (>>>, ...) and notebook magics (%, !)' });
  }

  // A traceback statement that runs something the snippet defines but never calls is what the reporter ran.
  const parsed = await parsePython(body);
  const neverCalled = new Set(parsed.definitions.filter((d) => !parsed.calledNames.has(d.name)).map((d) => d.name));
  for (const line of input.tracebackModuleLines ?? []) {
    const trimmed = line.trim();
    if (!trimmed || body.split('\n').some((l) => l.trim() === trimmed)) continue;
    const calls = [...trimmed.matchAll(/([A-Za-z_]\w*)\s*\(/g)].map((m) => m[1] ?? '');
    if (calls.some((c) => neverCalled.has(c))) {
      body = `${body}\n\n${trimmed}`;
      edits.push({ action: 'append_traceback_line', detail: `appended \`${trimmed}\`, the statement the report's traceback shows it ran` });
    }
  }

  let staticReport = await deps.checker.check(body, signal);
  const imports: string[] = [];
  const defaults: string[] = [];
  const data: string[] = [];
  const unresolved: string[] = [];
  const undefinedNames = staticReport.undefinedNames;
  const defined = (name: string): boolean => definesName(body, name) || defaults.some((d) => d.startsWith(`${name} =`));
  for (const name of undefinedNames) {
    const imp = CONVENTIONAL_IMPORTS[name];
    if (imp) {
      imports.push(imp);
      edits.push({ action: 'add_import', detail: `added \`${imp}\` (the report uses \`${name}\` without importing it)` });
      continue;
    }
    const value = HYPERPARAMETER_DEFAULTS[name];
    if (value) {
      defaults.push(`${name} = ${value}`);
      edits.push({ action: 'define_default', detail: `defined \`${name} = ${value}\` (used but never set in the report; stated default)` });
      continue;
    }
    const compared = new RegExp(`\\b${name}\\s*==\\s*(['"])([^'"\\n]{1,40})\\1`).exec(body);
    if (compared?.[2] !== undefined) {
      defaults.push(`${name} = ${JSON.stringify(compared[2])}`);
      edits.push({ action: 'define_from_comparison', detail: `defined \`${name} = ${JSON.stringify(compared[2])}\` (the first value the report compares it with)` });
      continue;
    }
    unresolved.push(name);
  }
  // Data: synthetic tensors of a shape the snippet's own sizes imply, only when those sizes are known.
  for (const name of [...unresolved]) {
    let expr: string | null = null;
    if (FEATURE_NAME.test(name) && defined('input_size')) expr = 'torch.randn(100, input_size)';
    else if (TARGET_NAME.test(name) && defined('output_size')) expr = 'torch.randn(100, output_size)';
    else if (TARGET_NAME.test(name) && defined('num_classes')) expr = 'torch.randint(0, num_classes, (100,))';
    if (!expr) continue;
    data.push(`${name} = ${expr}`);
    unresolved.splice(unresolved.indexOf(name), 1);
    edits.push({ action: 'synthesize_data', detail: `defined \`${name} = ${expr}\` (synthetic data shaped by the report's own sizes; its data is not in the report)` });
  }
  if (data.length && !imports.includes(CONVENTIONAL_IMPORTS.torch ?? '') && /\btorch\b/.test(data.join('\n')) && !/^\s*import\s+torch\s*(?:$|,|#)/m.test(body)) {
    imports.unshift('import torch');
  }

  // A function the report defines and never calls: call it, when its parameters bind to the snippet's own values.
  if (!unresolved.length) {
    const call = entryCall(body, parsed);
    if (call) {
      body = `${body}\n\nprint(${call})`;
      edits.push({ action: 'call_entry', detail: `added \`print(${call})\`: the report defines this function but never calls it` });
    }
  }

  // Conventional order: `import torch` before `import torch.nn as nn`, as people write it.
  const order = Object.values(CONVENTIONAL_IMPORTS);
  imports.sort((a, b) => order.indexOf(a) - order.indexOf(b));
  const header: string[] = [];
  if (imports.length) header.push(...imports, '');
  if (defaults.length || data.length) header.push('# Defaults RepGen chose for names the report uses but never defines:', ...defaults, ...data, '');
  const script = header.length ? `${header.join('\n')}\n${body}\n` : `${body}\n`;
  if (header.length || edits.some((e) => e.action === 'call_entry')) staticReport = await deps.checker.check(script, signal);
  return { script, edits, unresolved, static: staticReport };
}

/** `fn(a, b)` for the only never-called top-level function whose parameters all bind, else null. */
function entryCall(body: string, parsed: Awaited<ReturnType<typeof parsePython>>): string | null {
  const candidates = parsed.definitions.filter((d) => d.kind === 'function' && !parsed.calledNames.has(d.name) && !d.name.startsWith('test'));
  if (candidates.length !== 1 || parsed.definitions.some((d) => d.kind === 'class' && !parsed.calledNames.has(d.name))) return null;
  const fn = candidates[0];
  if (!fn) return null;
  const moduleNames = [...body.matchAll(/^([A-Za-z_]\w*)\s*(?:,\s*([A-Za-z_]\w*)\s*)*=(?!=)/gm)].flatMap((m) => {
    const lhs = (m[0] ?? '').replace(/=$/, '');
    return lhs.split(',').map((s) => s.trim()).filter(Boolean);
  });
  const free = moduleNames.filter((n) => !fn.params.includes(n));
  const args: string[] = [];
  for (const p of fn.params) {
    if (p === 'self') args.push('None');
    else if (moduleNames.includes(p)) args.push(p);
    else {
      const next = free.shift();
      if (!next) return null;
      args.push(next);
    }
  }
  return `${fn.name}(${args.join(', ')})`;
}

/**
 * On a runner without CUDA, a report whose bug is not about devices still runs on the CPU: `'cuda'` devices
 * and `.cuda()` become the CPU, recorded as an edit. Null when the script names no CUDA device.
 */
export function mapCudaToCpu(snippet: CompletedSnippet): CompletedSnippet | null {
  const script = snippet.script.replace(/\.cuda\(\s*\)/g, ".to('cpu')").replace(/(['"])cuda(?::\d+)?\1/g, "'cpu'");
  if (script === snippet.script) return null;
  return {
    ...snippet,
    script,
    edits: [...snippet.edits, { action: 'cpu_fallback', detail: "replaced CUDA devices with the CPU ('cuda' → 'cpu', .cuda() → .to('cpu')): this runner has no GPU and the reported bug is not about devices" }],
  };
}
