import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localBisectSource } from '../../src/bisect/local-bisect-source.js';
import { git } from '../helpers/git.js';
import { makeTempDir } from '../helpers/temp-dir.js';

// Releases tagged on a release branch (timm's v0.6.12 is on 0.6.x, not on main): the tag is no ancestor of the
// issue's ref on main, so the bisection starts where the branch left main (their merge base), as git bisect does.
let root: string;
let repo: string;
const main: string[] = [];
let release: string;

beforeAll(async () => {
  root = makeTempDir('repgen-bisect-source-');
  repo = join(root, 'repo');
  await mkdir(join(repo, 'toylib'), { recursive: true });
  git(repo, 'init', '-q');
  for (let i = 0; i < 6; i++) {
    if (i === 3) {
      // 1.x branches off main after its third commit; v1.1 is tagged on it after a backport.
      git(repo, 'checkout', '-q', '-b', '1.x');
      await writeFile(join(repo, 'toylib', 'backport.py'), 'X = 1\n');
      git(repo, 'add', '-A');
      git(repo, 'commit', '-qm', 'backport a fix');
      git(repo, 'tag', 'v1.1');
      release = git(repo, 'rev-parse', 'HEAD');
      git(repo, 'checkout', '-q', 'main');
    }
    await writeFile(join(repo, 'toylib', '__init__.py'), `V = ${i}\n`);
    git(repo, 'add', '-A');
    git(repo, 'commit', '-qm', `main ${i}`);
    main.push(git(repo, 'rev-parse', 'HEAD'));
    if (i === 0) git(repo, 'tag', 'v1.0');
  }
});
afterAll(async () => rm(root, { recursive: true, force: true }));

function source(good: string | null, issueText = '') {
  return localBisectSource({
    repoDir: repo,
    repo: 'o/toylib',
    good,
    issueText,
    packages: ['toylib'],
    bad: { ref: 'main', sha: main[5]! },
    cacheDir: join(root, 'checkouts'),
  });
}

describe('localBisectSource', () => {
  it('a GOOD on another branch bisects from the merge base, and says so', async () => {
    const { source: s } = await source('v1.1');
    expect(s?.good.sha).toBe(main[2]);
    expect(s?.good.sha).not.toBe(release);
    expect(s?.good.why).toMatch(/v1\.1 is on another branch.*merge base/);
    const commits = await s!.commits();
    expect(commits.map((c) => c.sha)).toEqual(main.slice(3));
  });

  it('a worked version the report names on a release branch does the same', async () => {
    const { source: s } = await source(null, 'It worked in 1.1, broken on main.');
    expect(s?.good.sha).toBe(main[2]);
    expect(s?.good.why).toContain('worked in 1.1');
  });

  it("a GOOD on the issue ref's own line is used as it is", async () => {
    const { source: s } = await source('v1.0');
    expect(s?.good).toMatchObject({ ref: 'v1.0', sha: main[0], why: 'asked to bisect from v1.0' });
    expect((await s!.commits()).map((c) => c.sha)).toEqual(main.slice(1));
  });
});
