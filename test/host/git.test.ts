import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { gitIdentity } from '../../src/context/index/cache.js';
import { walkRepo } from '../../src/context/walk-repo.js';
import { gitEnv, repoCommandKeys, runGit, withoutSubmodules } from '../../src/host/git.js';
import { makeTempDir } from '../helpers/temp-dir.js';
import { restoreEnv } from '../helpers/restore-env.js';

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'user.email=t@t', '-c', 'user.name=t', ...args], { cwd, env: { PATH: process.env.PATH ?? '' } });

/**
 * A repository a user points `--repo` at, set up to run a probe (env > marker) from every place git takes a command:
 * core.fsmonitor (directly and through include / includeIf), hooks, a clean filter that a .gitattributes applies on
 * `status`, a textconv and an external diff. The probe writes RepGen's environment: a secret must never be in it.
 */
function hostileRepo(): { dir: string; marker: string } {
  const dir = makeTempDir('repgen-hostile-git-');
  const marker = join(dir, '..', `${dir.split('/').pop()}-PWNED`);
  const probe = join(dir, 'probe.sh');
  writeFileSync(probe, `#!/bin/sh\nenv >> ${marker}\ncat\n`);
  chmodSync(probe, 0o755);
  git(dir, 'init', '-q');
  writeFileSync(join(dir, 'a.py'), 'x = 1\n');
  writeFileSync(join(dir, '.gitattributes'), '*.py filter=evil diff=evil\n');
  git(dir, 'add', '.');
  git(dir, 'commit', '-qm', 'init');
  writeFileSync(join(dir, 'a.py'), 'x = 2\n'); // dirty: status and diff must look at it
  writeFileSync(join(dir, 'new.py'), 'y = 1\n');
  mkdirSync(join(dir, '.git', 'hooks'), { recursive: true });
  for (const hook of ['post-checkout', 'post-index-change', 'pre-commit', 'reference-transaction'])
    writeFileSync(join(dir, '.git', 'hooks', hook), `#!/bin/sh\nenv >> ${marker}\n`, { mode: 0o755 });
  const inc = join(dir, 'included.cfg');
  writeFileSync(inc, `[core]\n\tfsmonitor = ${probe}\n`);
  const cfg = [
    '[core]',
    `\tfsmonitor = ${probe}`,
    '[filter "evil"]',
    `\tclean = ${probe}`,
    `\tsmudge = ${probe}`,
    '\trequired = true',
    '[diff "evil"]',
    `\ttextconv = ${probe}`,
    `\tcommand = ${probe}`,
    '[diff]',
    `\texternal = ${probe}`,
    '[include]',
    `\tpath = ${inc}`,
    `[includeIf "gitdir:${dir}/"]`,
    `\tpath = ${inc}`,
  ].join('\n');
  writeFileSync(join(dir, '.git', 'config'), `${readFileSync(join(dir, '.git', 'config'), 'utf8')}\n${cfg}\n`);
  return { dir, marker };
}

describe('git on a folder RepGen did not make runs nothing from its config (issue 25 item 2)', () => {
  const saved = { ...process.env };
  afterEach(() => {
    restoreEnv(saved);
  });

  it("the context cache's identity (status, diff), the file walk and runGit: no probe runs, no secret leaks", async () => {
    const { dir, marker } = hostileRepo();
    // Proof the repository is armed: plain git status with the user's environment runs the probe.
    execFileSync('git', ['status', '--porcelain'], { cwd: dir, env: { PATH: process.env.PATH ?? '', GITHUB_TOKEN: 'ghs_armed' } });
    expect(readFileSync(marker, 'utf8')).toContain('ghs_armed');
    execFileSync('rm', ['-f', marker]);

    process.env.GITHUB_TOKEN = 'ghs_secret_token';
    process.env.PRIVATE_KEY = 'private-key-value';
    const identity = await gitIdentity(dir);
    expect(identity).toMatch(/^git:[0-9a-f]{40}\+dirty:/);
    const files = await walkRepo(dir, { maxFileBytes: 1 << 20 });
    expect(files.files.map((f) => f.path).sort()).toEqual(expect.arrayContaining(['a.py', 'new.py']));
    for (const args of [
      ['status', '--porcelain'],
      ['diff', 'HEAD'],
      ['log', '-1', '-p'],
      ['checkout', '-q', '--', 'a.py'],
    ])
      await runGit(args, { cwd: dir });
    expect(existsSync(marker) ? readFileSync(marker, 'utf8') : 'nothing ran').toBe('nothing ran');
  });

  it('finds every command-naming key of a config listing, and un-requires a blanked filter', () => {
    const list = ['core.fsmonitor\n/x', 'filter.evil.clean\n/x', 'diff.evil.textconv\n/x', 'core.bare\nfalse', 'user.name\nme'].join('\0');
    expect(repoCommandKeys(list)).toEqual([
      ['core.fsmonitor', 'false'],
      ['filter.evil.clean', ''],
      ['filter.evil.required', 'false'],
      ['diff.evil.textconv', ''],
    ]);
  });
});

describe('git never goes into a submodule (issue 38 item 2)', () => {
  it('a work-tree diff gets --ignore-submodules=all after its subcommand; other commands and an explicit choice are left alone', () => {
    expect(withoutSubmodules(['status', '--porcelain'])).toEqual(['status', '--ignore-submodules=all', '--porcelain']);
    expect(withoutSubmodules(['-c', 'a.b=c', 'diff', 'HEAD'])).toEqual(['-c', 'a.b=c', 'diff', '--ignore-submodules=all', 'HEAD']);
    expect(withoutSubmodules(['diff-index', 'HEAD'])).toEqual(['diff-index', '--ignore-submodules=all', 'HEAD']);
    expect(withoutSubmodules(['log', '-1'])).toEqual(['log', '-1']);
    expect(withoutSubmodules(['status', '--ignore-submodules=dirty'])).toEqual(['status', '--ignore-submodules=dirty']);
  });

  it('every git RepGen starts, the clone included, has recursion into submodules off on its command line', () => {
    const env = gitEnv();
    const settings = Object.fromEntries(
      Array.from({ length: Number(env.GIT_CONFIG_COUNT) }, (_, i) => [env[`GIT_CONFIG_KEY_${i}`], env[`GIT_CONFIG_VALUE_${i}`]]),
    );
    expect(settings).toMatchObject({ 'submodule.recurse': 'false', 'diff.ignoreSubmodules': 'all', 'fetch.recurseSubmodules': 'false' });
  });
});
