// The candidate fix's import check (issue 41): a patch whose application breaks the project's import is no evidence
// either way. Only a failure the patch brings counts: one the checkout has without it says nothing of the change.
import { z } from 'zod';
import type { RunLimitsSettings } from '../../../agent/run-candidate.js';
import { CancelledError } from '../../../errors.js';
import { DEFAULT_WORKSPACE_MOUNT, type RunResult, type ScriptExecutor, type Workspace } from '../../../exec/types.js';

/** What an import check runs against: the patched files, the project's packages, the workspace, the sandbox and limits. */
export interface ImportCheckAt {
  files: readonly string[];
  packages: readonly string[];
  workspace: Workspace;
  executor: ScriptExecutor;
  settings: RunLimitsSettings;
}

/** The modules a patched file is imported as: `pkg/mod.py` → pkg.mod, `src/pkg/__init__.py` → pkg; null outside a package. Pure. */
export function moduleOf(path: string, packages: readonly string[]): string | null {
  let parts = path.replace(/\.pyi?$/, '').split('/');
  if (parts[0] === 'src' && parts.length > 1 && packages.includes(parts[1]!)) parts = parts.slice(1);
  if (parts.at(-1) === '__init__') parts = parts.slice(0, -1);
  if (!parts.length || !packages.includes(parts[0]!) || !parts.every((p) => /^[A-Za-z_][A-Za-z0-9_]*$/.test(p))) return null;
  return parts.join('.');
}

/** The modules and loose files the import check tries: the packages, every patched module, the patched files outside a package. */
function importTargets(files: readonly string[], packages: readonly string[], mount: string): { modules: string[]; loose: string[] } {
  const modules = [...new Set([...packages, ...files.map((f) => moduleOf(f, packages)).filter((m): m is string => m !== null)])];
  const loose = files.filter((f) => f.endsWith('.py') && moduleOf(f, packages) === null).map((f) => `${mount}/${f}`);
  return { modules, loose };
}

/**
 * Each module and loose file of the import check on its own, in one sandboxed run against `workspace`: what fails, by
 * name, with its exception's first line (none: an empty map); null when the run itself failed.
 */
export async function importEach(at: ImportCheckAt, signal?: AbortSignal): Promise<Map<string, string> | null> {
  const { workspace } = at;
  const { modules, loose } = importTargets(at.files, at.packages, workspace.mountPath ?? DEFAULT_WORKSPACE_MOUNT);
  const script = [
    'import importlib, json, py_compile',
    `targets = [("m", m) for m in ${JSON.stringify(modules)}] + [("f", f) for f in ${JSON.stringify(loose)}]`,
    'for kind, name in targets:',
    '    try:',
    '        importlib.import_module(name) if kind == "m" else py_compile.compile(name, cfile="/dev/null", doraise=True)',
    '    except BaseException as e:',
    '        why = (f"{type(e).__name__}: {e}".splitlines() or [""])[0][:300]',
    '        print("REPGEN_IMPORT_FAIL " + json.dumps([name, why]), flush=True)',
    'print("REPGEN_IMPORT_DONE")',
    '',
  ].join('\n');
  const r = await runImportScript('repgen_import_each.py', script, at, signal);
  if (r.infra || r.exitCode !== 0 || !r.output.includes('REPGEN_IMPORT_DONE')) return null;
  const failed = new Map<string, string>();
  for (const line of r.output.split('\n')) {
    if (!line.startsWith('REPGEN_IMPORT_FAIL ')) continue;
    try {
      const [name, why] = z.tuple([z.string(), z.string()]).parse(JSON.parse(line.slice('REPGEN_IMPORT_FAIL '.length)));
      if (!failed.has(name)) failed.set(name, why);
    } catch {
      return null;
    }
  }
  return failed;
}

/**
 * Whether the project imports (issue 41: a patch that breaks the import is no evidence): its packages and every
 * patched module, imported in the sandbox against `workspace` (the patched copy, or the checkout to compare with);
 * files outside a package are compiled. The message of the failure, or null.
 */
export async function importCheck(at: ImportCheckAt, signal?: AbortSignal): Promise<string | null> {
  const { workspace } = at;
  const { modules, loose } = importTargets(at.files, at.packages, workspace.mountPath ?? DEFAULT_WORKSPACE_MOUNT);
  const script = [
    'import importlib, py_compile, sys',
    `for m in ${JSON.stringify(modules)}:`,
    '    importlib.import_module(m)',
    `for f in ${JSON.stringify(loose)}:`,
    '    py_compile.compile(f, cfile="/dev/null", doraise=True)',
    'print("REPGEN_IMPORT_OK")',
    '',
  ].join('\n');
  const r = await runImportScript('repgen_import_check.py', script, at, signal);
  if (r.infra) return `the import check could not run (${r.infra.kind}: ${r.infra.message})`;
  if (r.exitCode === 0 && r.output.includes('REPGEN_IMPORT_OK')) return null;
  const last =
    r.output
      .trimEnd()
      .split('\n')
      .filter((l) => l.trim())
      .at(-1) ?? `exit ${r.exitCode ?? r.signal ?? 'none'}`;
  return last.slice(0, 300);
}

/** One import-check script, sandboxed against `at.workspace` with the run's limits; throws CancelledError when aborted. */
async function runImportScript(
  name: string,
  script: string,
  at: { workspace: Workspace; executor: ScriptExecutor; settings: RunLimitsSettings },
  signal?: AbortSignal,
): Promise<RunResult> {
  const r = await at.executor.run(
    {
      files: [{ path: name, content: script }],
      entry: name,
      limits: { timeoutMs: at.settings.runTimeoutMs, memoryMb: at.settings.runMemoryMb, maxOutputBytes: 200_000 },
      labels: { purpose: 'candidate-fix-import' },
      workspace: at.workspace,
    },
    signal,
  );
  if (signal?.aborted) throw new CancelledError('the reproduction was cancelled');
  return r;
}
