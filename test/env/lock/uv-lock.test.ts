import { describe, expect, it } from 'vitest';
import type { Requirement } from '../../../src/env/types.js';
import { compileLogTail, readUvProblem } from '../../../src/env/lock/uv-errors.js';
import {
  dropUnavailableLocals,
  localPins,
  normaliseLock,
  parseLock,
  parseVia,
  parseWheelName,
  projectPthLines,
  wheelFits,
  withoutProvided,
} from '../../../src/env/lock/uv-lock.js';

const r = (name: string, specifier = ''): Requirement => ({ name, specifier, extras: [], source: 'report', why: 't' });
const torch = parseWheelName('torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl')!;

describe('uv-lock', () => {
  it('reads the pins of a compiled lock and normalises it to sorted pins', () => {
    const compiled = 'torch==2.13.0+cpu\n    # via -r in\nNumPy==2.4.6 ; python_version >= "3.9"\n--find-links /opt/wheels\n';
    expect(parseLock(compiled)).toEqual({ torch: '2.13.0+cpu', numpy: '2.4.6' });
    expect(normaliseLock(compiled)).toBe('NumPy==2.4.6 ; python_version >= "3.9"\ntorch==2.13.0+cpu\n');
  });

  it('knows which wheels fit CPython 3.11 on Linux', () => {
    expect(wheelFits(torch, '3.11', 'x86_64')).toBe(true);
    expect(wheelFits(torch, '3.12', 'x86_64')).toBe(false);
    expect(wheelFits(parseWheelName('six-1.17.0-py2.py3-none-any.whl')!, '3.11', 'x86_64')).toBe(true);
    expect(wheelFits(parseWheelName('x-1.0-cp38-abi3-manylinux2014_x86_64.whl')!, '3.11', 'x86_64')).toBe(true);
    expect(wheelFits(parseWheelName('x-1.0-cp311-cp311-win_amd64.whl')!, '3.11', 'x86_64')).toBe(false);
  });

  it('pins the local CPU torch when the requirements admit it, and not when they do not', () => {
    expect(localPins([torch], [r('torch')], '3.11', 'x86_64')).toEqual([{ name: 'torch', version: '2.13.0+cpu' }]);
    expect(localPins([torch], [r('numpy')], '3.11', 'x86_64')).toEqual([{ name: 'torch', version: '2.13.0+cpu' }]);
    expect(localPins([torch], [r('torch', '>=2.1,<3')], '3.11', 'x86_64')).toHaveLength(1);
    expect(localPins([torch], [r('torch', '==2.8.0')], '3.11', 'x86_64')).toEqual([]);
  });

  it('drops a CUDA local label it has no file for, and keeps one it has', () => {
    const out = dropUnavailableLocals([r('torch', '==2.8.0+cu129'), r('numpy', '<2')], []);
    expect(out.requirements.map((q) => q.specifier)).toEqual(['==2.8.0', '<2']);
    expect(out.substitutions).toEqual([expect.objectContaining({ name: 'torch', wanted: '2.8.0+cu129', got: '2.8.0' })]);
    expect(dropUnavailableLocals([r('torch', '==2.13.0+cpu')], [{ name: 'torch', version: '2.13.0+cpu' }]).substitutions).toEqual([]);
  });

  it('puts the import roots on sys.path as the sandbox mounts the checkout', () => {
    const p = { root: '', importRoots: ['src'], mode: 'pth' as const, distribution: null, extensions: [] };
    expect(projectPthLines(p, '/workspace')).toEqual(['/workspace/src']);
    expect(projectPthLines({ ...p, importRoots: [''] }, '/workspace')).toEqual(['/workspace']);
    expect(projectPthLines({ ...p, root: 'python', importRoots: ['', 'src'] }, '/workspace')).toEqual([
      '/workspace/python',
      '/workspace/python/src',
    ]);
  });
});

