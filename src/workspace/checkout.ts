import { spawn } from 'node:child_process';
import { access, chmod, mkdtemp, readdir, realpath, rename, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, sep } from 'node:path';
import { RefNotFoundError, WorkspaceError } from './errors.js';
import { findMissingFiles } from './find-missing-files.js';
import { runGit } from '../host/git.js';
import { distrust, ensureOwnedDir } from '../host/owned-dir.js';
import { readBounded, ReadBoundedError } from '../host/read-bounded.js';
import type { RefLookup } from './resolve-ref.js';

/**
 * Checkouts of a project at a commit, kept in a cache keyed by (repository, SHA): the same tree serves
 * every run of an issue, its confirmation and a later fix check. A checkout is made in a scratch folder
 * and renamed into place, so a half-made one is never used.
 */

/** Where checkouts are cached. @defaultValue "<os tmpdir>/repgen-checkouts" (REPGEN_CHECKOUT_CACHE_DIR) */
export function checkoutCacheDir(env: NodeJS.ProcessEnv): string {
  return env.REPGEN_CHECKOUT_CACHE_DIR || join(tmpdir(), 'repgen-checkouts');
}

async function exists(p: string): Promise<boolean> {
  return access(p).then(
    () => true,
    () => false,
  );
}

/** Whether `dir` is a git repository (a work tree or a bare one). */
export async function isGitRepo(dir: string): Promise<boolean> {
  const r = await runGit(['rev-parse', '--git-dir'], { cwd: dir }).catch(() => null);
  return r?.code === 0;
}

/** Looks refs up in a local git repository (a clone, a mirror, a bare repository). */
export function gitRefLookup(gitDir: string): RefLookup {
  return {
    async commit(ref) {
      // --end-of-options: a ref is never read as an option, whatever it looks like.
      const r = await runGit(['rev-parse', '--verify', '--quiet', '--end-of-options', `${ref}^{commit}`], { cwd: gitDir });
      const sha = r.stdout.trim();
      return r.code === 0 && /^[0-9a-f]{40}$/.test(sha) ? sha : null;
    },
    async defaultHead() {
      const name = await runGit(['symbolic-ref', '--quiet', '--short', 'HEAD'], { cwd: gitDir });
      const head = await runGit(['rev-parse', '--verify', 'HEAD'], { cwd: gitDir });
      if (head.code !== 0) throw new WorkspaceError(`the repository at '${gitDir}' has no commits`);
      return { name: name.code === 0 ? name.stdout.trim() : 'HEAD', sha: head.stdout.trim() };
    },
  };
}

/** `owner/name` → a folder name safe in any file system. */
export function repoSlug(repo: string): string {
  return repo
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, '+')
    .replace(/^\.+/, '_');
}

export interface CheckoutOptions {
  /** A local git repository holding the commit (a mirror, a clone). */
  source: string;
  /** Full commit SHA (resolve a ref first with {@link gitRefLookup}). */
  sha: string;
  /** Cache root; the checkout goes to `<cacheDir>/<slug>/<sha>`. */
  cacheDir: string;
  /** Cache key of the repository, e.g. `owner/name`. @defaultValue the source path */
  repo?: string;
  /**
   * Interpreter that byte-compiles the tree after checkout: the sandbox mounts it read-only, so Python
   * could not cache its bytecode there and would recompile the project at every import. Skipped when unset.
   */
  python?: string;
  signal?: AbortSignal;
}

/** In a checkout's .git: the paths its tree has that were not checked out (missing from the source), NUL-separated. */
const MISSING_RECORD = 'repgen-missing-files';

export interface Checkout {
  dir: string;
  sha: string;
  cached: boolean;
  /** Files of the tree at `sha` the source lacks the content of, so not in `dir` (sorted; [] for a whole tree). */
  missing: string[];
}

/**
 * The project's tree at `sha`, from the cache or made now (`git clone --shared --no-checkout` + a
 * detached checkout: no object is copied, the source's history is borrowed). Returns the folder.
 *
 * A source that lacks some files' content (a partial mirror, a blob fetched lazily and never) still gives a
 * checkout: every file it has is written, the others are marked skip-worktree (so git sees no deletion) and listed
 * in `missing`. A run that needs one of them fails on it, as it would on any file the project lacks.
 */
