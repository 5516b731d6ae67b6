import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commitFixOverlap, diffLines, fixOverlap } from '../../src/bisect/fix-overlap.js';
import { git } from '../helpers/git.js';
import { makeTempDir } from '../helpers/temp-dir.js';

describe('diffLines / fixOverlap', () => {
  const diff = [
    '--- a/pkg/helpers.py',
    '+++ b/pkg/helpers.py',
    '@@ -1,2 +1,2 @@',
    '-from torch._six import container_abcs',
    '+import collections.abc',
    '+    pass',
    '+# a comment line that is long',
  ].join('\n');

  it('reads added and removed lines without headers, short lines or comments', () => {
    expect(diffLines(diff, '+')).toEqual(['import collections.abc']);
    expect(diffLines(diff, '-')).toEqual(['from torch._six import container_abcs']);
  });

  it('finds a line the fix removes that the first bad commit added, under another file name', () => {
    const bad = ['+++ b/pkg/conv2d_layers.py', '+from torch._six import container_abcs', '+        return x'].join('\n');
    const o = fixOverlap({ badFiles: ['pkg/conv2d_layers.py'], badDiff: bad, fixFiles: ['pkg/helpers.py'], fixDiff: diff });
    expect(o).toEqual({ sameFiles: [], fixedLinesAdded: ['from torch._six import container_abcs'] });
  });
});

describe('commitFixOverlap on a repository', () => {
  let repo: string;
  beforeAll(async () => {
    repo = makeTempDir('repgen-fix-overlap-');
    await mkdir(join(repo, 'pkg'));
    git(repo, 'init', '-q');
    await writeFile(join(repo, 'pkg', 'a.py'), 'X = 1\n');
    git(repo, 'add', '-A');
    git(repo, 'commit', '-qm', 'one');
    await writeFile(join(repo, 'pkg', 'a.py'), 'X = 1\nvalue = compute_the_value(2)\n');
    await writeFile(join(repo, 'notes.ipynb'), '{"cells": ["value = compute_the_value(2)"]}\n');
    git(repo, 'add', '-A');
    git(repo, 'commit', '-qm', 'bring the bug');
    await writeFile(join(repo, 'README.md'), 'x\n');
    git(repo, 'add', '-A');
    git(repo, 'commit', '-qm', 'unrelated');
    git(repo, 'mv', 'pkg/a.py', 'pkg/b.py');
    git(repo, 'commit', '-qm', 'rename');
    await writeFile(join(repo, 'pkg', 'b.py'), 'X = 1\nvalue = compute_the_value(1)\n');
    git(repo, 'commit', '-qam', 'fix');
  });
  afterAll(async () => rm(repo, { recursive: true, force: true }));

  it('ties the commit that brought the bug to the fix by the line, the unrelated one by nothing', async () => {
    const fix = git(repo, 'rev-parse', 'HEAD');
    expect(await commitFixOverlap(repo, git(repo, 'rev-parse', 'HEAD~3'), fix)).toEqual({
      sameFiles: [],
      fixedLinesAdded: ['value = compute_the_value(2)'],
    });
    expect(await commitFixOverlap(repo, git(repo, 'rev-parse', 'HEAD~2'), fix)).toEqual({ sameFiles: [], fixedLinesAdded: [] });
    // The rename commit touches the fixed file's path (--no-renames: both names count).
    expect((await commitFixOverlap(repo, git(repo, 'rev-parse', 'HEAD~1'), fix)).sameFiles).toEqual(['pkg/b.py']);
  });
});
