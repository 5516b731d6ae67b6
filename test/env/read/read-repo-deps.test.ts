import { describe, expect, it } from 'vitest';
import { DEPENDENCY_FILE, readRepoDeps, type RepoFiles } from '../../../src/env/read/read-repo-deps.js';
import { readCondaEnv, readRequirementsFile } from '../../../src/env/read/read-requirement-files.js';
import { poetrySpecifier } from '../../../src/env/read/read-repo-deps.js';

const files = (texts: Record<string, string>, extra: string[] = []): RepoFiles => ({
  paths: [...Object.keys(texts), ...extra],
  texts: new Map(Object.entries(texts)),
});
const names = (deps: { req: { name: string; specifier: string } }[]) => deps.map((d) => `${d.req.name}${d.req.specifier}`);

describe('readRepoDeps', () => {
  it('reads pyproject [project] dependencies, extras, requires-python and the backend', () => {
    const pyproject = [
      '[build-system]',
      'requires = ["setuptools>=64"]',
      'build-backend = "setuptools.build_meta"',
      '[project]',
      'name = "Lightning-Kit"',
      'requires-python = ">=3.9"',
      'dependencies = ["torch >=2.1.0", "fsspec[http] >=2022.5.0", "lightning-utilities >=0.10.0", "typing-extensions>=4.4.0"]',
      '[project.optional-dependencies]',
      'extra = ["tensorboardX>=2.2"]',
      '[tool.setuptools.packages.find]',
      'where = ["src"]',
    ].join('\n');
    const r = readRepoDeps(files({ 'pyproject.toml': pyproject, 'requirements.txt': 'pytest\n' }));
    expect(names(r.dependencies)).toEqual(['torch>=2.1.0', 'fsspec>=2022.5.0', 'lightning-utilities>=0.10.0', 'typing-extensions>=4.4.0']);
    expect(r.dependencies[1]?.req.extras).toEqual(['http']);
    expect(Object.keys(r.extras)).toEqual(['extra']);
    expect(r).toMatchObject({
      distribution: 'Lightning-Kit',
      requiresPython: '>=3.9',
      buildBackend: 'setuptools.build_meta',
      declaresSrcLayout: true,
    });
    expect(r.sources).toEqual(['pyproject.toml [project].dependencies']);
  });

  it('follows setuptools dynamic dependencies to their file', () => {
    const pyproject =
      '[project]\nname = "dyn"\ndynamic = ["dependencies"]\n[tool.setuptools.dynamic]\ndependencies = {file = ["requirements/base.txt"]}\n';
    const r = readRepoDeps(
      files({ 'pyproject.toml': pyproject, 'requirements/base.txt': 'numpy>=1.20\n-r extra.txt\n', 'requirements/extra.txt': 'scipy\n' }),
    );
    expect(names(r.dependencies)).toEqual(['numpy>=1.20', 'scipy']);
  });

  it('takes setup.py when pyproject only names the build system, and setup.cfg when setup.py has no list', () => {
    const r = readRepoDeps(
      files({
        'pyproject.toml': '[build-system]\nrequires = ["setuptools", "torch"]\n',
        'setup.py': 'setup(name="dt", install_requires=["Pillow>=7.1", "yacs>=0.1.8"], ext_modules=get_extensions())',
      }),
    );
    expect(names(r.dependencies)).toEqual(['pillow>=7.1', 'yacs>=0.1.8']);
    expect(r).toMatchObject({ distribution: 'dt', setupBuildsExtensions: true });
    const cfg = [
      '[metadata]',
      'name = keraslike',
      '[options]',
      'python_requires = >=3.8',
      'install_requires =',
      '    absl-py',
      '    numpy',
      '    rich; python_version >= "3.8"',
      '[options.extras_require]',
      'tests =',
      '    pytest',
    ].join('\n');
    const c = readRepoDeps(files({ 'setup.py': 'import setuptools\nsetuptools.setup()', 'setup.cfg': cfg }));
    expect(names(c.dependencies)).toEqual(['absl-py', 'numpy', 'rich']);
    expect(c.dependencies[2]?.req.marker).toBe('python_version >= "3.8"');
    expect(c).toMatchObject({ distribution: 'keraslike', requiresPython: '>=3.8' });
    expect(names(c.extras.tests ?? [])).toEqual(['pytest']);
  });

  it('reads Poetry dependencies', () => {
    const toml =
      '[tool.poetry]\nname = "po"\n[tool.poetry.dependencies]\npython = "^3.9"\ntorch = "^2.0"\nnumpy = {version = "~1.24", optional = false}\nlocalpkg = {path = "../x"}\n';
    const r = readRepoDeps(files({ 'pyproject.toml': toml }));
    expect(names(r.dependencies)).toEqual(['torch>=2.0,<3.0', 'numpy>=1.24,<1.25']);
    expect(r.requiresPython).toBe('>=3.9,<4.0');
    expect(poetrySpecifier('^0.2.3')).toBe('>=0.2.3,<0.3');
  });

  it('falls back to requirement files and environment.yml when no metadata declares anything', () => {
    const env =
      'name: old\nchannels: [pytorch]\ndependencies:\n  - python=3.7\n  - pytorch::pytorch=1.4\n  - cudatoolkit=10.1\n  - numpy\n  - pip:\n    - tensorboardX==1.9\n    - -e .\n';
    const r = readRepoDeps(
      files({
        'requirements.txt': '# deps\n-e .\ngit+https://github.com/x/y\n--index-url https://x\nscipy==1.3.0 --hash=sha256:abc\n',
        'environment.yml': env,
      }),
    );
    expect(names(r.dependencies)).toEqual(['scipy==1.3.0', 'torch==1.4.*', 'numpy', 'tensorboardx==1.9']);
    expect(r.condaPython).toBe('3.7');
  });

  it('finds the file a setup.py reads by a bare name through a folder variable, in the requirements folder', () => {
    const setup = [
      'import os',
      '_PATH_REQUIRE = os.path.join(os.path.dirname(__file__), "requirements")',
      'def _load_requirements(path_dir, file_name="base.txt"):',
      '    return open(os.path.join(path_dir, file_name)).read().splitlines()',
      'BASE = _load_requirements(path_dir=_PATH_REQUIRE, file_name="base.txt")',
      'setup(name="metrics", install_requires=BASE)',
    ].join('\n');
    const r = readRepoDeps(
      files({
        'setup.py': setup,
        'requirements/base.txt': 'numpy >1.20.0\nlightning-utilities >=0.8.0\n',
        'requirements/audio.txt': 'torchaudio\n',
      }),
    );
    expect(names(r.dependencies)).toEqual(['numpy>1.20.0', 'lightning-utilities>=0.8.0']);
  });

  it('falls back to the requirement files when the metadata names its list but none of it can be read', () => {
    const setup = 'from helpers import load\nsetup(name="pkg", install_requires=load(PATH, FILE))\n';
    const r = readRepoDeps(files({ 'setup.py': setup, 'requirements.txt': 'packaging >17.1\n', 'requirements/dev.txt': 'pytest\n' }));
    expect(names(r.dependencies)).toEqual(['packaging>17.1']);
  });

  it('reads per-package base requirement files when setup.py assembles its lists in code (the Lightning shape)', () => {
    const setup =
      'import os\nfrom setuptools import setup\n_PACKAGE = os.environ.get("PACKAGE_NAME", "")\nsetup(**_load_setup_module(_PACKAGE)._setup_args())\n';
    const r = readRepoDeps(
      files({
        'setup.py': setup,
        'requirements/fabric/base.txt': 'torch >=2.1.0, <2.10.0\nfsspec[http] >=2022.5.0\n',
        'requirements/pytorch/base.txt': 'torch >=2.1.0, <2.10.0\ntorchmetrics >0.7.0\n',
        'requirements/pytorch/test.txt': 'pytest\n',
      }),
    );
    expect(names(r.dependencies)).toEqual(['torch>=2.1.0,<2.10.0', 'fsspec>=2022.5.0', 'torch>=2.1.0,<2.10.0', 'torchmetrics>0.7.0']);
    for (const p of [
      'requirements/pytorch/base.txt',
      'requirements/fabric/base.txt',
      'requirements-dev.txt',
      'docs/requirements.txt',
      'pyproject.toml',
      'python/setup.py',
    ]) {
      expect(DEPENDENCY_FILE.test(p)).toBe(true);
    }
    for (const p of ['src/pkg/setup.py', 'data/base.txt', 'a/b/c/pyproject.toml']) expect(DEPENDENCY_FILE.test(p)).toBe(false);
  });

  it('finds the project in a single sub-folder', () => {
    const r = readRepoDeps(files({ 'python/setup.py': 'setup(name="sub", install_requires=["six"])' }));
    expect(r.root).toBe('python');
    expect(names(r.dependencies)).toEqual(['six']);
  });
});

describe('requirement files', () => {
  it('stops -r cycles and paths that leave the repository', () => {
    const texts = new Map([
      ['a.txt', '-r b.txt\nnumpy'],
      ['b.txt', '-r a.txt\n-r ../../etc/passwd\ntorch'],
    ]);
    expect(names(readRequirementsFile('a.txt', texts))).toEqual(['torch', 'numpy']);
  });

  it('reads conda build strings and prefix versions', () => {
    expect(names(readCondaEnv('environment.yml', 'dependencies:\n  - numpy=1.21.5=py39h7a5d4dd_0\n  - scipy>=1.7\n').requirements)).toEqual(
      ['numpy==1.21.5', 'scipy>=1.7'],
    );
  });
});
