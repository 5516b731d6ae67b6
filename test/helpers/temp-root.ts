import { chmodSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * What is kept under the temp folder across runs on purpose, and so is no test's leak: the product's default caches
 * (src/config, src/context, src/workspace, src/pipeline/run-spec.ts: the env cache) and its compiled sandbox launcher (src/exec/sandbox), which a test running
 * the product with its defaults makes; tsx's compile cache (tsx-<uid>), which every process started through
 * bin/repgen.js or tsx makes; pytest's pytest-of-<user>, where pytest keeps its last three runs' temp folders.
 */
export const KEPT = [
  /^repgen-probe-cache$/,
  /^repgen-checkouts$/,
  /^repgen-envs$/,
  /^repgen-context-cache$/,
  /^repgen-launcher-\d+$/,
  /^tsx-\d+$/,
  /^pytest-of-/,
];

/** What a test run left in its temp root: every entry but the caches kept on purpose. */
export function leftoversIn(root: string): string[] {
  return readdirSync(root)
    .filter((name) => !KEPT.some((re) => re.test(name)))
    .sort();
}

/**
 * Vitest's globalSetup: the whole run gets one temp root of its own, os.tmpdir()/repgen-test-<pid>, and TMPDIR
 * points there, so every os.tmpdir() of the test workers, and of the processes they start, lands in it. At the end
 * the root must hold nothing a test made (each test removes what it makes: test/helpers/temp-dir.ts), and is
 * removed. A root per run, rather than a look at /tmp before and after, because other work on the machine (another
 * checkout's suite, a benchmark) makes repgen-* folders in /tmp at the same time.
 */
export default function setup(): () => void {
  const outer = tmpdir();
  const root = join(outer, `repgen-test-${process.pid}`);
  rmSync(root, { recursive: true, force: true });
  mkdirSync(root);
  // Like /tmp: the sandbox runs scripts as an unprivileged uid when the tests run as root, and they write here too.
  chmodSync(root, 0o1777);
  const before = process.env.TMPDIR;
  process.env.TMPDIR = root;
  return () => {
    if (before === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = before;
    const left = leftoversIn(root);
    try {
      rmSync(root, { recursive: true, force: true });
    } catch (e) {
      left.push(`(the root itself: ${(e as Error).message})`);
    }
    if (left.length > 0) {
      // Vitest reports an error thrown here but still exits 0: the exit code is set by hand so the run fails.
      process.exitCode = 1;
      throw new Error(
        `the tests left ${left.length} folder(s) or file(s) in their temp root (now removed): ${left.join(', ')}. ` +
          'Each test removes what it makes (makeTempDir in test/helpers/temp-dir.ts does it for you).',
      );
    }
  };
}
