import { describe, expect, it } from 'vitest';
import { distributionsForImports, importedModules } from '../../../src/env/read/import-names.js';
import { loadImportNameTables } from '../../../src/env/read/load-import-names.js';

describe('import names → distributions', () => {
  const tables = loadImportNameTables();

  it('loads pipreqs’ mapping and the 3.11 stdlib list from data/', () => {
    expect(tables.mapping.size).toBeGreaterThan(800);
    // A namespace several distributions share names none of them.
    expect(tables.mapping.get('azure')).toBe('');
    expect(tables.stdlib.has('asyncio') && tables.stdlib.has('tomllib')).toBe(true);
  });

  it('maps through the table, keeps same-name imports, and leaves out stdlib, the project and local-looking names', () => {
    const got = distributionsForImports(
      [
        'cv2',
        'azure.storage.blob',
        'sklearn.metrics',
        'PIL.Image',
        'yaml',
        'absl.flags',
        'torch.nn',
        'os.path',
        'json',
        'difflib_x.pipelines',
        'utils',
        'model',
        '_private',
      ],
      tables,
      ['difflib_x'],
    );
    expect(got.map((d) => [d.module, d.distribution, d.via])).toEqual([
      ['cv2', 'opencv-python-headless', 'mapping'],
      ['sklearn', 'scikit-learn', 'mapping'],
      ['PIL', 'pillow', 'mapping'],
      ['yaml', 'pyyaml', 'mapping'],
      ['absl', 'absl-py', 'mapping'],
      ['torch', 'torch', 'same-name'],
    ]);
  });

  it('reads imports from report code, prompts and cut pastes included', () => {
    expect(
      importedModules(
        '>>> import torch, numpy as np\n... from diffusers.pipelines import X\nfrom . import y\n  import cv2  # indented\nx = 1',
      ),
    ).toEqual(['torch', 'numpy', 'diffusers.pipelines', 'cv2']);
  });
});
