import { chmodSync, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { makeTempDir } from '../helpers/temp-dir.js';

/** The pylint -E finding the fake pylint prints (an error the outcome reads as "does not compile"). */
export const FAKE_PYLINT_FINDING = "E1120: No value for argument 'x' in function call (no-value-for-parameter)";

export interface FakeStaticPython {
  /** The interpreter to give as settings.staticPython. */
  python: string;
  /** One `{ tool, pid }` per tool started so far (`python -m pyflakes`, `python -m pylint`), in order. */
  started(): { tool: string; pid: number }[];
  /** Whether process `pid` is still alive. */
  alive(pid: number): boolean;
  cleanup(): void;
}

/**
 * An interpreter for the static checker that runs no real tool: `-m pyflakes` finds nothing, `-m pylint` waits
 * `pylintSeconds` (astroid reading torch, in small) and then prints {@link FAKE_PYLINT_FINDING}. Each start is logged
 * with its pid, so that a test can see a pylint was started and whether its process is gone.
 */
export function fakeStaticPython(pylintSeconds: number): FakeStaticPython {
  const dir = makeTempDir('repgen-fake-lint-');
  const log = join(dir, 'started.log');
  const python = join(dir, 'python');
  writeFileSync(
    python,
    [
      '#!/usr/bin/python3 -S',
      'import os, sys, time',
      "tool = sys.argv[sys.argv.index('-m') + 1] if '-m' in sys.argv[:-1] else ''",
      `with open(${JSON.stringify(log)}, 'a') as f:`,
      "    f.write(f'{tool} {os.getpid()}\\n')",
      'sys.stdin.read()',
      "if tool == 'pylint':",
      `    time.sleep(${pylintSeconds})`,
      `    print(${JSON.stringify(`repro.py:1:0: ${FAKE_PYLINT_FINDING}`)})`,
      '',
    ].join('\n'),
  );
  chmodSync(python, 0o755);
  return {
    python,
    started: () =>
      existsSync(log)
        ? readFileSync(log, 'utf8')
            .trim()
            .split('\n')
            .map((l) => ({ tool: l.split(' ')[0] ?? '', pid: Number(l.split(' ')[1]) }))
        : [],
    alive: (pid) => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    },
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}
