import { execFileSync } from 'node:child_process';
import { mkdir, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkoutAt, compileTree, diskTree, findMirror, gitRefLookup, gitTree, projectPackages } from '../../src/workspace/checkout.js';
import { RefNotFoundError, WorkspaceError } from '../../src/workspace/errors.js';
import { dropBlobs, git, makeToyRepo } from '../helpers/git.js';
import { makeTempDir } from '../helpers/temp-dir.js';

let root: string;
let repo: string;
let first: string;
let second: string;

beforeAll(async () => {
  root = makeTempDir('repgen-checkout-test-');
  repo = join(root, 'mirrors', 'acme+toy', 'repo');
  ({ first, second } = await makeToyRepo(repo, { 'setup.py': "from setuptools import setup\nsetup(name='toy-lib')\n" }));
});
afterAll(async () => rm(root, { recursive: true, force: true }));

describe('gitRefLookup', () => {
  it('resolves tags, abbreviated SHAs and the default branch', async () => {
    const l = gitRefLookup(repo);
    expect(await l.commit('v0.1.0')).toBe(first);
    expect(await l.commit(second.slice(0, 9))).toBe(second);
    expect(await l.commit('v9.9.9')).toBeNull();
    expect(await l.defaultHead()).toEqual({ name: 'main', sha: second });
  });

  it('never reads a ref as an option', async () => {
    const marker = join(root, 'pwned');
    expect(await gitRefLookup(repo).commit(`--output=${marker}`)).toBeNull();
    await expect(readFile(marker)).rejects.toThrow();
  });
});

describe('checkoutAt', () => {
  it('checks a commit out into the cache once, then reuses it', async () => {
    const cacheDir = join(root, 'cache');
    const a = await checkoutAt({ source: repo, sha: first, cacheDir, repo: 'acme/toy' });
    expect(a.cached).toBe(false);
    expect(await readFile(join(a.dir, 'toylib', '__init__.py'), 'utf8')).toBe('VALUE = 1\n');
    const b = await checkoutAt({ source: repo, sha: first, cacheDir, repo: 'acme/toy' });
    expect(b).toEqual({ ...a, cached: true });
    const c = await checkoutAt({ source: repo, sha: second, cacheDir, repo: 'acme/toy' });
    expect(await readFile(join(c.dir, 'toylib', '__init__.py'), 'utf8')).toBe('VALUE = 2\n');
    // The source's work tree is untouched.
    expect(git(repo, 'rev-parse', 'HEAD')).toBe(second);
  });

  it('byte-compiles the tree when given an interpreter', async () => {
    const co = await checkoutAt({ source: repo, sha: second, cacheDir: join(root, 'cache-pyc'), python: '/usr/bin/python3' });
    expect(execFileSync('ls', [join(co.dir, 'toylib', '__pycache__')]).toString()).toMatch(/__init__\..*\.pyc/);
  });

  it('compiles a hostile tree without reading or writing through its links (it runs on the host)', async () => {
    const tree = join(root, 'hostile');
    const outside = join(root, 'outside');
    await mkdir(join(tree, 'pkg'), { recursive: true });
    await mkdir(join(tree, 'other'), { recursive: true });
    await mkdir(join(outside, 'cache'), { recursive: true });
    await writeFile(join(outside, 'settings.py'), 'SECRET = "s3cret-host-value"\n');
    await writeFile(join(tree, 'pkg', 'ok.py'), 'VALUE = 1\n');
    // A file linked out of the tree, a __pycache__ linked out of it, a folder linked out of it.
    await symlink(join(outside, 'settings.py'), join(tree, 'pkg', 'settings.py'));
    await writeFile(join(tree, 'other', 'mod.py'), 'X = 2\n');
    await symlink(join(outside, 'cache'), join(tree, 'other', '__pycache__'));
    await symlink(outside, join(tree, 'linked'));
    await compileTree('/usr/bin/python3', tree);
    const pkgCache = await readdir(join(tree, 'pkg', '__pycache__'));
    expect(pkgCache.some((f) => f.startsWith('ok.'))).toBe(true);
    expect(pkgCache.some((f) => f.startsWith('settings.'))).toBe(false);
    expect(await readdir(join(outside, 'cache'))).toEqual([]);
    expect(await readdir(outside)).toEqual(['cache', 'settings.py']);
  });

  it('reads no project file through a link out of the tree (a linked pyproject.toml names no package)', async () => {
    const tree = join(root, 'hostile-names');
    await mkdir(join(tree, 'realpkg'), { recursive: true });
    await writeFile(join(tree, 'realpkg', '__init__.py'), '');
    await writeFile(join(root, 'host-config.toml'), 'name = "host-secret-token"\n');
    await symlink(join(root, 'host-config.toml'), join(tree, 'pyproject.toml'));
    expect(await projectPackages(diskTree(tree))).toEqual(['realpkg']);
    expect(await diskTree(tree).read('pyproject.toml')).toBeNull();
    expect(await diskTree(tree).read('realpkg/__init__.py')).toBe('');
  });

  it('a commit that is not there is RefNotFoundError, and leaves nothing behind', async () => {
    const cacheDir = join(root, 'cache-missing');
    await expect(checkoutAt({ source: repo, sha: 'f'.repeat(40), cacheDir, repo: 'acme/toy' })).rejects.toBeInstanceOf(RefNotFoundError);
    expect(execFileSync('ls', ['-A', join(cacheDir, 'acme+toy')]).toString()).toBe('');
  });

  it('refuses anything but a full SHA', async () => {
    await expect(checkoutAt({ source: repo, sha: '--help', cacheDir: join(root, 'c') })).rejects.toBeInstanceOf(WorkspaceError);
  });

  it('a source that is not a repository is a WorkspaceError', async () => {
    await expect(checkoutAt({ source: join(root, 'nowhere'), sha: first, cacheDir: join(root, 'c2') })).rejects.toThrow(/cannot clone/);
  });
});

