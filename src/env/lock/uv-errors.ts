import { normaliseName } from './uv-lock.js';

/**
 * What a failed uv command says, read from its stderr (uv 0.13's wording; the lock step pins uv so it stays put).
 * Pure. `version` is set when the failing requirement was an exact pin, which is what a substitution can replace.
 */
export interface UvProblem {
  kind: 'missing-version' | 'no-wheel' | 'build' | 'download' | 'python' | 'network' | 'other';
  package: string | null;
  version: string | null;
}

const PATTERNS: Array<{ kind: UvProblem['kind']; re: RegExp }> = [
  { kind: 'missing-version', re: /there is no version of ([A-Za-z0-9._-]+)(?:\[[^\]]*\])?==([^\s,]+)/ },
  { kind: 'missing-version', re: /there is no version of ([A-Za-z0-9._-]+)/ },
  { kind: 'missing-version', re: /only ([A-Za-z0-9._-]+)[<>=!~]{1,2}\S+ is available and you require \1==([^\s,]+)/ },
  { kind: 'missing-version', re: /([A-Za-z0-9._-]+) was not found in the (?:package registry|provided package locations)/ },
  { kind: 'no-wheel', re: /([A-Za-z0-9._-]+)==([^\s,]+) has no (?:usable )?wheels/ },
  // A range with no wheels at all (detectron2's `fvcore>=0.1.5,<0.1.6`: sdists only): no version to move, only a build.
  { kind: 'no-wheel', re: /([A-Za-z0-9._-]+)(?:[<>!~]=?|===)[^\s,]+ has no (?:usable )?wheels/ },
  { kind: 'python', re: /current Python version \([^)]*\) does not satisfy Python[^ ]* and ([A-Za-z0-9._-]+)==([^\s,]+) depends on/ },
  { kind: 'python', re: /([A-Za-z0-9._-]+)==([^\s,]+) depends on Python/ },
  { kind: 'build', re: /Failed to build `([A-Za-z0-9._-]+)(?:==([^\s`]+))?/ },
  { kind: 'build', re: /Failed to (?:prepare|resolve) (?:distributions|dependencies)[\s\S]*?(?:for|of) `?([A-Za-z0-9._-]+)==([^\s`]+)/ },
  { kind: 'download', re: /Failed to (?:download|fetch)(?: wheel:)? `?([A-Za-z0-9._-]+)(?:==([^\s`]+))?/ },
  { kind: 'network', re: /(?:error sending request|Could not connect|dns error|tcp connect error|Connection refused|Network unreachable)/ },
  { kind: 'other', re: /(?:and|because) you require ([A-Za-z0-9._-]+)/ },
];

export function readUvProblem(stderr: string): UvProblem {
  for (const { kind, re } of PATTERNS) {
    const m = re.exec(stderr);
    if (!m) continue;
    const pkg = m[1] ? normaliseName(m[1]) : null;
    return { kind, package: kind === 'network' ? null : pkg, version: m[2] ?? null };
  }
  return { kind: 'other', package: null, version: null };
}

/** The last `lines` lines of a log, at most `chars` characters (EnvBuildFailure.logTail). */
export function logTail(text: string, lines = 40, chars = 8000): string {
  const tail = text.trimEnd().split('\n').slice(-lines).join('\n');
  return tail.length > chars ? tail.slice(tail.length - chars) : tail;
}

/**
 * A compile's log for a person: the compiler's first error lines (a C/C++/CUDA `error:`, each with the line before
 * it, which names the file), then the log's tail. A build through ninja ends in a long Python traceback that fills
 * the plain tail and hides the one line that says what went wrong. Pure.
 */
export function compileLogTail(text: string, errors = 12): string {
  const lines = text.split('\n');
  const picked: string[] = [];
  for (let i = 0; i < lines.length && picked.length < errors * 2; i++) {
    if (!/\b(?:fatal )?error\b[:(]/.test(lines[i] ?? '') || /^\s*(?:File |raise |RuntimeError: Error compiling)/.test(lines[i] ?? ''))
      continue;
    if (i > 0 && !picked.includes(lines[i - 1] ?? '')) picked.push(lines[i - 1] ?? '');
    picked.push(lines[i] ?? '');
  }
  const tail = logTail(text, 20, 4000);
  return picked.length ? `${logTail(picked.join('\n'), errors * 2, 4000)}\n…\n${tail}` : logTail(text);
}
