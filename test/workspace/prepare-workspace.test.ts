import { mkdir, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { prepareWorkspace } from '../../src/workspace/prepare-workspace.js';
import { git, makeToyRepo } from '../helpers/git.js';
import { makeTempDir } from '../helpers/temp-dir.js';

let root: string;
let repo: string;
let bare: string;
let first: string;

/**
 * A repository whose later commits add a top-level package (`testing/`, as kornia's tree did after the commits its
 * reports were filed at): a run at the older commit must not count it as the project's (the candidate fix's import
 * check imports every package the workspace names, and `testing` does not exist there).
 */
beforeAll(async () => {
  root = makeTempDir('repgen-prepare-ws-test-');
  repo = join(root, 'work', 'toy');
  ({ first } = await makeToyRepo(repo));
  await mkdir(join(repo, 'testing'), { recursive: true });
  await writeFile(join(repo, 'testing', '__init__.py'), 'HELPERS = 1\n');
  git(repo, 'add', '-A');
  git(repo, 'commit', '-qm', 'three: add testing/');
  bare = join(root, 'mirrors', 'acme+toy', 'repo');
  git(root, 'clone', '-q', '--bare', repo, bare);
});
afterAll(async () => rm(root, { recursive: true, force: true }));

describe('prepareWorkspace: the packages of the commit checked out', () => {
  it.each([
    ['a mirror (bare), whose head has a package the commit lacks', () => bare],
    ['a work tree, whose files have a package the commit lacks', () => repo],
  ])('%s', async (_label, dir) => {
    const atFirst = await prepareWorkspace({
      repoDir: dir(),
      repo: 'acme/toy',
      explicitRef: 'v0.1.0',
      issueText: 'it fails',
      cacheDir: join(root, 'cache'),
    });
    expect(atFirst.ref.sha).toBe(first);
    expect(atFirst.workspace.packages).toEqual(['toylib']);
    const atHead = await prepareWorkspace({
      repoDir: dir(),
      repo: 'acme/toy',
      explicitRef: 'main',
      issueText: 'it fails',
      cacheDir: join(root, 'cache'),
    });
    expect(atHead.workspace.packages.sort()).toEqual(['testing', 'toylib']);
  });
});

describe('prepareWorkspace on a hostile checkout', () => {
  it('reads no package name through a committed link out of the checkout (its pyproject.toml links to a host file)', async () => {
    const dir = join(root, 'hostile', 'repo');
    await makeToyRepo(dir);
    await writeFile(join(root, 'host-config.toml'), 'name = "host-secret-token"\n');
    await symlink(join(root, 'host-config.toml'), join(dir, 'pyproject.toml'));
    git(dir, 'add', '-A');
    git(dir, 'commit', '-qm', 'link pyproject.toml out');
    const prepared = await prepareWorkspace({
      repoDir: dir,
      repo: 'acme/hostile',
      explicitRef: 'main',
      issueText: 'it fails',
      cacheDir: join(root, 'cache-hostile'),
    });
    expect(prepared.workspace.packages).toEqual(['toylib']);
  });
});
