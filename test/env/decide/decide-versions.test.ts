import { describe, expect, it } from 'vitest';
import { decideVersions, newestReleaseBefore, TORCH_CPU_INDEX, type DecideVersionsInput } from '../../../src/env/decide/decide-versions.js';
import { computeEnvSpec } from '../../../src/env/decide/compute-env-spec.js';
import type { ImportNameTables } from '../../../src/env/read/import-names.js';
import type { Requirement, RequirementSource } from '../../../src/env/types.js';
import { envSpec } from '../../fakes/env-spec.js';

const base = {
  minor: '3.11',
  installed: new Map([
    ['torch', '1.13.0a0+gitunknown'],
    ['torchvision', '0.14.1a0'],
    ['numpy', '1.24.2'],
  ]),
};
const req = (name: string, specifier: string, source: RequirementSource, why = 'x'): Requirement => ({
  name,
  specifier,
  extras: [],
  source,
  why,
});
const input = (over: Partial<DecideVersionsInput> & { requirements?: Requirement[] } = {}): DecideVersionsInput => {
  const { requirements = [], ...rest } = over;
  return {
    spec: envSpec({ requirements }),
    base,
    era: null,
    wheelhouse: {},
    allowedIndexes: ['https://pypi.org/simple'],
    gpu: false,
    checkout: true,
    configured: false,
    ...rest,
  };
};

