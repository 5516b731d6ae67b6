import { describe, expect, it } from 'vitest';
import { readEnvImportFailure, type ImportContext } from '../../src/env/import-failure.js';

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
