import { describe, expect, it } from 'vitest';
import { readSetupPy } from '../../../src/env/read/read-setup-py.js';

// Shapes of real setup.py files (fairseq's literal list inside a function, detectron2's commented list and
// extras with a URL, diffusers'/transformers' `_deps` table with `deps[...]` and `deps_list(...)`), written anew.
describe('readSetupPy (static, never executed)', () => {
  it('reads a literal list inside a function, with comments, markers and setup_requires beside it', () => {
    const src = [
      'import os, sys',
      'from setuptools import setup, Extension',
      'if sys.version_info < (3, 6):',
      '    sys.exit("Sorry")',
      'def do_setup(package_data):',
      '    setup(',
      '        name="seqkit",',
      '        setup_requires=["cython", "numpy"],',
      '        install_requires=[',
      '            "cffi",',
      '            "dataclasses; python_version<\'3.7\'",  # backport',
      '            "numpy",',
      "            'sacrebleu>=1.4.12',",
      '            "torch",',
      '        ],',
      '        ext_modules=extensions,',
      '        python_requires=">=3.6",',
      '    )',
      'do_setup({})',
    ].join('\n');
    expect(readSetupPy(src)).toEqual({
      name: 'seqkit',
      installRequires: ['cffi', "dataclasses; python_version<'3.7'", 'numpy', 'sacrebleu>=1.4.12', 'torch'],
      extras: {},
      pythonRequires: '>=3.6',
      readsFiles: [],
      extensions: true,
    });
  });

  it('follows module-level variables, +, append and list()', () => {
    const src = [
      'REQUIRED = ["numpy>=1.17", "pillow"]',
      'EXTRA_VISION = ["opencv-python"]',
      'if True:',
      '    REQUIRED.append("tqdm")',
      'REQUIRED += ["pyyaml"]',
      'setup(name="vis", install_requires=list(REQUIRED), extras_require={"vision": EXTRA_VISION + ["scikit-image"], "dev": ["pytest"]})',
    ].join('\n');
    const r = readSetupPy(src);
    expect(r.installRequires).toEqual(['numpy>=1.17', 'pillow', 'tqdm', 'pyyaml']);
    expect(r.extras).toEqual({ vision: ['opencv-python', 'scikit-image'], dev: ['pytest'] });
    expect(r.extensions).toBe(false);
  });

  it('follows the Hugging Face table: deps["x"] and deps_list("x", "y") over a _deps list', () => {
    const src = [
      '_deps = [',
      '    "Pillow",  # keep',
      '    "accelerate>=0.31.0",',
      '    "filelock",',
      '    "huggingface-hub>=0.23.2",',
      '    "numpy",',
      '    "regex!=2019.12.17",',
      '    "torch>=1.4",',
      ']',
      'deps = {b: a for a, b in (re.findall(r"^(([^!=<>~]+)(?:[!=<>~].*)?$)", x)[0] for x in _deps)}',
      'def deps_list(*pkgs):',
      '    return [deps[pkg] for pkg in pkgs]',
      'extras = {}',
      'extras["torch"] = deps_list("torch", "accelerate")',
      'extras["dev"] = extras["torch"] + deps_list("filelock")',
      'install_requires = [deps["filelock"], deps["huggingface-hub"], deps["numpy"], deps["regex"], deps["Pillow"]]',
      'setup(name="diffuse", package_dir={"": "src"}, install_requires=list(install_requires), extras_require=extras)',
    ].join('\n');
    const r = readSetupPy(src);
    expect(r.installRequires).toEqual(['filelock', 'huggingface-hub>=0.23.2', 'numpy', 'regex!=2019.12.17', 'Pillow']);
    expect(r.extras.torch).toEqual(['torch>=1.4', 'accelerate>=0.31.0']);
    expect(r.extras.dev).toEqual(['torch>=1.4', 'accelerate>=0.31.0', 'filelock']);
    expect(r.name).toBe('diffuse');
  });

  it('names the requirement file a list is read from', () => {
    const src = [
      'def read_requirements(path):',
      '    with open(path) as f:',
      '        return [l.strip() for l in f if l.strip() and not l.startswith("#")]',
      'setup(name="x", install_requires=read_requirements("requirements/base.txt"))',
    ].join('\n');
    expect(readSetupPy(src)).toMatchObject({ installRequires: null, readsFiles: ['requirements/base.txt'] });
  });

  it('skips f-strings with substitutions and reads triple-quoted strings and continuations', () => {
    const src = 'v = "1.0"\nsetup(\n  name="""pkg""",\n  install_requires=[f"torch>={v}", f"numpy", "a" \\\n "b"],\n)';
    expect(readSetupPy(src).installRequires).toEqual(['numpy', 'ab']);
  });

  it('finds CUDAExtension builds and returns nothing for a file without setup()', () => {
    expect(
      readSetupPy('from torch.utils.cpp_extension import CUDAExtension\nsetup(name="d2", ext_modules=get_extensions())').extensions,
    ).toBe(true);
    expect(readSetupPy('print("hello")')).toMatchObject({ name: null, installRequires: null, extras: {} });
  });

  it('reads past a raw string with an escaped quote (certifi), and claims no list it cannot follow (a comprehension)', () => {
    const certifi = ["version_regex = r'__version__ = [\"\\']([^\"\\']*)[\"\\']'", 'setup(name="certifi", python_requires=">=3.6")'].join(
      '\n',
    );
    expect(readSetupPy(certifi)).toMatchObject({ name: 'certifi', pythonRequires: '>=3.6' });
    const filtered = 'REQUIRED = ["numpy", None]\nREQUIRED = [p for p in REQUIRED if p is not None]\nsetup(install_requires=REQUIRED)';
    expect(readSetupPy(filtered).installRequires).toBeNull();
  });

  it('survives hostile files: brackets nested past the stack, self-references, an unterminated call', () => {
    const nested = `x = ${'['.repeat(50_000)}${']'.repeat(50_000)}\nsetup(install_requires=x)`;
    expect(readSetupPy(nested)).toMatchObject({ installRequires: null, extras: {} });
    expect(readSetupPy('x = x + ["a"]\nx = x + ["b"]\nsetup(install_requires=x)').installRequires).toEqual(['a', 'b']);
    expect(readSetupPy('a = b\nb = a + ["c"]\nsetup(install_requires=a)').installRequires).toEqual(['c']);
    expect(readSetupPy('setup(install_requires=["a", "b"').installRequires).toBeNull();
  });
});
