import { describe, expect, it } from 'vitest';
import { classifyProofFailure, readEnvImportFailure, type ImportContext } from '../../../src/env/prove/import-failure.js';

const ctx: ImportContext = {
  pins: { torch: '2.13.0+cpu', numpy: '2.4.6' },
  declared: ['absl-py', 'numpy', 'lightning-utilities'],
  projectPackages: ['keras', 'detectron2', 'lightning'],
  workspaceMount: '/workspace',
};

function tb(frames: string[], last: string): string {
  return ['Traceback (most recent call last):', ...frames.map((f) => `  File "${f}", line 3, in <module>\n    import x`), last].join('\n');
}

describe('readEnvImportFailure', () => {
  it('a missing module that the project’s own code imports (Keras: absl) is the environment’s', () => {
    const err = tb(
      ['/tmp/w/main.py', '/workspace/keras/__init__.py', '/workspace/keras/src/utils.py'],
      "ModuleNotFoundError: No module named 'absl'",
    );
    expect(readEnvImportFailure(err, { ...ctx, declared: [] })).toMatchObject({ module: 'absl', configKey: 'environment.packages' });
  });

  it('a declared dependency that does not import is the environment’s, wherever the import is', () => {
    const err = tb(['/tmp/w/main.py'], "ModuleNotFoundError: No module named 'lightning_utilities.core'");
    expect(readEnvImportFailure(err, ctx)).toMatchObject({
      module: 'lightning_utilities.core',
      why: expect.stringMatching(/declared dependency/),
    });
  });

  it('an unbuilt extension (detectron2 _C) points at the build key', () => {
    const err = tb(
      ['/tmp/w/main.py', '/workspace/detectron2/layers/nms.py'],
      "ImportError: cannot import name '_C' from 'detectron2' (/workspace/detectron2/__init__.py)",
    );
    expect(readEnvImportFailure(err, ctx)).toEqual({
      module: 'detectron2._C',
      why: expect.stringMatching(/extension _C/),
      configKey: 'environment.build',
    });
  });

  it('the project that does not import at all (a src/ layout not on sys.path) is the environment’s', () => {
    const err = tb(['/tmp/w/main.py'], "ModuleNotFoundError: No module named 'lightning'");
    expect(readEnvImportFailure(err, ctx)).toMatchObject({ module: 'lightning', configKey: 'environment.build' });
  });

  it('a missing module inside an installed package is the environment’s', () => {
    const err = tb(
      ['/tmp/w/main.py', '/cache/envs/k/lib/python3.11/site-packages/torchvision/io.py'],
      "ModuleNotFoundError: No module named 'av'",
    );
    expect(readEnvImportFailure(err, ctx)).toMatchObject({ module: 'av', why: expect.stringMatching(/installed package/) });
  });

  it('the script’s own import of a module nobody declared is left to the agent', () => {
    expect(readEnvImportFailure(tb(['/tmp/w/main.py'], "ModuleNotFoundError: No module named 'made_up_helpers'"), ctx)).toBeNull();
    expect(readEnvImportFailure('RuntimeError: shape mismatch', ctx)).toBeNull();
  });
});

