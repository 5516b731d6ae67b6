import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseRepoConfig } from '../../../src/config/repo-config.js';
import { computeEnvSpec, eraPackages, type EnvPolicy, type EnvSpecInput } from '../../../src/env/decide/compute-env-spec.js';
import { resolveEnvSpec } from '../../../src/env/index.js';
import { loadImportNameTables } from '../../../src/env/read/load-import-names.js';
import { readCheckoutFiles } from '../../../src/env/read/read-checkout-files.js';
import type { Requirement } from '../../../src/env/types.js';
import { fakeReleaseDates, NUMPY } from './fake-releases.js';

const REPOS = join(import.meta.dirname, '../../../fixtures/repos/env');
const policy: EnvPolicy = { allowedIndexes: ['https://pypi.org/simple'], findLinks: ['/opt/wheels'], defaultPython: '3.11', gpu: false };
const tables = loadImportNameTables();
const base = (over: Partial<EnvSpecInput>): EnvSpecInput => ({
  report: '',
  repoFiles: null,
  scriptImports: [],
  repoConfig: null,
  era: null,
  tables,
  policy,
  ...over,
});
const byName = (reqs: Requirement[]) => Object.fromEntries(reqs.map((r) => [r.name, `${r.specifier} (${r.source})`]));

describe('computeEnvSpec', () => {
  it('a 2019 project: setup.py list, markers, its C++ extension built, numpy capped by the era', async () => {
    const repoFiles = await readCheckoutFiles(join(REPOS, 'seq2seq-2019'));
    const input = base({
      repoFiles,
      scriptImports: ['seqkit.models', 'torch', 'numpy', 'argparse'],
      report: 'Training crashes with np.float since version 0.8.0',
    });
    expect(eraPackages(input)).toEqual(['numpy']);
    const spec = computeEnvSpec({ ...input, era: { commitDate: '2019-08-20T12:00:00Z', releases: { numpy: NUMPY } } });
    expect(byName(spec.requirements)).toEqual({
      cffi: ' (repo)',
      numpy: '<1.24 (era)',
      regex: ' (repo)',
      torch: ' (repo)',
      tqdm: ' (repo)',
    });
    expect(spec.requirements.find((r) => r.name === 'numpy')?.why).toMatch(
      /^setup\.py install_requires: numpy; capped <1\.24: the ref's commit is of 2019-08-20/,
    );
    expect(spec.project).toEqual({
      root: '',
      importRoots: [''],
      mode: 'build',
      distribution: 'seqkit',
      extensions: ['seqkit/clib/libbleu/libbleu.cpp'],
    });
    expect(spec).toMatchObject({ python: null, excludeNewer: null, findLinks: ['/opt/wheels'], indexUrl: null });
    expect(spec.notes).toEqual([
      'the report names version 0.8.0 (“Training crashes with np.float since version 0.8.0”); the checkout at the ref is used',
    ]);
  });

  it("the era's wheels are looked for on the base interpreter's Python, not on the report's older one that is not here", async () => {
    const repoFiles = await readCheckoutFiles(join(REPOS, 'seq2seq-2019'));
    // The reporter ran Python 3.7, for which numpy 1.17 had wheels; every venv here is made from the base's 3.11.
    const spec = computeEnvSpec(
      base({
        repoFiles,
        scriptImports: ['seqkit.models'],
        report: ' - PyTorch Version: 1.3.1\n - Python version: 3.7.4',
        era: { commitDate: '2019-12-19T16:54:54Z', releases: { numpy: NUMPY } },
      }),
    );
    expect(spec.python).toBe('3.7');
    expect(byName(spec.requirements).numpy).toBe('<1.24 (era)');
    expect(spec.requirements.find((r) => r.name === 'numpy')?.why).toMatch(/no numpy of that time has a wheel for Python 3\.11, 1\.23 is/);
  });

  it('a project with extensions gets what compiling them needs ([build-system].requires); a pure one does not', () => {
    const pyproject = '[build-system]\nrequires = ["setuptools>=64", "Cython>=3.0"]\nbuild-backend = "setuptools.build_meta"\n';
    const files = (setupPy: string) => ({
      paths: ['pyproject.toml', 'setup.py', 'fastpkg/__init__.py', 'fastpkg/_speed.pyx'],
      texts: new Map([
        ['pyproject.toml', pyproject],
        ['setup.py', setupPy],
      ]),
    });
    const withExt = computeEnvSpec(
      base({
        repoFiles: files(
          'from setuptools import setup, Extension\nsetup(name="fastpkg", ext_modules=[Extension("fastpkg._speed", ["fastpkg/_speed.pyx"])])\n',
        ),
      }),
    );
    expect(withExt.project).toMatchObject({ mode: 'build', extensions: ['fastpkg/_speed.pyx'] });
    expect(byName(withExt.requirements)).toMatchObject({ setuptools: '>=64 (repo)', cython: '>=3.0 (repo)' });
    expect(withExt.requirements.find((r) => r.name === 'cython')?.why).toBe('pyproject.toml [build-system].requires: Cython>=3.0');
    const pure = computeEnvSpec(base({ repoFiles: files('from setuptools import setup\nsetup(name="fastpkg")\n') }));
    expect(pure.requirements.map((r) => r.name)).not.toContain('cython');
  });

  it('a project whose framework is only an extra named after it (diffusers[torch]) gets that framework, unless something names one', () => {
    // diffusers' setup.py: install_requires has no torch; extras "torch" and "flax" carry the frameworks.
    const setupPy = [
      'from setuptools import setup',
      'setup(',
      '    name="difflib_x",',
      '    install_requires=["huggingface-hub>=0.27.0", "numpy", "safetensors>=0.3.1"],',
      '    extras_require={"torch": ["torch>=1.4", "accelerate>=0.31.0"], "flax": ["jax>=0.4.1", "flax>=0.4.1"], "test": ["pytest"]},',
      ')',
    ].join('\n');
    const repoFiles = { paths: ['setup.py', 'difflib_x/__init__.py'], texts: new Map([['setup.py', setupPy]]) };
    const spec = computeEnvSpec(base({ repoFiles, report: 'Scheduler sigma index out-of-bounds' }));
    expect(byName(spec.requirements)).toEqual({
      'huggingface-hub': '>=0.27.0 (repo)',
      numpy: ' (repo)',
      safetensors: '>=0.3.1 (repo)',
      torch: '>=1.4 (repo)',
    });
    expect(spec.requirements.find((r) => r.name === 'torch')?.why).toBe(
      "setup.py extras_require[torch] (the project's framework, an extra named after it): torch>=1.4",
    );
    // The report's code imports jax: its extra comes in as before, and torch does not.
    const jax = computeEnvSpec(base({ repoFiles, scriptImports: ['jax'] }));
    expect(jax.requirements.map((r) => r.name)).toContain('jax');
    expect(jax.requirements.map((r) => r.name)).not.toContain('torch');
    // The report states a framework of its own: that one, not the extra's.
    const stated = computeEnvSpec(base({ repoFiles, report: '- Tensorflow version (GPU?): 2.15.0 (False)' }));
    expect(stated.requirements.map((r) => r.name)).not.toContain('torch');
    // Two extras named after frameworks: which one is for the report to say.
    const both = setupPy.replace('"flax": ["jax>=0.4.1"', '"jax": ["jax>=0.4.1"');
    const two = computeEnvSpec(base({ repoFiles: { ...repoFiles, texts: new Map([['setup.py', both]]) } }));
    expect(two.requirements.map((r) => r.name)).not.toContain('torch');
  });

  it('a src/ layout: the report’s versions beat the ranges, the extra the script needs comes in, repgen.yml applies', async () => {
    const repoFiles = await readCheckoutFiles(join(REPOS, 'diffusion-src'), ['requirements/dev.txt']);
    const config = parseRepoConfig(readFileSync(join(REPOS, 'diffusion-src/.github/repgen.yml'), 'utf8'));
    if (!config.ok) throw new Error('fixture config invalid');
    const report = [
      '### Reproduction',
      '```python',
      'import torch',
      'from difflib_x import Pipeline',
      '```',
      '### System Info',
      '- 🤗 difflib-x version: 0.35.0',
      '- Python version: 3.10.12',
      '- PyTorch version (GPU?): 2.8.0+cu129 (True)',
      '- Huggingface_hub version: 0.34.4',
    ].join('\n');
    const spec = computeEnvSpec(
      base({
        report,
        repoFiles,
        scriptImports: ['torch', 'difflib_x', 'cv2'],
        repoConfig: config.config,
        policy: { ...policy, allowedIndexes: ['https://pypi.org/simple'] },
      }),
    );
    expect(byName(spec.requirements)).toEqual({
      'huggingface-hub': '==0.34.4 (report)',
      numpy: ' (repo)',
      pillow: ' (repo)',
      safetensors: '>=0.3.1 (repo)',
      torch: '==2.8.0 (report)',
      accelerate: '>=0.31.0 (repo)',
      pytest: ' (config)',
      ruff: ' (config)',
      // cv2 is the headless build's: repgen.yml's range on it stands, and no second OpenCV is installed beside it.
      'opencv-python-headless': '<5 (config)',
    });
    expect(spec.requirements.find((r) => r.name === 'torch')?.why).toBe('the report: “- PyTorch version (GPU?): 2.8.0+cu129 (True)”');
    expect(spec.requirements.find((r) => r.name === 'accelerate')?.why).toContain('the script imports from it');
    expect(spec.project).toMatchObject({ importRoots: ['src'], mode: 'pth', distribution: 'difflib-x', extensions: [] });
    expect(spec).toMatchObject({ python: '3.10', pythonWhy: 'the report: “- Python version: 3.10.12”', indexUrl: null, buildCommands: [] });
    expect(spec.notes).toEqual([
      'the report names difflib-x 0.35.0 (“- 🤗 difflib-x version: 0.35.0”); the checkout at the ref is used instead',
      "the report's torch 2.8.0+cu129 is a cu129 build; this env takes the CPU build of 2.8.0",
      'the reporter ran on a GPU; this env runs on the CPU',
      "repgen.yml environment.index https://mirror.example.org/simple is not on the operator's REPGEN_ENV_INDEXES; left out",
    ]);
  });

  it('an extra the report installs comes in whole; an allowed index is taken', async () => {
    const repoFiles = await readCheckoutFiles(join(REPOS, 'diffusion-src'));
    const spec = computeEnvSpec(
      base({
        report: 'I ran `pip install "difflib-x[training]"` and then',
        repoFiles,
        repoConfig: {
          environment: {
            requirements: [],
            packages: [],
            extras: [],
            extraIndexes: ['https://download.pytorch.org/whl/cpu'],
            build: ['make ext'],
          },
        },
        policy: { ...policy, allowedIndexes: ['https://pypi.org/simple', 'https://download.pytorch.org/whl'] },
      }),
    );
    expect(spec.requirements.map((r) => r.name)).toEqual(expect.arrayContaining(['datasets', 'tensorboard']));
    // The other extras stay out; of the `torch` extra only the framework's own line comes in (the project's framework).
    expect(spec.requirements.map((r) => r.name)).not.toContain('accelerate');
    expect(spec.requirements.find((r) => r.name === 'torch')?.specifier).toBe('>=1.4');
    expect(spec).toMatchObject({ extraIndexUrls: ['https://download.pytorch.org/whl/cpu'], buildCommands: ['make ext'], notes: [] });
  });

  it('an index whose path leaves the allowed one (`..`, `%2e%2e`) is left out, as URLs are compared, not strings', () => {
    const spec = computeEnvSpec(
      base({
        repoConfig: {
          environment: {
            requirements: [],
            packages: [],
            extras: [],
            index: 'https://pypi.org/simple/../evilidx',
            extraIndexes: ['https://pypi.org/simple/%2e%2e/evil2idx', 'https://pypi.org/simple/ok'],
            build: [],
          },
        },
      }),
    );
    expect(spec.indexUrl).toBeNull();
    expect(spec.extraIndexUrls).toEqual(['https://pypi.org/simple/ok']);
    expect(spec.notes).toEqual([
      "repgen.yml environment.index https://pypi.org/simple/../evilidx is not on the operator's REPGEN_ENV_INDEXES; left out",
      "repgen.yml environment.extraIndexes https://pypi.org/simple/%2e%2e/evil2idx is not on the operator's REPGEN_ENV_INDEXES; left out",
    ]);
  });

  it('a snippet with no repository: imports through the mapping, versions from the report, Python from requires', () => {
    const spec = computeEnvSpec(
      base({
        report: ">>> torch.__version__\n'1.13.1+cpu'\nnumpy 1.21.6",
        scriptImports: ['torch', 'numpy', 'sklearn.model_selection', 'os'],
      }),
    );
    expect(byName(spec.requirements)).toEqual({ torch: '==1.13.1 (report)', numpy: '==1.21.6 (report)', 'scikit-learn': ' (script)' });
    expect(spec.project).toBeNull();
  });

  it("a snippet's cv2 is OpenCV's headless build, at the version the report's desktop build names", () => {
    const spec = computeEnvSpec(base({ report: '```\nopencv-python==4.8.0.76\nnumpy==1.26.4\n```\n', scriptImports: ['cv2', 'numpy'] }));
    expect(byName(spec.requirements)).toEqual({ 'opencv-python-headless': '==4.8.0.76 (report)', numpy: '==1.26.4 (report)' });
  });

  it('repgen.yml’s python and packages win over the report; the era leaves what they pin alone', () => {
    const spec = computeEnvSpec(
      base({
        report: 'Python 3.9.1, numpy==1.19.5',
        scriptImports: ['numpy'],
        repoConfig: {
          python: '3.8',
          environment: {
            python: '3.10',
            requirements: [],
            packages: ['numpy<1.23', 'not a requirement!'],
            extras: [],
            extraIndexes: [],
            build: [],
          },
        },
        era: { commitDate: '2019-08-20T00:00:00Z', releases: { numpy: NUMPY } },
      }),
    );
    expect(byName(spec.requirements)).toEqual({ numpy: '<1.23 (config)' });
    expect(spec.python).toBe('3.10');
    expect(spec.notes).toEqual(['repgen.yml environment.packages: not a requirement! is not a requirement (PEP 508), left out']);
  });

  it('merges a requirement that several files declare, once per line', () => {
    const texts = new Map([
      ['requirements/fabric/base.txt', 'torch >=2.1.0, <2.10.0\n'],
      ['requirements/pytorch/base.txt', '-r ../fabric/base.txt\ntorch >=2.1.0, <2.10.0\ntqdm\n'],
    ]);
    const spec = computeEnvSpec(base({ repoFiles: { paths: [...texts.keys()], texts } }));
    expect(byName(spec.requirements)).toEqual({ torch: '>=2.1.0,<2.10.0 (repo)', tqdm: ' (repo)' });
    expect(spec.requirements[0]?.why).toBe(
      'requirements/fabric/base.txt:1: torch >=2.1.0, <2.10.0; requirements/pytorch/base.txt:2: torch >=2.1.0, <2.10.0',
    );
  });

  it('a framework the report states it ran comes in even when the script imports none of it (Keras on torch)', () => {
    const report = 'KERAS_BACKEND=torch\n\n- Keras version: 3.3.3\n- PyTorch version: 2.1.0+cpu\n- Python version: 3.6.9\n';
    const repoFiles = {
      paths: ['pyproject.toml'],
      texts: new Map([['pyproject.toml', '[project]\nname = "keras"\nrequires-python = ">=3.9"\ndependencies = ["absl-py"]\n']]),
    };
    const spec = computeEnvSpec(base({ report, repoFiles, scriptImports: ['keras'] }));
    expect(byName(spec.requirements)).toEqual({ 'absl-py': ' (repo)', torch: '==2.1.0 (report)' });
    expect(spec.python).toBeNull();
    expect(spec.notes).toEqual([
      "the report's Python 3.6.9 is outside >=3.9 (pyproject.toml requires-python); not used",
      'the report names keras 3.3.3 (“- Keras version: 3.3.3”); the checkout at the ref is used instead',
    ]);
    // A version only listed (a pip table) or said in passing brings no framework in.
    expect(computeEnvSpec(base({ report: 'it worked with torch 2.0.0' })).requirements).toEqual([]);
  });

  it('a requires-python that excludes the base interpreter picks the newest Python it allows', () => {
    const repoFiles = {
      paths: ['pyproject.toml'],
      texts: new Map([['pyproject.toml', '[project]\nname = "old"\nrequires-python = ">=3.7,<3.10"\ndependencies = []\n']]),
    };
    expect(computeEnvSpec(base({ repoFiles }))).toMatchObject({
      python: '3.9',
      pythonWhy: 'pyproject.toml requires-python: >=3.7,<3.10 excludes 3.11',
    });
  });
});

