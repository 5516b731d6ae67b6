import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createPyflakesChecker } from '../../src/agent/pyflakes-checker.js';
import { makeTempDir } from '../helpers/temp-dir.js';
import { restoreEnv } from '../helpers/restore-env.js';

/**
 * A hostile working folder (the Action runs RepGen in the repository's checkout): each file there would run code
 * as RepGen's user if a host-side tool imported or read it. Every probe writes a marker file when it runs.
 */
function hostileFolder(): { dir: string; markers: string[] } {
  const dir = makeTempDir('repgen-hostile-');
  const marker = (name: string): string => join(dir, `PWNED-${name}`);
  const write = (name: string) => `open(${JSON.stringify(marker(name))}, "w").write("ran")\n`;
  writeFileSync(join(dir, 'pyflakes.py'), write('pyflakes-module'));
  mkdirSync(join(dir, 'pylint'));
  writeFileSync(join(dir, 'pylint', '__init__.py'), write('pylint-package'));
  writeFileSync(join(dir, 'pylint', '__main__.py'), write('pylint-main'));
  writeFileSync(join(dir, '.pylintrc'), `[MAIN]\ninit-hook=${write('pylintrc-init-hook').trim()}\n`);
  writeFileSync(join(dir, 'pylintrc'), `[MAIN]\ninit-hook=${write('pylintrc2-init-hook').trim()}\n`);
  writeFileSync(join(dir, 'pyproject.toml'), `[tool.pylint.main]\ninit-hook = '${write('pyproject-init-hook').trim()}'\n`);
  writeFileSync(join(dir, 'setup.cfg'), `[pylint.MAIN]\ninit-hook=${write('setupcfg-init-hook').trim()}\n`);
  writeFileSync(join(dir, 'sitecustomize.py'), write('sitecustomize'));
  writeFileSync(join(dir, 'usercustomize.py'), write('usercustomize'));
  writeFileSync(join(dir, 'ast.py'), write('shadowed-stdlib'));
  const markers = [
    'pyflakes-module',
    'pylint-package',
    'pylint-main',
    'pylintrc-init-hook',
    'pylintrc2-init-hook',
    'pyproject-init-hook',
    'setupcfg-init-hook',
    'sitecustomize',
    'usercustomize',
    'shadowed-stdlib',
  ].map(marker);
  return { dir, markers };
}

describe('the static check never runs code from the working folder (issue 25 item 1)', () => {
  const cwd = process.cwd();
  const env = { ...process.env };
  afterEach(() => {
    process.chdir(cwd);
    restoreEnv(env);
  });

  it('pyflakes and pylint -E run from a hostile folder (with PYTHONPATH and PYLINTRC pointing at it): nothing there runs', async () => {
    const { dir, markers } = hostileFolder();
    process.chdir(dir);
    process.env.PYTHONPATH = dir;
    process.env.PYLINTRC = join(dir, '.pylintrc');
    process.env.PYTHONSTARTUP = join(dir, 'pyflakes.py');
    const checker = createPyflakesChecker({ pylint: true });
    const report = await checker.check('import os\nprint(undefined_name)\nx: int = "a"\n', new AbortController().signal);
    expect(report.tools[0]).toBe('pyflakes');
    expect(report.undefinedNames).toContain('undefined_name');
    expect(markers.filter((m) => existsSync(m))).toEqual([]);
  });
});
