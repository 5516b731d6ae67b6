import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createPyflakesChecker } from '../../src/agent/pyflakes-checker.js';
import { makeTempDir } from '../helpers/temp-dir.js';
import { restoreEnv } from '../helpers/restore-env.js';

/**
 * The static check runs on the host, outside the sandbox, in whatever folder RepGen was started in: in the Action,
 * the repository's checkout. Nothing there may be imported or read as config (issue 25, item 1).
 */
describe('hostile working folder: the static check runs nothing of it', () => {
  let dir: string;
  let cwd: string;
  const marker = (name: string): string => join(dir, name);
  const plant = (rel: string, text: string): void => {
    mkdirSync(join(dir, rel, '..'), { recursive: true });
    writeFileSync(join(dir, rel), text);
  };
  const touch = (name: string): string => `import os; open(${JSON.stringify(marker(name))}, "w").write(str(os.getuid()))\n`;

  beforeEach(() => {
    dir = makeTempDir('repgen-hostile-cwd-');
    cwd = process.cwd();
    process.chdir(dir);
  });
  afterEach(() => {
    process.chdir(cwd);
    rmSync(dir, { recursive: true, force: true });
  });

  it('a pyflakes.py in the working folder is not imported (the issue: PWNED held uid 0)', async () => {
    plant('pyflakes.py', touch('PWNED'));
    plant('pyflakes/__main__.py', touch('PWNED-pkg'));
    const r = await createPyflakesChecker({ pylint: false }).check('print(np.zeros(3))\n');
    expect(existsSync(marker('PWNED'))).toBe(false);
    expect(existsSync(marker('PWNED-pkg'))).toBe(false);
    expect(r.undefinedNames).toEqual(['np']);
  });

  it('a pylint/ package in the working folder is not imported', async () => {
    plant('pylint/__init__.py', touch('PWNED'));
    plant('pylint/__main__.py', touch('PWNED-main'));
    plant('astroid/__init__.py', touch('PWNED-astroid'));
    const r = await createPyflakesChecker({ pylint: true }).check('def f(x):\n    return x\nf()\n');
    expect(existsSync(marker('PWNED'))).toBe(false);
    expect(existsSync(marker('PWNED-main'))).toBe(false);
    expect(existsSync(marker('PWNED-astroid'))).toBe(false);
    expect(r.tools).toContain('pylint -E');
    expect(r.findings.some((f) => f.tool === 'pylint' && /E1120/.test(f.message))).toBe(true);
  });

  it.each([
    ['.pylintrc', (hook: string) => `[MAIN]\ninit-hook=${hook}\n`],
    ['pylintrc', (hook: string) => `[MAIN]\ninit-hook=${hook}\n`],
    ['pyproject.toml', (hook: string) => `[tool.pylint.main]\ninit-hook = '${hook}'\n`],
    ['setup.cfg', (hook: string) => `[pylint.main]\ninit-hook=${hook}\n`],
  ])('a %s with an init-hook in the working folder is not read', async (name, config) => {
    plant(name, config(`open(${JSON.stringify(marker('PWNED'))}, "w").write("hook")`));
    const r = await createPyflakesChecker({ pylint: true }).check('x = 1\nprint(x)\n');
    expect(r.tools).toContain('pylint -E');
    expect(existsSync(marker('PWNED'))).toBe(false);
  });

  it('a config of a parent package of the working folder is not read either', async () => {
    plant('__init__.py', '');
    plant('.pylintrc', `[MAIN]\ninit-hook=open(${JSON.stringify(marker('PWNED'))}, "w").write("hook")\n`);
    plant('pkg/__init__.py', '');
    process.chdir(join(dir, 'pkg'));
    await createPyflakesChecker({ pylint: true }).check('x = 1\n');
    expect(existsSync(marker('PWNED'))).toBe(false);
  });

  it('PYTHON* variables and secrets of this process do not reach the tools', async () => {
    plant('sitecustomize.py', touch('PWNED-site'));
    const saved = { ...process.env };
    Object.assign(process.env, { PYTHONPATH: dir, PYTHONSTARTUP: join(dir, 'sitecustomize.py'), PYLINTRC: join(dir, '.pylintrc') });
    plant('.pylintrc', `[MAIN]\ninit-hook=open(${JSON.stringify(marker('PWNED'))}, "w").write("hook")\n`);
    try {
      await createPyflakesChecker({ pylint: true }).check('x = 1\n');
    } finally {
      restoreEnv(saved);
    }
    expect(existsSync(marker('PWNED-site'))).toBe(false);
    expect(existsSync(marker('PWNED'))).toBe(false);
  });
});
