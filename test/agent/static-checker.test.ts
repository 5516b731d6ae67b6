import { chmodSync, existsSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CancelledError } from '../../src/errors.js';
import { createPyflakesChecker } from '../../src/agent/pyflakes-checker.js';
import { parsePyflakesOutput, parsePylintOutput } from '../../src/agent/static-checker.js';
import { fakeStaticPython } from '../fakes/fake-static-python.js';
import { parsePython, pythonLikelihood } from '../../src/context/python-syntax.js';
import { makeTempDir } from '../helpers/temp-dir.js';

describe('static check', () => {
  it('reads pyflakes output: undefined names are errors, unused imports are warnings', () => {
    const r = parsePyflakesOutput(
      "<stdin>:1:1: 'os' imported but unused\n<stdin>:2:5: undefined name 'np'\n<stdin>:3:7: undefined name 'np'\n",
    );
    expect(r.undefinedNames).toEqual(['np']);
    expect(r.findings.map((f) => f.severity)).toEqual(['warning', 'error', 'error']);
  });

  it('reads pylint -E output', () => {
    expect(parsePylintOutput("repro.py:4:0: E1120: No value for argument 'x' in function call (no-value-for-parameter)")).toEqual([
      { line: 4, message: "E1120: No value for argument 'x' in function call (no-value-for-parameter)", severity: 'error', tool: 'pylint' },
    ]);
  });

  it('runs the real pyflakes (and pylint -E when installed) on a script', async () => {
    const checker = createPyflakesChecker({ pylint: true });
    const r = await checker.check('import torch\ndef f(x):\n    return x\nf()\nprint(np.zeros(3))\n');
    expect(r.undefinedNames).toEqual(['np']);
    expect(r.tools[0]).toBe('pyflakes');
    if (r.tools.includes('pylint -E')) expect(r.findings.some((f) => f.tool === 'pylint' && /E1120/.test(f.message))).toBe(true);
    const syntax = await checker.check('x = (1,\n');
    expect(syntax.findings.some((f) => f.severity === 'error')).toBe(true);
  });

  it('an aborted signal starts no tool (an abort before the spawn would never reach the process)', async () => {
    const lint = fakeStaticPython(0);
    try {
      const controller = new AbortController();
      controller.abort();
      const checker = createPyflakesChecker({ python: lint.python, pylint: true });
      await expect(checker.check('x = 1\n', controller.signal)).rejects.toBeInstanceOf(CancelledError);
      expect(lint.started()).toEqual([]);
      expect((await checker.check('x = 1\n')).tools).toEqual(['pyflakes', 'pylint -E']);
      expect(lint.started().map((t) => t.tool)).toEqual(['pyflakes', 'pylint']);
    } finally {
      lint.cleanup();
    }
  });

  it('lowPriority runs the tools at nice 19, in a session and autogroup of their own at nice 19 (the runs are sessions of their own: a nice in ours would not weigh against them)', async () => {
    const dir = makeTempDir('repgen-nice-');
    const python = join(dir, 'python');
    // A stand-in pyflakes that names, as undefined names, its own niceness, whether it leads its session, and its
    // autogroup's nice where the kernel has autogroups.
    writeFileSync(
      python,
      [
        '#!/usr/bin/python3 -S',
        'import os, sys',
        'sys.stdin.read()',
        'print(f"<stdin>:1:1: undefined name \'nice{os.nice(0)}\'")',
        'print(f"<stdin>:2:1: undefined name \'leader{int(os.getsid(0) == os.getpid())}\'")',
        'try:',
        "    print(f\"<stdin>:3:1: undefined name 'group{open('/proc/self/autogroup').read().split()[-1]}'\")",
        'except OSError:',
        '    pass',
        'sys.exit(1)',
        '',
      ].join('\n'),
    );
    chmodSync(python, 0o755);
    try {
      const base = os.getPriority();
      const hasAutogroup = existsSync('/proc/self/autogroup');
      const low = await createPyflakesChecker({ python, pylint: false, lowPriority: true }).check('x\n');
      const normal = await createPyflakesChecker({ python, pylint: false }).check('x\n');
      expect(low.undefinedNames).toEqual(['nice19', 'leader1', ...(hasAutogroup ? ['group19'] : [])]);
      expect(normal.undefinedNames.slice(0, 2)).toEqual([`nice${base}`, 'leader0']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('parses Python with tree-sitter and tells it from other languages', async () => {
    const p = await parsePython('def f(a, b=1):\n    return a\nclass M:\n    def __init__(self, n):\n        pass\nx = (1,\n');
    expect(p.ok).toBe(false);
    expect(p.problems[0]?.line).toBe(6);
    expect(p.definitions.map((d) => [d.name, d.params])).toEqual([
      ['f', ['a', 'b']],
      ['M', ['n']],
    ]);
    expect(await pythonLikelihood('import torch\nx = torch.ones(3)\nprint(x)\n')).toBe(1);
    expect(
      await pythonLikelihood('Traceback (most recent call last):\n  File "x.py", line 3, in <module>\nRuntimeError: boom\n'),
    ).toBeLessThan(0.8);
  });
});