describe('classifyProofFailure (the import ladder’s reading of a failed import)', () => {
  const c = { pins: { torch: '1.13.1', numpy: '1.24.2' }, projectPackages: ['diffusers', 'detectron2'] };
  const fail = (module: string, error: string, versions: Record<string, string> = {}) => ({ module, error, versions });

  it('a framework attribute or submodule missing is a framework too old (torch.xpu, torch._dynamo, torch.float8_e4m3fn)', () => {
    expect(classifyProofFailure(fail('diffusers', "AttributeError: module 'torch' has no attribute 'xpu'"), c)).toMatchObject({
      kind: 'framework-too-old',
      package: 'torch',
      constraint: '>1.13.1',
    });
    expect(classifyProofFailure(fail('lightning', "ModuleNotFoundError: No module named 'torch._dynamo'"), c)).toMatchObject({
      kind: 'framework-too-old',
      package: 'torch',
      constraint: '>1.13.1',
    });
    // Taken from the base (not in the pins): the version the proof read from the interpreter is used.
    const base = fail('diffusers', "AttributeError: module 'torch' has no attribute 'float8_e4m3fn'", { torch: '1.13.1' });
    expect(classifyProofFailure(base, { ...c, pins: {} })).toMatchObject({ kind: 'framework-too-old', constraint: '>1.13.1' });
  });

  it('a removed API is a release too new (np.float, torch.solve, torch._six)', () => {
    const np = fail(
      'fairseq',
      "AttributeError: module 'numpy' has no attribute 'float'.\n`np.float` was a deprecated alias for the builtin `float`.",
    );
    expect(classifyProofFailure(np, c)).toMatchObject({ kind: 'api-removed', package: 'numpy', constraint: '<1.24' });
    expect(
      classifyProofFailure(fail('old', "AttributeError: module 'torch' has no attribute 'solve'"), { ...c, pins: { torch: '2.1.0' } }),
    ).toMatchObject({ kind: 'api-removed', package: 'torch', constraint: '<2.1' });
    expect(
      classifyProofFailure(fail('old', "AttributeError: module 'numpy' has no attribute 'float_'"), { ...c, pins: { numpy: '2.1.0' } }),
    ).toMatchObject({ kind: 'api-removed', constraint: '<2' });
    expect(
      classifyProofFailure(fail('apex', "ModuleNotFoundError: No module named 'torch._six'"), { ...c, pins: { torch: '2.1.0' } }),
    ).toMatchObject({
      kind: 'api-removed',
      constraint: '<2.0',
    });
  });

  it("a module a tool's release removed is that release too new: below the release that removed it (pkg_resources, setuptools 82)", () => {
    const pkg = fail('torchmetrics', "ModuleNotFoundError: No module named 'pkg_resources'");
    const setuptools = (v: string) => ({
      ...c,
      pins: { setuptools: v },
      distributionOf: (m: string) => (m === 'pkg_resources' ? 'setuptools' : null),
    });
    expect(classifyProofFailure(pkg, setuptools('84.2.1'))).toMatchObject({
      kind: 'api-removed',
      package: 'setuptools',
      constraint: '<82',
      why: expect.stringContaining('pkg_resources is gone from setuptools 84.2.1 (removed in 82)'),
    });
    // A venv of its own with no setuptools at all: added at a release that still has the module.
    expect(classifyProofFailure(pkg, { ...setuptools('0'), pins: {} })).toMatchObject({
      kind: 'missing-module',
      package: 'setuptools',
      constraint: '<82',
    });
    expect(
      classifyProofFailure(fail('old', "ModuleNotFoundError: No module named 'tensorflow.contrib'"), {
        ...c,
        pins: { tensorflow: '2.15.1' },
      }),
    ).toMatchObject({ kind: 'api-removed', package: 'tensorflow', constraint: '<2.0' });
    // A module no table names that an installed distribution no longer ships: below that distribution's major.
    const other = fail('x', "ModuleNotFoundError: No module named 'oldmod'");
    const tool = { ...c, pins: { 'old-tool': '5.1.0' }, distributionOf: (m: string) => (m === 'oldmod' ? 'old-tool' : null) };
    expect(classifyProofFailure(other, tool)).toMatchObject({ kind: 'api-removed', package: 'old-tool', constraint: '<5' });
  });

  it('a part missing from a package nothing bounded (the newest) is a release too new: below its major (Keras 2 code on Keras 3)', () => {
    const sub = fail('from keras.layers.sub import Dense', "ModuleNotFoundError: No module named 'keras.layers.sub'");
    const k3 = { ...c, pins: { keras: '3.12.0' } };
    expect(classifyProofFailure(sub, { ...k3, free: ['keras'] })).toMatchObject({
      kind: 'api-removed',
      package: 'keras',
      constraint: '<3',
    });
    // Bounded (the report's keras==3.12.0 or a project's range): the old reading, a framework too old.
    expect(classifyProofFailure(sub, k3)).toMatchObject({ kind: 'framework-too-old', constraint: '>3.12.0' });
    const name = fail('from keras.layers import CuDNNLSTM', "ImportError: cannot import name 'CuDNNLSTM' from 'keras.layers'");
    expect(classifyProofFailure(name, { ...k3, free: ['keras'] })).toMatchObject({ kind: 'api-removed', constraint: '<3' });
  });

  it("Keras 2 code's module paths left with Keras 2.13 (keras/src): below 2.13 from Keras 3 and from Keras 2.15 alike", () => {
    // The ladder's old reading: keras 3 → `<3` (2.15.0, which lacks them too) → `>2.15.0` (keras 3 again): exit_env.
    for (const [module, line] of [
      ['keras.layers.core', 'from keras.layers.core import Dense, Flatten'],
      ['keras.layers.convolutional', 'from keras.layers.convolutional import Conv2D'],
      ['keras.engine.topology', 'from keras.engine.topology import Layer'],
      ['keras.wrappers.scikit_learn', 'from keras.wrappers.scikit_learn import KerasClassifier'],
    ] as const) {
      const f = fail(line, `ModuleNotFoundError: No module named '${module}'`);
      for (const [keras, free] of [
        ['3.15.1', ['keras']],
        ['2.15.0', []],
        ['2.13.1', []],
      ] as const)
        expect(classifyProofFailure(f, { ...c, pins: { keras }, free })).toMatchObject({
          kind: 'api-removed',
          package: 'keras',
          constraint: '<2.13',
          why: expect.stringContaining(`is gone from keras ${keras} (removed in 2.13)`),
        });
    }
    // Keras 2.12 still has them: a failure there is not this removal.
    const f = fail('from keras.layers.core import Dense', "ModuleNotFoundError: No module named 'keras.layers.core'");
    expect(classifyProofFailure(f, { ...c, pins: { keras: '2.12.0' } })).not.toMatchObject({ constraint: '<2.13' });
  });

  it('a removed API whose removal release is known goes straight below it, from any newer release (fairseq 2019 on numpy 2.4.6)', () => {
    const npFloat = fail('fairseq', "AttributeError: module 'numpy' has no attribute 'float'.\n`np.float` was a deprecated alias");
    for (const numpy of ['2.4.6', '1.26.4', '1.25.2'])
      expect(classifyProofFailure(npFloat, { ...c, pins: { numpy } })).toMatchObject({ package: 'numpy', constraint: '<1.24' });
    const asscalar = fail('old', "AttributeError: module 'numpy' has no attribute 'asscalar'");
    expect(classifyProofFailure(asscalar, { ...c, pins: { numpy: '2.4.6' } })).toMatchObject({ constraint: '<1.23' });
    // A name removed later than the env's release is not that removal: one minor down, as for a name of no known release.
    const floatUnder = fail('old', "AttributeError: module 'numpy' has no attribute 'float_'");
    expect(classifyProofFailure(floatUnder, { ...c, pins: { numpy: '1.26.4' } })).toMatchObject({ constraint: '<1.26' });
    expect(classifyProofFailure(floatUnder, { ...c, pins: { numpy: '2.4.6' } })).toMatchObject({ constraint: '<2' });
  });

  it('reads the NumPy C-API mismatch both ways, and the SystemError it shows as inside __import__', () => {
    const newer = fail(
      'tensorflow',
      'ImportError: numpy.core.multiarray failed to import\nRuntimeError: module was compiled against NumPy C-API version 0x12 (NumPy 2.0) but this version of numpy is 0x10',
    );
    expect(classifyProofFailure(newer, c)).toMatchObject({ kind: 'numpy-abi', package: 'numpy', constraint: '>=2.0' });
    const older = fail(
      'tensorflow',
      'A module that was compiled using NumPy 1.x cannot be run in\nNumPy 2.1.0 as it may crash.\nImportError: _ARRAY_API not found',
    );
    expect(classifyProofFailure(older, { ...c, pins: { numpy: '2.1.0' } })).toMatchObject({ kind: 'numpy-abi', constraint: '<2' });
    const sys = fail('keras', 'SystemError: <built-in function __import__> returned a result with an exception set', { numpy: '1.24.2' });
    expect(classifyProofFailure(sys, { ...c, pins: {} })).toMatchObject({ kind: 'numpy-abi', constraint: '>=2' });
  });

  it('a top-level module nothing installed is missing (Keras 3’s default backend); the project’s extension is its build', () => {
    const tf = fail('keras', "ModuleNotFoundError: No module named 'tensorflow'");
    expect(classifyProofFailure(tf, c)).toMatchObject({ kind: 'missing-module', package: 'tensorflow', constraint: '' });
    const ext = fail('detectron2', "ImportError: cannot import name '_C' from 'detectron2' (/w/detectron2/__init__.py)");
    expect(classifyProofFailure(ext, c)).toMatchObject({ kind: 'extension-unbuilt', constraint: null });
    expect(classifyProofFailure(fail('x', 'RuntimeError: something else'), c)).toMatchObject({ kind: 'other', constraint: null });
  });
});
