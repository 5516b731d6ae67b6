import { execFileSync } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** git in `cwd` with a fixed identity and no user or system config: test repositories that behave the same everywhere. */
export function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', '-c', 'init.defaultBranch=main', ...args], {
    cwd,
    env: { PATH: process.env.PATH ?? '', GIT_CONFIG_GLOBAL: '/dev/null' },
  })
    .toString()
    .trim();
}

/**
 * A two-commit repository at `repo`: `toylib/__init__.py` says `VALUE = 1` at the first (tagged v0.1.0) and
 * `VALUE = 2` at the second; `extra` files go into the first commit.
 */
export async function makeToyRepo(repo: string, extra: Record<string, string> = {}): Promise<{ first: string; second: string }> {
  await mkdir(join(repo, 'toylib'), { recursive: true });
  git(repo, 'init', '-q');
  await writeFile(join(repo, 'toylib', '__init__.py'), 'VALUE = 1\n');
  for (const [path, content] of Object.entries(extra)) await writeFile(join(repo, path), content);
  git(repo, 'add', '-A');
  git(repo, 'commit', '-qm', 'one');
  git(repo, 'tag', 'v0.1.0');
  const first = git(repo, 'rev-parse', 'HEAD');
  await writeFile(join(repo, 'toylib', '__init__.py'), 'VALUE = 2\n');
  git(repo, 'commit', '-qam', 'two');
  return { first, second: git(repo, 'rev-parse', 'HEAD') };
}