describe('the version decision, from the issue inward: report → project → era → base', () => {
  it("the report says torch 2.7, the project allows torch>=1.4, the base has 1.13: the env is not the base's", () => {
    const tables: ImportNameTables = { mapping: new Map(), stdlib: new Set() };
    // The real spec function reads the report and the repository; the decision takes it from there.
    const spec = computeEnvSpec({
      report: '### System Info\n- torch 2.7\n- Python 3.11',
      repoFiles: {
        paths: ['setup.py', 'src/diffusers/__init__.py'],
        texts: new Map([['setup.py', 'from setuptools import setup\nsetup(name="diffusers", install_requires=["torch>=1.4"])\n']]),
      },
      scriptImports: ['torch', 'diffusers'],
      repoConfig: null,
      era: null,
      tables,
      policy: { allowedIndexes: [], findLinks: [], defaultPython: '3.11', gpu: false },
    });
    const d = decideVersions({ ...input(), spec });
    expect(d.build).toBe(true);
    expect(d.spec.baseProvides).toBeUndefined();
    const torch = d.spec.decisions?.find((x) => x.name === 'torch');
    expect(torch).toMatchObject({ specifier: '==2.7.*', source: 'report', version: null });
    expect(torch?.why).toContain("not the base interpreter's 1.13.0a0+gitunknown");
    expect(d.spec.notes.join('\n')).toContain("the base interpreter's torch 1.13.0a0+gitunknown is outside what the report asks");
  });

  it('without a checkout (a snippet), a version only the report names keeps the base that has the package', () => {
    const d = decideVersions(input({ requirements: [req('torch', '==2.4.0', 'report')], checkout: false }));
    expect(d.build).toBe(false);
    expect(d.spec.decisions?.[0]).toMatchObject({ name: 'torch', source: 'base', version: '1.13.0a0+gitunknown' });
    expect(d.spec.decisions?.[0]?.why).toContain("the report's ==2.4.0 alone does not replace it");
  });

  it('a commit of 2019 and a base torch 1.13 that satisfies the project: the base is kept, and the decision says so', () => {
    const d = decideVersions(
      input({
        requirements: [req('torch', '>=1.0', 'repo', 'setup.py: torch>=1.0')],
        era: { commitDate: '2019-11-02T10:00:00Z', newest: { torch: '1.3.1' } },
      }),
    );
    expect(d.build).toBe(false);
    expect(d.spec.decisions).toEqual([
      {
        name: 'torch',
        specifier: '>=1.0',
        version: '1.13.0a0+gitunknown',
        source: 'base',
        why: expect.stringContaining(">=1.0 (project) and >=1.3 (era: the ref's commit is of 2019-11-02, when torch 1.3.1"),
      },
    ]);
  });

  it("a commit of 2025 whose era's torch is newer than the base's: an env on the base, for the import proof to judge", () => {
    // The era alone does not trade the base's matching torch/torchvision for a guess: the env is built (an overlay)
    // so the proof runs, and code calling what torch 1.13 lacks moves it up (test/pipeline/stages/env/import-ladder).
    const d = decideVersions(
      input({
        requirements: [req('torch', '>=1.4', 'repo', 'setup.py: torch>=1.4')],
        era: { commitDate: '2025-05-20T10:00:00Z', newest: { torch: '2.7.0' } },
      }),
    );
    expect(d.build).toBe(true);
    expect(d.spec.baseProvides).toContain('torch');
    expect(d.spec.decisions?.[0]).toMatchObject({ name: 'torch', source: 'base', version: '1.13.0a0+gitunknown' });
    expect(d.spec.decisions?.[0]?.why).toContain("older than the era's >=2.7");
    expect(d.spec.decisions?.[0]?.why).toContain('kept while the import proof passes');
  });

  it("a project that caps the framework is not held to the era's floor", () => {
    const d = decideVersions(
      input({
        requirements: [req('torch', '>=1.4,<2', 'repo')],
        era: { commitDate: '2025-05-20T10:00:00Z', newest: { torch: '2.7.0' } },
      }),
    );
    expect(d.build).toBe(false);
  });

  it('an explicit pin (--with, repgen.yml) beats the report, and the decision names the user', () => {
    const tables: ImportNameTables = { mapping: new Map(), stdlib: new Set() };
    const spec = computeEnvSpec({
      report: '### System Info\n- torch 2.7',
      repoFiles: null,
      scriptImports: ['torch'],
      repoConfig: null,
      era: null,
      tables,
      policy: { allowedIndexes: [], findLinks: [], defaultPython: '3.11', gpu: false },
      userPins: { packages: ['torch==2.13.*'], label: '--with' },
    });
    const d = decideVersions({ ...input({ configured: true }), spec });
    const torch = d.spec.decisions?.find((x) => x.name === 'torch');
    expect(torch).toMatchObject({ specifier: '==2.13.*', source: 'user' });
    expect(torch?.why).toContain('--with torch==2.13.*');
  });

  it('keeps the base for a package it has in a version every source admits, and builds for one it lacks', () => {
    expect(decideVersions(input({ requirements: [req('torch', '>=1.7', 'repo'), req('numpy', '', 'script')] })).build).toBe(false);
    expect(decideVersions(input({ requirements: [req('keras', '==2.15.0', 'report')] })).build).toBe(true);
    expect(decideVersions(input({ requirements: [req('torch', '>=2.1', 'repo')] })).build).toBe(true);
    expect(decideVersions(input({ configured: true })).build).toBe(true);
  });

  it('builds for extensions to compile and for a src/ layout, even when the base has every package', () => {
    const project = { root: '', importRoots: [''], mode: 'build' as const, distribution: 'pkg', extensions: ['pkg/_C.cpp'] };
    const with_ = (p: typeof project) => decideVersions({ ...input(), spec: envSpec({ project: p }) }).build;
    expect(with_(project)).toBe(true);
    expect(with_({ ...project, mode: 'pth' } as unknown as typeof project)).toBe(false);
    expect(with_({ ...project, mode: 'pth', importRoots: ['src'] } as unknown as typeof project)).toBe(true);
  });

  it('takes from the base what no source needs in another version (an overlay), and says what it took', () => {
    const d = decideVersions(input({ requirements: [req('torch', '>=1.7', 'repo'), req('safetensors', '', 'repo')] }));
    expect(d.spec.baseProvides).toEqual(['numpy', 'torch', 'torchvision']);
    expect(d.spec.notes).toEqual(['taken from the base interpreter: torch 1.13.0a0+gitunknown']);
    // The era's numpy cap the base misses: numpy is the env's own, the rest the base's.
    const old = decideVersions(input({ requirements: [req('torch', '>=1.0', 'repo'), req('numpy', '<1.24', 'era')] }));
    expect(old.spec.baseProvides).toEqual(['torch', 'torchvision']);
    expect(old.spec.decisions?.find((x) => x.name === 'numpy')).toMatchObject({ source: 'era', specifier: '<1.24' });
  });
});