describe('checkoutAt from a source that lacks some files (issue 39 item 9)', () => {
  /** A repository whose docs page and one module are committed but whose content the mirror never got. */
  async function lackingRepo(dir: string): Promise<string> {
    const { second: head } = await makeToyRepo(dir, {});
    await mkdir(join(dir, 'docs'), { recursive: true });
    await writeFile(join(dir, 'docs', 'guide.md'), `# Guide\n${'Long text. '.repeat(40)}\n`);
    await writeFile(join(dir, 'docs', 'index.md'), '# toylib\n');
    await writeFile(join(dir, 'toylib', 'util.py'), 'from toylib import VALUE\nDOUBLE = VALUE * 2\n');
    await writeFile(join(dir, 'toylib', 'plugins.py'), 'NAME = "plugins"\n');
    await writeFile(join(dir, 'toylib', 'data.txt'), 'payload\n');
    git(dir, 'add', '-A');
    git(dir, 'commit', '-qm', 'docs and helpers');
    git(dir, 'tag', 'v0.2.0');
    expect(head).not.toBe(git(dir, 'rev-parse', 'HEAD'));
    return git(dir, 'rev-parse', 'HEAD');
  }

  const python = (dir: string, code: string) =>
    execFileSync('/usr/bin/python3', ['-I', '-c', `import sys; sys.path.insert(0, ${JSON.stringify(dir)})\n${code}`], {
      cwd: dir,
      stdio: ['ignore', 'pipe', 'pipe'],
    }).toString();

  it('writes every file it has, lists the others, and git sees no deletion; a run needing a missing module still fails on it', async () => {
    const src = join(root, 'lacking');
    const sha = await lackingRepo(src);
    await dropBlobs(src, sha, ['docs/guide.md', 'toylib/plugins.py']);
    const cacheDir = join(root, 'cache-lacking');
    const co = await checkoutAt({ source: src, sha, cacheDir, repo: 'acme/lacking', python: '/usr/bin/python3' });
    expect(co.missing).toEqual(['docs/guide.md', 'toylib/plugins.py']);
    expect(await readFile(join(co.dir, 'docs', 'index.md'), 'utf8')).toBe('# toylib\n');
    expect(await readFile(join(co.dir, 'toylib', 'data.txt'), 'utf8')).toBe('payload\n');
    await expect(readFile(join(co.dir, 'docs', 'guide.md'))).rejects.toThrow(/ENOENT/);
    expect(git(co.dir, 'rev-parse', 'HEAD')).toBe(sha);
    expect(git(co.dir, 'status', '--porcelain', '--untracked-files=no')).toBe('');
    expect(python(co.dir, 'import toylib.util; print(toylib.util.DOUBLE)').trim()).toBe('4');
    expect(() => python(co.dir, 'import toylib.plugins')).toThrow(/No module named 'toylib.plugins'/);
    // The cached checkout says the same.
    expect(await checkoutAt({ source: src, sha, cacheDir, repo: 'acme/lacking' })).toEqual({ ...co, cached: true });
    // Where nothing is missing, the checkout is whole and says so.
    const whole = await checkoutAt({ source: src, sha: git(src, 'rev-parse', 'v0.1.0'), cacheDir, repo: 'acme/lacking' });
    expect(whole.missing).toEqual([]);
  });

  it('checks out a partial clone (`--filter=blob:limit`) whose remote is gone', async () => {
    const upstream = join(root, 'lacking-upstream');
    const sha = await lackingRepo(upstream);
    git(upstream, 'config', 'uploadpack.allowFilter', 'true');
    const mirror = join(root, 'mirrors-partial', 'acme+partial', 'repo');
    await mkdir(join(root, 'mirrors-partial'), { recursive: true });
    // Blobs over 200 bytes stay on the remote: the long docs page.
    git(root, 'clone', '-q', '--bare', '--filter=blob:limit=200', `file://${upstream}`, mirror);
    await rm(upstream, { recursive: true, force: true });
    const co = await checkoutAt({ source: mirror, sha, cacheDir: join(root, 'cache-partial'), repo: 'acme/partial' });
    expect(co.missing).toEqual(['docs/guide.md']);
    expect(python(co.dir, 'import toylib.plugins; print(toylib.plugins.NAME)').trim()).toBe('plugins');
    expect(git(co.dir, 'status', '--porcelain', '--untracked-files=no')).toBe('');
  });
});

