import type { ReportReading, Traceback } from '../symptoms/types.js';

/**
 * Where a crash came from. With the project's code in the run, a reproduction's crash must come from the
 * project or from the reporter's own code: the same exception raised by a line a model wrote around
 * plain torch (`torch.zeros(2) + torch.zeros(3)`) reproduces nothing about the project. Pure.
 */
export interface ProvenanceInput {
  /** Folders the project's code is seen under in the run (the workspace mount, the host checkout). */
  projectRoots: readonly string[];
  /** The script's file name as the run names it (`repro.py`). */
  scriptFile: string;
}

export interface Provenance {
  ok: boolean;
  /** Which frame ties the crash to the project or the report, or why none does. */
  reason: string;
}

const norm = (s: string): string => s.replace(/\s+/g, '').replace(/#.*$/, '');

/** Code lines of the report: its code blocks and the code its tracebacks quote. */
export function reportCodeLines(report: Pick<ReportReading, 'codeBlocks' | 'tracebacks'>): Set<string> {
  const lines = new Set<string>();
  for (const b of report.codeBlocks) {
    for (const raw of b.code.split('\n')) {
      // `---> 28 import timm` (IPython) and `>>> x = f()` (REPL) are code too.
      const line = norm(raw.replace(/^\s*(?:-*>\s*\d+|>>>|\.\.\.)\s?/, ''));
      if (line.length >= 4) lines.add(line);
    }
  }
  for (const tb of report.tracebacks) for (const f of tb.frames) if (f.code && norm(f.code).length >= 4) lines.add(norm(f.code));
  return lines;
}

function underRoot(file: string, roots: readonly string[]): boolean {
  return roots.some((r) => {
    const root = r.replace(/\/+$/, '');
    return root.length > 1 && file.startsWith(`${root}/`);
  });
}

/**
 * Accepts the crash when a frame of its traceback is in the project's code, or when a frame of the script
 * runs a line of the report's own code. A run without a traceback (a native crash) cannot be checked and
 * is accepted; the symptom matcher still decides whether it is the reported one.
 */
export function crashProvenance(
  tb: Traceback | null,
  report: Pick<ReportReading, 'codeBlocks' | 'tracebacks'>,
  input: ProvenanceInput,
): Provenance {
  if (!tb || !tb.frames.length) return { ok: true, reason: 'no Python traceback to check' };
  const project = tb.frames.find((f) => underRoot(f.file, input.projectRoots));
  if (project) return { ok: true, reason: `the traceback passes through the project (${project.file}:${project.line})` };
  const reportLines = reportCodeLines(report);
  const scriptFrames = tb.frames.filter((f) => f.file === input.scriptFile || f.file.endsWith(`/${input.scriptFile}`));
  const fromReport = scriptFrames.find((f) => f.code && reportLines.has(norm(f.code)));
  if (fromReport) return { ok: true, reason: `the crash comes from the report's own code (\`${fromReport.code?.trim()}\`)` };
  const where = scriptFrames.at(-1);
  return {
    ok: false,
    reason:
      `the ${tb.exception.type} is raised neither in the project's code nor by the report's own ` +
      `code${where?.code ? ` (the script's line \`${where.code.trim().slice(0, 120)}\`)` : ''}: a crash of ` +
      `code the script wrote itself does not reproduce the project's bug`,
  };
}