describe('resolveEnvSpec', () => {
  it('looks up only the era-sensitive packages it would cap, through the port', async () => {
    const releaseDates = fakeReleaseDates({ numpy: NUMPY });
    const repoFiles = await readCheckoutFiles(join(REPOS, 'seq2seq-2019'));
    const spec = await resolveEnvSpec(
      { report: '', repoFiles, scriptImports: [], repoConfig: null, tables, policy, commitDate: '2019-08-20T00:00:00Z' },
      { releaseDates },
    );
    expect(releaseDates.asked).toEqual(['numpy']);
    expect(spec.requirements.find((r) => r.name === 'numpy')?.specifier).toBe('<1.24');
    const none = await resolveEnvSpec(
      { report: '', repoFiles, scriptImports: [], repoConfig: null, tables, policy, commitDate: null },
      { releaseDates },
    );
    expect(none.requirements.find((r) => r.name === 'numpy')?.specifier).toBe('');
  });
});

describe("Keras's backend (issue 29 item 1)", () => {
  it('Keras 2 brings the TensorFlow of its own series, and says so', () => {
    const spec = computeEnvSpec(base({ scriptImports: ['keras.layers'], report: 'Versions:\n```\nkeras==2.15.0\nnumpy==2.1.0\n```\n' }));
    expect(byName(spec.requirements)).toMatchObject({ keras: '==2.15.0 (report)', tensorflow: '==2.15.* (report)' });
    expect(spec.notes).toContain("tensorflow ==2.15.* added as Keras's backend: keras 2.15.0 runs on the TensorFlow of its series");
  });

  it('Keras 3 takes the backend the report sets, TensorFlow when it sets none, and never adds one the code already has', () => {
    const jax = computeEnvSpec(
      base({ scriptImports: ['keras'], report: 'import os\nos.environ["KERAS_BACKEND"] = "jax"\nimport keras\n' }),
    );
    expect(byName(jax.requirements)).toMatchObject({ keras: ' (script)', jax: ' (report)' });
    expect(byName(computeEnvSpec(base({ scriptImports: ['keras'] })).requirements)).toMatchObject({ tensorflow: ' (report)' });
    const both = computeEnvSpec(base({ scriptImports: ['keras', 'tensorflow'] }));
    expect(both.requirements.filter((r) => r.name === 'tensorflow')).toHaveLength(1);
    // The script imports TensorFlow, the report pins Keras 2: TensorFlow of Keras's series.
    const pinned = computeEnvSpec(base({ scriptImports: ['keras', 'tensorflow'], report: '```\nkeras==2.15.0\n```\n' }));
    expect(byName(pinned.requirements)).toMatchObject({ tensorflow: '==2.15.* (script)' });
  });

  it("the project is Keras 3: the backend the report's words name comes in, in the range the project's requirements.txt gives it", () => {
    const repoFiles = {
      paths: ['pyproject.toml', 'requirements.txt', 'requirements-torch-cuda.txt'],
      texts: new Map([
        ['pyproject.toml', '[project]\nname = "keras"\ndependencies = ["absl-py", "ml-dtypes"]\n'],
        ['requirements.txt', '--extra-index-url https://download.pytorch.org/whl/cpu\ntorch>=2.1.0\njax[cpu]\n'],
        ['requirements-torch-cuda.txt', 'torch==2.3.1+cu121\n'],
      ]),
    };
    const report = 'averagePooling2D calculates wrongly with torch backend\n\nAveragePooling2D generate an output with wrong shape.';
    const spec = computeEnvSpec(base({ report, repoFiles, scriptImports: ['keras'] }));
    expect(byName(spec.requirements)).toEqual({ 'absl-py': ' (repo)', 'ml-dtypes': ' (repo)', torch: '>=2.1.0 (repo)' });
    expect(spec.requirements.find((r) => r.name === 'torch')?.why).toBe(
      "the report's Keras runs on torch (KERAS_BACKEND=torch); requirements.txt:2: torch>=2.1.0",
    );
    // No backend named: Keras's default, TensorFlow (requirements.txt gives it no range here).
    const plain = computeEnvSpec(base({ report: 'Dense is slow\n\nIt is slow.', repoFiles, scriptImports: ['keras'] }));
    expect(byName(plain.requirements)).toMatchObject({ tensorflow: ' (report)' });
    expect(plain.requirements.some((r) => r.name === 'torch')).toBe(false);
  });
});