describe('findMirror', () => {
  it('finds the fetch tool layout and rejects path tricks', async () => {
    expect(await findMirror(join(root, 'mirrors'), 'acme/toy')).toBe(repo);
    expect(await findMirror(join(root, 'mirrors'), 'acme/other')).toBeNull();
    expect(await findMirror(join(root, 'mirrors'), '../mirrors')).toBeNull();
    expect(await findMirror(join(root, 'mirrors'), 'acme/..')).toBeNull();
  });
});

describe('projectPackages', () => {
  it('reads import packages and the distribution name, from disk or from a commit', async () => {
    expect((await projectPackages(diskTree(repo))).sort()).toEqual(['toy-lib', 'toylib']);
    expect((await projectPackages(gitTree(repo, first))).sort()).toEqual(['toy-lib', 'toylib']);
  });

  it("a committed file past git's output limit reads as missing, never as its tail (issue 38)", async () => {
    const big = join(root, 'big-file-repo');
    const { second: head } = await makeToyRepo(big, {
      'setup.py': `# ${'x'.repeat(1_100_000)}\nfrom setuptools import setup\nsetup(name='tail-only')\n`,
    });
    expect(await gitTree(big, head).read('setup.py')).toBeNull();
  });
});

describe('checkoutAt permissions', () => {
  it('leaves the checkout readable by other uids (the sandbox runs scripts as nobody)', async () => {
    const { statSync } = await import('node:fs');
    const co = await checkoutAt({ source: repo, sha: first, cacheDir: join(root, 'cache-perm') });
    expect(statSync(co.dir).mode & 0o005).toBe(0o005);
  });
});

describe('the checkout cache trusts only folders of its own (issue 25 item 3)', () => {
  const asRoot = process.getuid?.() === 0;

  it.runIf(asRoot)('refuses an entry another user planted under the right SHA, and says which folder and what to do', async () => {
    const cacheDir = join(root, 'cache-planted');
    // Another local user got there first: the repository folder and a fake checkout at the SHA, all theirs.
    const planted = join(cacheDir, 'acme+toy', first);
    await mkdir(join(planted, '.git'), { recursive: true });
    await writeFile(join(planted, 'evil.py'), 'VALUE = "planted"\n');
    execFileSync('chown', ['-R', '65534:65534', join(cacheDir, 'acme+toy')]);
    await expect(checkoutAt({ source: repo, sha: first, cacheDir, repo: 'acme/toy' })).rejects.toThrow(
      /acme\+toy' is owned by uid 65534.*REPGEN_CHECKOUT_CACHE_DIR/,
    );
  });

  it('refuses a cache root anyone can write to, and a planted entry in a folder of its own that is a link', async () => {
    const open = join(root, 'cache-open');
    await mkdir(open, { mode: 0o777 });
    execFileSync('chmod', ['0777', open]);
    await expect(checkoutAt({ source: repo, sha: first, cacheDir: open, repo: 'acme/toy' })).rejects.toThrow(/writable by others/);
    const own = join(root, 'cache-own');
    await mkdir(join(own, 'acme+toy'), { recursive: true });
    await mkdir(join(root, 'elsewhere', '.git'), { recursive: true });
    await symlink(join(root, 'elsewhere'), join(own, 'acme+toy', first));
    await expect(checkoutAt({ source: repo, sha: first, cacheDir: own, repo: 'acme/toy' })).rejects.toThrow(/symbolic link/);
  });
});