export async function checkoutAt(options: CheckoutOptions): Promise<Checkout> {
  if (!/^[0-9a-f]{40}$/.test(options.sha))
    throw new WorkspaceError(`checkoutAt needs a full commit SHA, got '${options.sha.slice(0, 60)}'`);
  const parent = join(options.cacheDir, repoSlug(options.repo ?? options.source));
  const dir = join(parent, options.sha);
  // The cache root and the repository's folder must be RepGen's own (owned-dir.ts): nobody else can then have
  // put an entry in them. A cached entry is used only when it, and its .git, pass the same test.
  await ensureOwnedDir(options.cacheDir, 'REPGEN_CHECKOUT_CACHE_DIR');
  await ensureOwnedDir(parent, 'REPGEN_CHECKOUT_CACHE_DIR');
  if (await exists(join(dir, '.git'))) {
    const why = (await distrust(dir)) ?? (await distrust(join(dir, '.git')));
    if (why === null) return { dir, sha: options.sha, cached: true, missing: await readMissingRecord(dir) };
    throw new WorkspaceError(`the cached checkout '${dir}' ${why}: RepGen will not use it; remove it`);
  }
  const scratch = await mkdtemp(join(parent, `.tmp-${options.sha.slice(0, 12)}-`));
  try {
    const clone = await runGit(['clone', '--quiet', '--shared', '--no-checkout', '--', options.source, scratch], {
      cwd: parent,
      signal: options.signal,
    });
    if (clone.code !== 0) throw new WorkspaceError(`cannot clone '${options.source}': ${lastLine(clone.stderr)}`);
    // null: git cannot walk the commit; the checkout below says why.
    const missing = (await findMissingFiles(scratch, options.sha, options.signal)) ?? [];
    if (missing.length > 0) {
      await checkoutPresent(scratch, options.sha, missing, options.signal);
      await writeFile(join(scratch, '.git', MISSING_RECORD), missing.join('\0'), { mode: 0o644 });
    } else {
      const co = await runGit(['-c', 'advice.detachedHead=false', 'checkout', '--quiet', '--detach', options.sha, '--'], {
        cwd: scratch,
        signal: options.signal,
      });
      if (co.code !== 0) {
        if (/reference is not a tree|did not match|unknown revision|bad object/i.test(co.stderr))
          throw new RefNotFoundError(`the commit ${options.sha} is not in '${options.source}'`);
        throw new WorkspaceError(`git checkout ${options.sha.slice(0, 12)} failed: ${lastLine(co.stderr)}`);
      }
    }
    if (options.python) await compileTree(options.python, scratch, options.signal);
    // mkdtemp makes 0700; the sandbox runs scripts as an unprivileged uid that must read the tree.
    await chmod(scratch, 0o755);
    try {
      await rename(scratch, dir);
    } catch (err) {
      // Another process made the same checkout first: theirs is as good as ours.
      if (!(await exists(join(dir, '.git'))))
        throw new WorkspaceError(`cannot move the checkout into '${dir}': ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
      await rm(scratch, { recursive: true, force: true });
    }
    return { dir, sha: options.sha, cached: false, missing };
  } catch (err) {
    await rm(scratch, { recursive: true, force: true }).catch(() => undefined);
    throw err;
  }
}

/**
 * A detached checkout of `sha` in a fresh `--no-checkout` clone that writes every file but `missing`: HEAD and the
 * index are set from the commit (neither reads a blob), the missing paths are marked skip-worktree in one call, and
 * checkout-index writes the rest (it skips those entries, so git never reaches for an object it lacks).
 */
async function checkoutPresent(scratch: string, sha: string, missing: readonly string[], signal?: AbortSignal): Promise<void> {
  const steps: Array<{ args: string[]; input?: string }> = [
    { args: ['update-ref', '--no-deref', 'HEAD', sha] },
    { args: ['read-tree', sha] },
    // --stdin must come last; -z: a path may hold a newline.
    { args: ['update-index', '-z', '--skip-worktree', '--stdin'], input: `${missing.join('\0')}\0` },
    { args: ['checkout-index', '--all', '-u'] },
  ];
  for (const step of steps) {
    const r = await runGit(step.args, { cwd: scratch, signal, input: step.input });
    if (r.code !== 0) throw new WorkspaceError(`git ${step.args[0]} at ${sha.slice(0, 12)} failed: ${lastLine(r.stderr)}`);
  }
}

/** The missing paths a cached checkout recorded; [] when it recorded none (its tree was whole). */
async function readMissingRecord(dir: string): Promise<string[]> {
  try {
    const raw = await readBounded(join(dir, '.git', MISSING_RECORD), { maxBytes: 64 << 20, noFollow: true });
    return raw.toString('utf8').split('\0').filter(Boolean);
  } catch (err) {
    if (err instanceof ReadBoundedError && err.reason === 'missing') return [];
    throw new WorkspaceError(`the cached checkout '${dir}' has an unreadable list of missing files: ${(err as Error).message}`);
  }
}

function lastLine(text: string): string {
  return text.trim().split('\n').slice(-1)[0]?.slice(0, 300) || 'no message';
}

/**
 * Byte-compiles a checkout for the sandbox (it mounts the tree read-only, so Python could not cache bytecode).
 * The tree may be hostile and this runs on the host: only regular `.py` files are compiled, never through a
 * link (a linked `x.py -> /root/app/settings.py` would put that file's constants into the tree as bytecode), and
 * never into a linked `__pycache__` (it would write outside the tree); folders reached by a link are not entered.
 */
const COMPILE_TREE = String.raw`
import os, sys, py_compile
root = sys.argv[1]
for d, dirs, files in os.walk(root):
    dirs[:] = [x for x in dirs if x != ".git" and not os.path.islink(os.path.join(d, x))]
    cache = os.path.join(d, "__pycache__")
    if os.path.lexists(cache) and (os.path.islink(cache) or not os.path.isdir(cache)):
        continue
    for f in files:
        p = os.path.join(d, f)
        if not f.endswith(".py") or os.path.islink(p) or not os.path.isfile(p):
            continue
        try:
            py_compile.compile(p, doraise=True)
        except Exception:
            pass
`;

/** Best effort: a tree that does not compile (a syntax error is sometimes the bug) is still used as it is. */
export function compileTree(python: string, dir: string, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const child = spawn(python, ['-I', '-c', COMPILE_TREE, dir], {
      stdio: 'ignore',
      signal,
      timeout: 300_000,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
    });
    child.on('error', () => resolve());
    child.on('close', () => resolve());
  });
}

/**
 * A local copy of `owner/name` under a mirrors folder: `<dir>/<owner>+<name>/repo` (the fetch tool's
 * layout), `<dir>/<owner>+<name>`, `<dir>/<owner>/<name>` or `<dir>/<name>`. Null when none is a git repository.
 */
export async function findMirror(mirrorsDir: string, repo: string): Promise<string | null> {
  const [owner, name] = repo.split('/');
  if (!owner || !name || !/^[\w.-]+$/.test(owner) || !/^[\w.-]+$/.test(name) || owner.startsWith('.') || name.startsWith('.')) return null;
  const candidates = [
    join(mirrorsDir, `${owner}+${name}`, 'repo'),
    join(mirrorsDir, `${owner}+${name}`),
    join(mirrorsDir, owner, name),
    join(mirrorsDir, name),
  ];
  for (const c of candidates) if ((await stat(c).catch(() => null))?.isDirectory() && (await isGitRepo(c))) return c;
  return null;
}

/** Reads a project's tree: a folder on disk, or a commit of a git repository. */
export interface TreeReader {
  /** Names of the sub-folders of `dir` ('' = the root). */
  folders(dir: string): Promise<string[]>;
  /** A file's text, or null when it does not exist. */
  read(path: string): Promise<string | null>;
}

/** The most of one file of the tree read (pyproject.toml, setup.py, `__init__.py`). */
const MAX_TREE_FILE_BYTES = 2_000_000;

/** A folder on disk. The tree may be hostile: nothing is read through a link that leads out of it. */
export function diskTree(root: string): TreeReader {
  const realRoot = realpath(root).catch(() => null);
  return {
    folders: async (dir) =>
      (await readdir(join(root, dir), { withFileTypes: true }).catch(() => [])).filter((e) => e.isDirectory()).map((e) => e.name),
    read: async (path) => {
      const [top, real] = await Promise.all([realRoot, realpath(join(root, path)).catch(() => null)]);
      if (!top || !real || !real.startsWith(`${top}${sep}`)) return null;
      // A plain folder may hold a FIFO or a device under a name we read (setup.py): never block on one, never read it whole.
      return (await readBounded(real, { maxBytes: MAX_TREE_FILE_BYTES }).catch(() => null))?.toString('utf8') ?? null;
    },
  };
}

export function gitTree(gitDir: string, rev: string): TreeReader {
  return {
    async folders(dir) {
      const r = await runGit(['ls-tree', '-d', '--name-only', '--end-of-options', `${rev}:${dir}`], { cwd: gitDir });
      return r.code === 0 ? r.stdout.split('\n').filter(Boolean) : [];
    },
    async read(path) {
      const r = await runGit(['show', '--end-of-options', `${rev}:${path}`], { cwd: gitDir });
      // A file past the output limit would come back as its tail: read as missing instead.
      return r.code === 0 && !r.truncated ? r.stdout : null;
    },
  };
}

/**
 * The names the project is imported and installed by: top-level packages of the tree (`timm/`, `src/keras/`)
 * and the distribution name in pyproject.toml or setup.py. What a report's `pip install X==1.2` is matched against.
 */
export async function projectPackages(tree: TreeReader): Promise<string[]> {
  const names = new Set<string>();
  for (const root of ['', 'src']) {
    for (const name of await tree.folders(root)) {
      if (!/^[A-Za-z_]\w*$/.test(name) || /^(tests?|docs?|examples?|scripts?|benchmarks?|tools)$/i.test(name)) continue;
      if ((await tree.read(`${root ? `${root}/` : ''}${name}/__init__.py`)) !== null) names.add(name.toLowerCase());
    }
  }
  const pyproject = (await tree.read('pyproject.toml')) ?? '';
  const setup = (await tree.read('setup.py')) ?? '';
  const dist =
    /^\s*name\s*=\s*["']([A-Za-z0-9._-]+)["']/m.exec(pyproject)?.[1] ?? /\bname\s*=\s*["']([A-Za-z0-9._-]+)["']/.exec(setup)?.[1];
  if (dist) names.add(dist.toLowerCase());
  return [...names];
}
