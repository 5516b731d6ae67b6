/**
 * The StaticChecker port: reads a candidate script without running it (pyflakes, pylint errors-only).
 * Parsing is kept pure here; `pyflakes-checker.ts` is the adapter that spawns the tools.
 */

export interface StaticFinding {
  line: number;
  message: string;
  /** 'error' fails the static check; 'warning' is only reported. */
  severity: 'error' | 'warning';
  tool: 'pyflakes' | 'pylint';
}

export interface StaticReport {
  findings: StaticFinding[];
  /** Names used but never defined (pyflakes' undefined-name output), in first-use order. */
  undefinedNames: string[];
  /** Which tools ran ("pyflakes", "pylint -E"), and why one did not. */
  tools: string[];
}

export interface StaticChecker {
  check(script: string, signal?: AbortSignal): Promise<StaticReport>;
}

const PYFLAKES_LINE = /^<stdin>:(\d+):(?:\d+:?)?\s*(.*)$/;
const UNDEFINED = /^undefined name '([^']+)'/;
/** pyflakes messages that only describe style or dead code: never a reason to reject a script. */
const PYFLAKES_WARNINGS = [
  /imported but unused/,
  /redefinition of unused/,
  /is assigned to but never used/,
  /f-string is missing placeholders/,
  /unable to detect undefined names/,
  /may be undefined, or defined from star imports/,
  /shadowed by loop variable/,
];

/** Reads pyflakes' output (file name `<stdin>`). Syntax errors come as one finding with the line. */
export function parsePyflakesOutput(output: string): { findings: StaticFinding[]; undefinedNames: string[] } {
  const findings: StaticFinding[] = [];
  const undefinedNames: string[] = [];
  for (const raw of output.split('\n')) {
    const m = PYFLAKES_LINE.exec(raw.trim());
    if (!m) continue;
    const message = (m[2] ?? '').trim();
    const undef = UNDEFINED.exec(message);
    if (undef?.[1] && !undefinedNames.includes(undef[1])) undefinedNames.push(undef[1]);
    const severity = PYFLAKES_WARNINGS.some((re) => re.test(message)) ? 'warning' : 'error';
    findings.push({ line: Number(m[1]), message, severity, tool: 'pyflakes' });
  }
  return { findings, undefinedNames };
}

const PYLINT_LINE = /^[^:]+:(\d+):\d+: (E\d{4}): (.*)$/;

/** Reads `pylint -E` text output; every E-message is an error. */
export function parsePylintOutput(output: string): StaticFinding[] {
  const findings: StaticFinding[] = [];
  for (const raw of output.split('\n')) {
    const m = PYLINT_LINE.exec(raw.trim());
    if (m) findings.push({ line: Number(m[1]), message: `${m[2]}: ${m[3]}`, severity: 'error', tool: 'pylint' });
  }
  return findings;
}
