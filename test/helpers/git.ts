import { execFileSync } from 'node:child_process';
import { mkdir, unlink, writeFile } from 'node:fs/promises';
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

export const GOOD_CODE = 'def value():\n    return 1\n';
export const BAD_CODE = 'def value():\n    return 2\n';

/**
 * A regression for bisection tests: `toylib.value()` returns 1 at the tag v1.0; of the 12 first-parent commits
 * after it, commit 4 breaks the import (fixed at 5) and commit 8 merges a side branch ("Merge pull request #42")
 * whose own commits break the import and then bring `bug`. `shas` are the 12, oldest first.
 */
export async function makeRegressionRepo(repo: string, bug: string = BAD_CODE): Promise<{ repo: string; shas: string[]; head: string }> {
  await mkdir(join(repo, 'toylib'), { recursive: true });
  git(repo, 'init', '-q');
  const write = (code: string) => writeFile(join(repo, 'toylib', '__init__.py'), code);
  await write(GOOD_CODE);
  await writeFile(join(repo, 'README.md'), 'toylib\n');
  git(repo, 'add', '-A');
  git(repo, 'commit', '-qm', 'release 1.0');
  git(repo, 'tag', 'v1.0');
  const shas: string[] = [];
  let code = GOOD_CODE;
  for (let i = 1; i <= 12; i++) {
    if (i === 4) await write(`import no_such_module_xyz\n${code}`);
    else if (i === 8) {
      git(repo, 'checkout', '-q', '-b', 'side', 'HEAD');
      await write(`import also_missing_xyz\n${code}`);
      git(repo, 'commit', '-qam', 'side: wip');
      code = bug;
      await write(code);
      git(repo, 'commit', '-qam', 'side: rework value()');
      git(repo, 'checkout', '-q', 'main');
      git(repo, 'merge', '-q', '--no-ff', '-m', 'Merge pull request #42 from someone/side', 'side');
      shas.push(git(repo, 'rev-parse', 'HEAD'));
      continue;
    } else {
      await write(code);
      await writeFile(join(repo, 'README.md'), `toylib rev ${i}\n`);
    }
    git(repo, 'commit', '-qam', `change ${i}`);
    shas.push(git(repo, 'rev-parse', 'HEAD'));
  }
  return { repo, shas, head: git(repo, 'rev-parse', 'HEAD') };
}

/**
 * Removes the content of `paths` at `rev` from `repo` (their blobs' loose object files), as a mirror that never
 * fetched them lacks it; returns the blobs' ids. The repository must not have packed them (a fresh one has not).
 */
export async function dropBlobs(repo: string, rev: string, paths: string[]): Promise<string[]> {
  const objects = git(repo, 'rev-parse', '--git-path', 'objects');
  const ids = paths.map((p) => git(repo, 'rev-parse', `${rev}:${p}`));
  for (const id of ids) await unlink(join(repo, objects, id.slice(0, 2), id.slice(2)));
  return ids;
}
