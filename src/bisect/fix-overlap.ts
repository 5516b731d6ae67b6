import { runGitUntrusted } from '../host/git.js';

/**
 * The check a maintainer makes of a bisection whose fix is known (a fail-to-pass bench case): does the first bad
 * commit's diff touch a file the fix changed, and does it add a line the fix removes? The second holds across
 * renames (timm's `from torch._six import container_abcs` came in with conv2d_layers.py and was fixed in
 * layers/helpers.py), the first does not; both are read from first-parent diffs.
 */
export interface FixOverlap {
  /** Files both the first bad commit and the fix changed. */
  sameFiles: string[];
  /** Lines the fix removes that the first bad commit added (trimmed; trivial lines left out), at most 5. */
  fixedLinesAdded: string[];
}

/** Shortest trimmed line that counts: `else:`, `pass`, `return x`, `)` say nothing about where a bug came from. */
const MIN_LINE = 12;

/** The lines a unified diff adds (`+`) or removes (`-`), trimmed, without the file headers and short lines. Pure. */
export function diffLines(diff: string, sign: '+' | '-'): string[] {
  const header = sign === '+' ? '+++' : '---';
  const out: string[] = [];
  for (const line of diff.split('\n')) {
    if (!line.startsWith(sign) || line.startsWith(header)) continue;
    const text = line.slice(1).trim();
    if (text.length >= MIN_LINE && !text.startsWith('#')) out.push(text);
  }
  return out;
}

/** How a first bad commit's diff meets the fix's. Pure. */
export function fixOverlap(input: {
  badFiles: readonly string[];
  badDiff: string;
  fixFiles: readonly string[];
  fixDiff: string;
}): FixOverlap {
  const fix = new Set(input.fixFiles);
  const added = new Set(diffLines(input.badDiff, '+'));
  return {
    sameFiles: input.badFiles.filter((f) => fix.has(f)),
    fixedLinesAdded: [...new Set(diffLines(input.fixDiff, '-'))].filter((l) => added.has(l)).slice(0, 5),
  };
}

const CODE_PATHS = ['*.py', '*.pyx', '*.pxd', '*.c', '*.cc', '*.cpp', '*.cu', '*.h', '*.hpp'];

/** {@link fixOverlap} of two commits of a local repository, each against its first parent. */
export async function commitFixOverlap(repoDir: string, firstBad: string, fix: string): Promise<FixOverlap> {
  const diff = async (sha: string, ...extra: string[]): Promise<string> => {
    // Lines are compared in code only: a notebook or a data file says nothing here, and a partial mirror may lack its blob.
    const paths = extra.length ? [] : CODE_PATHS;
    const args = ['diff', '--no-renames', '--no-ext-diff', '--no-textconv', '-U0', ...extra, `${sha}^1`, sha, '--', ...paths];
    const r = await runGitUntrusted(args, { cwd: repoDir, maxBytes: 20_000_000 });
    if (r.code !== 0) throw new Error(`git diff ${sha.slice(0, 12)}^1 ${sha.slice(0, 12)} failed: ${r.stderr.trim().slice(0, 200)}`);
    return r.stdout;
  };
  const files = async (sha: string): Promise<string[]> => (await diff(sha, '--name-only')).split('\n').filter(Boolean);
  return fixOverlap({
    badFiles: await files(firstBad),
    badDiff: await diff(firstBad),
    fixFiles: await files(fix),
    fixDiff: await diff(fix),
  });
}
