import { describe, expect, it } from 'vitest';
import { frameworkRangeInRequirementFiles } from '../../../src/env/read/framework-range.js';

// Keras 3's files as its checkouts of 2024 hold them: no framework in pyproject.toml, its CI's in requirements*.txt.
const files = {
  paths: ['pyproject.toml', 'requirements.txt', 'requirements-common.txt', 'requirements-torch-cuda.txt'],
  texts: new Map([
    ['pyproject.toml', '[project]\nname = "keras"\ndependencies = ["absl-py", "numpy"]\n'],
    [
      'requirements.txt',
      "tensorflow-cpu~=2.16.2;sys_platform != 'darwin'\ntensorflow~=2.16.2;sys_platform == 'darwin'\n" +
        '--extra-index-url https://download.pytorch.org/whl/cpu\ntorch>=2.1.0\ntorchvision>=0.16.0\njax[cpu]\n-r requirements-common.txt\n',
    ],
    ['requirements-common.txt', 'numpy\nml-dtypes\n'],
    ['requirements-torch-cuda.txt', 'torch==2.3.1+cu121\njax[cpu]\n'],
  ]),
};

describe('frameworkRangeInRequirementFiles', () => {
  it("gives the range the project's requirements.txt declares, with where it is said", () => {
    const torch = frameworkRangeInRequirementFiles(files, 'torch', { python: '3.11', gpu: false });
    expect(torch).toMatchObject({ req: { name: 'torch', specifier: '>=2.1.0' }, where: 'requirements.txt:4' });
  });

  it("skips an accelerator's build on a CPU run; reads a CI pin as the floor of its series; nothing for no range", () => {
    const cuda = { ...files, texts: new Map([...files.texts].filter(([p]) => p !== 'requirements.txt')) };
    expect(frameworkRangeInRequirementFiles(cuda, 'torch', { python: '3.11', gpu: false })).toBeNull();
    expect(frameworkRangeInRequirementFiles(cuda, 'torch', { python: '3.11', gpu: true })?.req.specifier).toBe('>=2.3');
    // Keras of 2025: torch==2.6.0+cpu in requirements-jax-cuda.txt (its CI's CPU torch), torch+cu121 elsewhere.
    const keras2025 = {
      paths: ['requirements-jax-cuda.txt', 'requirements-torch-cuda.txt'],
      texts: new Map([
        ['requirements-jax-cuda.txt', '--extra-index-url https://download.pytorch.org/whl/cpu\ntorch==2.6.0+cpu\n'],
        ['requirements-torch-cuda.txt', 'torch==2.5.1+cu121\n'],
      ]),
    };
    expect(frameworkRangeInRequirementFiles(keras2025, 'torch', { python: '3.11', gpu: false })).toMatchObject({
      req: { specifier: '>=2.6' },
      where: 'requirements-jax-cuda.txt:2',
    });
    expect(frameworkRangeInRequirementFiles(files, 'jax', { python: '3.11', gpu: false })).toBeNull();
  });
});

describe('frameworkRangeInRequirementFiles on a hostile checkout', () => {
  it('a self-including file, a path outside the checkout and a -r chain past the limit give no range and no throw', () => {
    const chain = new Map(
      Array.from({ length: 30 }, (_, i) => [`requirements-${i}.txt`, `-r requirements-${i + 1}.txt\n`] as [string, string]),
    );
    const texts = new Map<string, string>([
      ['requirements.txt', '-r requirements.txt\n-r ../../etc/passwd\n-r /etc/passwd\n'],
      ...chain,
      ['requirements-30.txt', 'torch>=2.1\n'],
    ]);
    const files = { paths: [...texts.keys()], texts };
    // Only requirements-30.txt itself declares torch, read as its own file; the chain past the include limit is skipped.
    expect(frameworkRangeInRequirementFiles(files, 'torch', { python: '3.11', gpu: false })?.where).toBe('requirements-30.txt:1');
    texts.delete('requirements-30.txt');
    expect(frameworkRangeInRequirementFiles({ paths: [...texts.keys()], texts }, 'torch', { python: '3.11', gpu: false })).toBeNull();
  });
});