describe("a CPU run's torch", () => {
  it("is pinned to a version the operator's wheelhouse has, never left to the index's CUDA build", () => {
    const d = decideVersions(
      input({
        requirements: [req('torch', '>=2.1', 'repo', 'pyproject.toml: torch>=2.1')],
        wheelhouse: { torch: ['2.13.0+cpu', '2.9.0+cpu'] },
      }),
    );
    expect(d.spec.requirements.find((r) => r.name === 'torch')?.specifier).toBe('==2.13.0');
    expect(d.spec.decisions?.[0]).toMatchObject({ name: 'torch', version: '2.13.0+cpu', source: 'wheelhouse' });
  });

  it("takes the wheelhouse's build nearest to the report's torch when none is the report's own", () => {
    const d = decideVersions(
      input({ requirements: [req('torch', '==2.7.*', 'report')], wheelhouse: { torch: ['2.13.0+cpu', '2.8.0+cpu'] } }),
    );
    expect(d.spec.requirements[0]?.specifier).toBe('==2.8.0');
    expect(d.spec.notes.join('\n')).toContain('the CPU build 2.8.0+cpu');
  });

  it("keeps the base's torch when it is nearer than any wheel to the report's, which nothing here has (kornia-1563: PyTorch 1.8.2)", () => {
    const d = decideVersions(
      input({
        requirements: [req('torch', '==1.8.2', 'report', 'the report: PyTorch version: 1.8.2')],
        wheelhouse: { torch: ['2.13.0+cpu'] },
      }),
    );
    expect(d.spec.requirements[0]?.specifier).toBe('==1.8.2');
    expect(d.spec.baseProvides).toContain('torch');
    expect(d.spec.decisions?.[0]).toMatchObject({ name: 'torch', version: '1.13.0a0+gitunknown', source: 'base' });
    // The decision says why the base was kept: the nearest, not "no checkout" (there is one; transformers-21089's 1.12.1).
    expect(d.spec.decisions?.[0]?.why).toBe(
      "==1.8.2 (report) has no CPU build here; the base interpreter's 1.13.0a0+gitunknown is the nearest to it",
    );
    expect(d.spec.notes.join('\n')).toContain("none is at hand, and the base interpreter's 1.13.0a0+gitunknown is the nearest");
    // A GPU run is not this case: the index has the CUDA builds.
    const gpu = decideVersions(
      input({ requirements: [req('torch', '==1.8.2', 'report')], wheelhouse: { torch: ['2.13.0+cpu'] }, gpu: true }),
    );
    expect(gpu.spec.baseProvides).toBeUndefined();
  });

  it('hands the wheel folder’s torch builds to the import ladder when the base’s torch is kept (torchvision-7885), not on a GPU run', () => {
    const kept = decideVersions(input({ requirements: [req('torch', '', 'repo')], wheelhouse: { torch: ['2.13.0+cpu'] } }));
    expect(kept.spec.baseProvides).toContain('torch');
    expect(kept.spec.cpuTorchWheels).toEqual(['2.13.0+cpu']);
    expect(decideVersions(input({ requirements: [req('torch', '', 'repo')], gpu: true })).spec.cpuTorchWheels).toBeUndefined();
    expect(kept.spec.cpuTorchIndex).toBeUndefined();
    const cpuIndex = 'https://download.pytorch.org/whl/cpu';
    const allowedIndex = decideVersions(
      input({ requirements: [req('torch', '', 'repo')], allowedIndexes: ['https://pypi.org/simple', cpuIndex] }),
    );
    expect(allowedIndex.spec.cpuTorchIndex).toBe(cpuIndex);
  });

  it("keeps the project's range and the user's pin: then PyTorch's CPU index when the operator allows it, else it says why", () => {
    const kept = decideVersions(
      input({
        requirements: [req('torch', '>=2.1,<2.10', 'repo')],
        wheelhouse: { torch: ['2.13.0+cpu'] },
        allowedIndexes: [TORCH_CPU_INDEX],
      }),
    );
    expect(kept.spec.requirements[0]?.specifier).toBe('>=2.1,<2.10');
    expect(kept.spec.extraIndexUrls).toEqual([TORCH_CPU_INDEX]);
    const warned = decideVersions(input({ requirements: [req('torch', '==2.9.1', 'config')], wheelhouse: { torch: ['2.13.0+cpu'] } }));
    expect(warned.spec.extraIndexUrls).toEqual([]);
    expect(warned.spec.notes.join('\n')).toContain('REPGEN_ENV_FIND_LINKS');
  });

  it("takes the nearest CPU wheel above a project's cap when no CPU index is allowed, never the index's CUDA build (Lightning: torch<2.10)", () => {
    const d = decideVersions(
      input({
        requirements: [req('torch', '>=2.1.0,<2.10.0', 'repo', 'requirements/pytorch/base.txt: torch >=2.1.0, <2.10.0')],
        wheelhouse: { torch: ['2.13.0+cpu'] },
      }),
    );
    expect(d.spec.requirements[0]?.specifier).toBe('==2.13.0');
    expect(d.spec.extraIndexUrls).toEqual([]);
    expect(d.spec.decisions?.[0]).toMatchObject({ name: 'torch', version: '2.13.0+cpu', source: 'wheelhouse' });
    expect(d.spec.notes.join('\n')).toContain("the nearest above the project's cap, was used instead of the index's CUDA build");
    // A project range the wheel misses from below is not a cap: nothing here fits, and the note says why.
    const below = decideVersions(input({ requirements: [req('torch', '>=2.14,<2.16', 'repo')], wheelhouse: { torch: ['2.13.0+cpu'] } }));
    expect(below.spec.requirements[0]?.specifier).toBe('>=2.14,<2.16');
    expect(below.spec.notes.join('\n')).toContain('REPGEN_ENV_FIND_LINKS');
    // A GPU run takes the project's range from the index (its CUDA build is the right one there).
    const gpu = decideVersions(
      input({ requirements: [req('torch', '>=2.1.0,<2.10.0', 'repo')], wheelhouse: { torch: ['2.13.0+cpu'] }, gpu: true }),
    );
    expect(gpu.spec.requirements[0]?.specifier).toBe('>=2.1.0,<2.10.0');
  });

  it('is left to the index on a GPU run (the CUDA build is the right one there)', () => {
    const d = decideVersions(input({ requirements: [req('torch', '>=2.1', 'repo')], wheelhouse: { torch: ['2.13.0+cpu'] }, gpu: true }));
    expect(d.spec.requirements[0]?.specifier).toBe('>=2.1');
    expect(d.spec.extraIndexUrls).toEqual([]);
  });
});

describe('the newest release before a commit', () => {
  it('is the newest final, unyanked release uploaded by that date', () => {
    const r = (version: string, uploaded: string, yanked = false) => ({ version, uploaded, wheels: [], yanked });
    const releases = [
      r('1.3.1', '2019-11-05T00:00:00Z'),
      r('1.3.0', '2019-10-10T00:00:00Z'),
      r('1.4.0rc1', '2019-10-20T00:00:00Z'),
      r('1.2.9', '2019-10-01T00:00:00Z', true),
    ];
    expect(newestReleaseBefore(releases, '2019-11-01T00:00:00Z')).toBe('1.3.0');
    expect(newestReleaseBefore(releases, '2019-01-01T00:00:00Z')).toBeNull();
  });
});