describe('readUvProblem (uv 0.13 wording)', () => {
  it.each([
    [
      '  cause: Because there is no version of six==1.99.0 and you require six==1.99.0, we can conclude',
      'missing-version',
      'six',
      '1.99.0',
    ],
    ['  cause: Because numpy==1.21.0 has no usable wheels and you require numpy==1.21.0, we can', 'no-wheel', 'numpy', '1.21.0'],
    [
      '  cause: Because fvcore>=0.1.5.post20210327 has no usable wheels and only the following versions of fvcore are available:',
      'no-wheel',
      'fvcore',
      null,
    ],
    ['  × Failed to build `broken==1.0`\n  ├─▶ The build backend returned an error', 'build', 'broken', '1.0'],
    ['  cause: error sending request for url (https://pypi.org/simple/six/)', 'network', null, null],
    [
      '  cause: Because all versions of epsilon depend on beta==0.9 and beta==1.0, we can conclude that all versions of epsilon cannot be used.\n  And because you require epsilon, we',
      'other',
      'epsilon',
      null,
    ],
  ])('%s', (stderr, kind, pkg, version) => {
    expect(readUvProblem(stderr)).toEqual({ kind, package: pkg, version });
  });
});

// uv 0.13's `--annotation-style line` output for `kornia` beside the base's torch (shortened).
const COMPILED = [
  'filelock==3.20.0          # via torch',
  'kornia==0.7.0             # via -r requirements.in',
  'kornia-rs==0.1.9          # via kornia',
  'nvidia-cublas==13.4.1.3   # via torch, nvidia-cudnn-cu13',
  'nvidia-cudnn-cu13==9.26.0.51  # via torch',
  'packaging==25.0           # via kornia, -c constraints.txt',
  'torch==2.13.0             # via kornia, -r requirements.in',
  'triton==3.9.0             # via torch',
  'typing-extensions==4.15.0  # via torch, kornia-rs',
].join('\n');

describe('an overlay lock (what only the base’s packages pull in is left out)', () => {
  it('reads who pulled each distribution in', () => {
    expect(parseVia(COMPILED)).toMatchObject({
      'nvidia-cublas': ['torch', 'nvidia-cudnn-cu13'],
      packaging: ['kornia', '-c constraints.txt'],
      torch: ['kornia', '-r requirements.in'],
    });
  });

  it('drops the provided torch and everything only it pulls in, transitively, and keeps what anything else needs', () => {
    const lock = normaliseLock(COMPILED);
    expect(withoutProvided(lock, ['torch'], parseVia(COMPILED))).toBe(
      'kornia-rs==0.1.9\nkornia==0.7.0\npackaging==25.0\ntyping-extensions==4.15.0\n',
    );
    // Without annotations (a lock cached before they were kept) only the provided package itself goes.
    expect(withoutProvided(lock, ['torch'])).toContain('triton==3.9.0');
  });
});

describe('compileLogTail', () => {
  it("puts the compiler's error lines, with the line naming the file, before the traceback that ends a ninja build", () => {
    const log = [
      '[1/11] c++ -c box_iou_rotated_cpu.cpp',
      'FAILED: box_iou_rotated_cpu.o',
      'In file included from detectron2/layers/csrc/vision.cpp:3:',
      'detectron2/layers/csrc/box_iou_rotated/box_iou_rotated.h:2:10: fatal error: ATen/ATen.h: No such file or directory',
      'compilation terminated.',
      'Traceback (most recent call last):',
      ...Array.from({ length: 60 }, (_, i) => `  File "x.py", line ${i}, in f`),
      'RuntimeError: Error compiling objects for extension',
    ].join('\n');
    const tail = compileLogTail(log);
    expect(tail).toContain('fatal error: ATen/ATen.h: No such file or directory');
    expect(tail).toContain('In file included from detectron2/layers/csrc/vision.cpp:3:');
    expect(tail.trimEnd().endsWith('RuntimeError: Error compiling objects for extension')).toBe(true);
  });

  it('is the plain tail when the log has no compiler error', () => {
    expect(compileLogTail('a\nb')).toBe('a\nb');
  });
});
