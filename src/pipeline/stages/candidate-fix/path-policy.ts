// Which files a candidate fix may change (issue 41 item 4). A candidate that passes by editing the reproduction, the
// project's tests, its CI or its build proves nothing about the library, and a path that leaves the checkout is an
// attack: each is refused before anything is read or written. Pure.

/** The files a candidate may change: Python source, which the scratch copy imports as it is (a C extension would need a rebuild). */
const LIBRARY_SUFFIXES = ['.py', '.pyi'];
/** Folder names that hold tests, anywhere in the path. */
const TEST_DIRS = new Set(['test', 'tests', 'testing']);
/** Build and setup files, by name, anywhere in the tree. */
const SETUP_FILES = new Set(['setup.py', 'setup.cfg', 'pyproject.toml', 'tox.ini', 'noxfile.py', 'manifest.in', 'makefile', 'conftest.py']);
/** CI files that do not start with a dot. */
const CI_FILES = new Set(['jenkinsfile', 'azure-pipelines.yml', 'appveyor.yml', 'bitbucket-pipelines.yml']);

/**
 * Why `path` (as a diff names it, relative to the checkout) may not be changed, or null when it may. `reproduction`:
 * the names the reproduction runs as (repro.py), refused wherever they appear.
 */
export function refusedPath(path: string, reproduction: readonly string[] = ['repro.py']): string | null {
  if (path === '' || path.length > 300) return 'names no file, or one too long';
  if (/[\0-\x1f\x7f\\]/.test(path)) return 'holds a control character or a backslash';
  if (path.startsWith('/')) return 'is absolute';
  const parts = path.split('/');
  if (parts.some((p) => p === '' || p === '.' || p === '..')) return 'is not a plain path inside the checkout (`..`, `.` or `//`)';
  const name = parts.at(-1)!.toLowerCase();
  // .github/, .gitlab-ci.yml, .circleci/, .travis.yml, .git/, .pre-commit-config.yaml: CI, hooks and VCS state.
  if (parts.some((p) => p.startsWith('.'))) return 'is a hidden file or folder (CI, hooks or VCS state)';
  if (reproduction.some((r) => r.toLowerCase() === name)) return 'is the reproduction';
  if (parts.slice(0, -1).some((p) => TEST_DIRS.has(p.toLowerCase()))) return 'is in a test folder';
  if (/^test_.*\.py$|_test\.py$|^tests?\.py$/.test(name)) return 'is a test file';
  if (SETUP_FILES.has(name) || name.endsWith('.toml') || name.startsWith('requirements')) return 'is a build or setup file';
  if (CI_FILES.has(name)) return 'is a CI file';
  if (!LIBRARY_SUFFIXES.some((s) => name.endsWith(s))) return `is not Python source (${LIBRARY_SUFFIXES.join(', ')})`;
  return null;
}
