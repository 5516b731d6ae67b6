import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { gitBisectSource, MAX_BISECT_COMMITS, parseFirstParentLog } from '../../src/bisect/git-bisect-source.js';
import { makeTempDir } from '../helpers/temp-dir.js';

const env = { PATH: process.env.PATH, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' };

/** A linear history of `n` commits on main (git fast-import: seconds, not minutes), each subject `c<i> ` + `subject`. */
function longHistory(n: number, subject: (i: number) => string): { dir: string; shas: string[] } {
  const dir = makeTempDir('repgen-bisect-log-');
  execFileSync('git', ['init', '-q', '-b', 'main'], { cwd: dir, env });
  const parts: string[] = [];
  for (let i = 0; i < n; i++) {
    const msg = `c${i} ${subject(i)}\n`;
    parts.push(`commit refs/heads/main\nmark :${i + 1}\ncommitter a <a@b> ${1_700_000_000 + i} +0000\n`);
    parts.push(`data ${Buffer.byteLength(msg)}\n${msg}${i ? `from :${i}\n` : ''}\n`);
  }
  execFileSync('git', ['fast-import', '--quiet'], { cwd: dir, env, input: parts.join('') });
  const shas = execFileSync('git', ['rev-list', '--reverse', 'main'], { cwd: dir, env, encoding: 'utf8' }).trim().split('\n');
  return { dir, shas };
}

describe('gitBisectSource.commits reads the whole range, or refuses', () => {
  it(
    'a range whose log passes 1 MB (long subjects): the newest MAX_BISECT_COMMITS commits, oldest first, every one a real hash (it kept the newest 2,208 of 5,200, the oldest one cut from a subject)',
    { timeout: 120_000 },
    async () => {
      const n = MAX_BISECT_COMMITS + 200;
      const { dir, shas } = longHistory(n, (i) => `${'x'.repeat(400)} ${i}`);
      const good = shas[0]!;
      const bad = shas[n - 1]!;
      const src = gitBisectSource({
        repoDir: dir,
        repo: 'o/long',
        good: { ref: 'good', sha: good, why: '' },
        bad: { ref: 'bad', sha: bad },
        cacheDir: tmpdir(),
      });
      const commits = await src.commits();
      expect(commits).toHaveLength(MAX_BISECT_COMMITS);
      expect(commits.map((c) => c.sha)).toEqual(shas.slice(n - MAX_BISECT_COMMITS));
      expect(commits[0]!.subject).toMatch(/^c200 x{190}/);
      expect(commits.every((c) => c.subject.length <= 200)).toBe(true);
      // The search starts where the kept commits do, and says why.
      expect(src.good.sha).toBe(shas[n - MAX_BISECT_COMMITS - 1]);
      expect(src.good.why).toMatch(
        new RegExp(`^; good\\.\\.bad holds more than ${MAX_BISECT_COMMITS} first-parent commits, so only the newest`),
      );
    },
  );

  it('a range under the ceiling: every commit after GOOD up to BAD, subjects whole', async () => {
    const { dir, shas } = longHistory(30, (i) => `subject\twith a tab ${i}`);
    const src = gitBisectSource({
      repoDir: dir,
      repo: 'o/short',
      good: { ref: 'good', sha: shas[4]!, why: '' },
      bad: { ref: 'bad', sha: shas[29]! },
      cacheDir: tmpdir(),
    });
    const commits = await src.commits();
    expect(commits.map((c) => c.sha)).toEqual(shas.slice(5));
    expect(commits[0]!.subject).toBe('c5 subject\twith a tab 5');
  });

  it('a record that does not start with a full hash is an error, never a commit', () => {
    const sha = 'a'.repeat(40);
    expect(parseFirstParentLog(`${sha}\tfix\0${'b'.repeat(64)}\tsha-256 repo\0`)).toEqual([
      { sha, subject: 'fix' },
      { sha: 'b'.repeat(64), subject: 'sha-256 repo' },
    ]);
    expect(() => parseFirstParentLog(`xxxxxxxxxxxx\tsubject tail\0${sha}\tfix\0`)).toThrow(/not a commit/);
    expect(() => parseFirstParentLog(`${sha.slice(1)}\tfix\0`)).toThrow(/not a commit/);
  });
});

describe('gitBisectSource.changedFiles', () => {
  it('reads paths NUL-separated: a path holding a newline is one path (it was two)', async () => {
    const dir = makeTempDir('repgen-bisect-files-');
    const git = (...args: string[]): string =>
      execFileSync('git', ['-c', 'user.name=a', '-c', 'user.email=a@b', ...args], { cwd: dir, env, encoding: 'utf8' });
    git('init', '-q', '-b', 'main');
    writeFileSync(join(dir, 'a.py'), 'x = 1\n');
    git('add', '-A');
    git('commit', '-qm', 'one');
    writeFileSync(join(dir, 'odd\nname.py'), 'y = 1\n');
    writeFileSync(join(dir, 'a.py'), 'x = 2\n');
    git('add', '-A');
    git('commit', '-qm', 'two');
    const [good, bad] = git('rev-list', '--reverse', 'main').trim().split('\n');
    const src = gitBisectSource({
      repoDir: dir,
      repo: 'o/files',
      good: { ref: 'good', sha: good!, why: '' },
      bad: { ref: 'bad', sha: bad! },
      cacheDir: tmpdir(),
    });
    expect((await src.changedFiles(bad!)).sort()).toEqual(['a.py', 'odd\nname.py']);
  });
});
