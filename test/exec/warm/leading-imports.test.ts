import { describe, expect, it } from 'vitest';
import { leadingImports, runOwnModules } from '../../../src/exec/warm/leading-imports.js';

describe('leadingImports: the modules a script imports before any statement of its own', () => {
  const cases: [string, string, string[]][] = [
    ['plain imports, aliases, several on a line', 'import torch\nimport torch.nn as nn, numpy as np\n', ['torch', 'torch.nn', 'numpy']],
    [
      'from-imports name the module, not what they take',
      'from torchvision import models\nfrom timm.layers import Mlp as M\n',
      ['torchvision', 'timm.layers'],
    ],
    [
      'a parenthesised list over lines',
      'from torch.utils.data import (\n    DataLoader,\n    TensorDataset,\n)\nimport pandas\n',
      ['torch.utils.data', 'pandas'],
    ],
    [
      'shebang, comments, blank lines and a docstring are passed over',
      '#!/usr/bin/env python\n# -*- coding: utf-8 -*-\n"""Repro of #12: a\nmultiline docstring"""\n\nimport timm  # the project\n',
      ['timm'],
    ],
    ['__future__ is a directive, not an import', 'from __future__ import annotations\nimport torch\n', ['torch']],
    ['the first statement ends the scan', 'import torch\nx = 1\nimport pandas\n', ['torch']],
    ['setting the environment first ends it before the next import', 'import os\nos.environ["X"] = "1"\nimport torch\n', ['os']],
    ['a try block ends it', 'try:\n    import timm\nexcept ImportError:\n    pass\n', []],
    ['a relative import ends it', 'import torch\nfrom . import utils\nimport pandas\n', ['torch']],
    ['a backslash continuation ends it', 'import torch, \\\n    numpy\n', []],
    ['two statements on a line end it', 'import torch; import numpy\n', []],
    ['an inert def is passed over (its body runs only when called)', 'def f():\n    import torch\nimport numpy\n', ['numpy']],
    [
      "tier 0's helper before the report's imports: passed over",
      'def helper(model, batch=2, size=32, name="x", *args, flag=None, **kw):  # added by RepGen\n    """Doc."""\n\n    return 1\n\nimport torch\nimport torch.nn as nn\n',
      ['torch', 'torch.nn'],
    ],
    ['a def on one line', 'def f(): return 1\nimport torch\n', ['torch']],
    ['a signature over several lines', 'def f(a,\n      b=2, /, *, c=-1.5e3):\n    pass\nimport torch\n', ['torch']],
    ['a decorated def ends it (the decorator runs)', '@functools.cache\ndef f():\n    pass\nimport torch\n', []],
    ['an annotated def ends it (annotations are evaluated)', 'def f(x: int):\n    pass\nimport torch\n', []],
    ['a return annotation ends it', 'def f() -> int:\n    return 1\nimport torch\n', []],
    ['a computed default ends it', 'def f(x=g()):\n    pass\nimport torch\n', []],
    ['a name as default ends it', 'def f(x=y):\n    pass\nimport torch\n', []],
    ['a tuple default ends it', 'def f(x=(1, 2)):\n    pass\nimport torch\n', []],
    ['a class ends it (its body runs)', 'class A:\n    pass\nimport torch\n', []],
    ['an import indented under nothing ends it', 'import torch\n  import numpy\n', ['torch']],
    ['a string that is not the first statement ends it', 'import torch\n"""doc"""\nimport numpy\n', ['torch']],
    ['a docstring with code after it on its last line ends it', '"""doc"""; import torch\n', []],
    ['dynamic or odd imports end it', 'import torch\nimport importlib; importlib.import_module("x")\n', ['torch']],
    ['a name that is not a module name ends it', 'import torch\nimport 9lives\n', ['torch']],
    ['repeats are listed once', 'import torch\nimport torch\nfrom torch import nn\n', ['torch']],
    ['windows line ends', 'import torch\r\nimport numpy\r\n', ['torch', 'numpy']],
    ['an empty script', '', []],
  ];
  for (const [what, source, expected] of cases) {
    it(what, () => expect(leadingImports(source)).toEqual(expected));
  }

  it("stops before an import of one of the run's own files (that import runs the run's code)", () => {
    const own = runOwnModules(['main.py', 'model.py', 'data/__init__.py'], 'main.py');
    expect(leadingImports('import torch\nimport model\nimport pandas\n', own)).toEqual(['torch']);
    expect(leadingImports('import torch\nfrom data.loader import x\nimport pandas\n', own)).toEqual(['torch']);
    expect(leadingImports('import torch\nimport models\n', own)).toEqual(['torch', 'models']);
  });

  it('lists at most 32 modules', () => {
    const many = Array.from({ length: 50 }, (_, i) => `import m${i}`).join('\n');
    expect(leadingImports(many)).toHaveLength(32);
  });
});

describe("runOwnModules: the top-level names a run's files give its entry's folder", () => {
  it('files and folders beside the entry, not elsewhere', () => {
    expect(
      [...runOwnModules(['main.py', 'model.py', 'pkg/__init__.py', 'ext.cpython-311-x86_64-linux-gnu.so', 'README'], 'main.py')].sort(),
    ).toEqual(['README', 'ext', 'main', 'model', 'pkg']);
    expect([...runOwnModules(['t/main.py', 't/helper.py', 'other.py', 'x/y.py'], 't/main.py')].sort()).toEqual(['helper', 'main']);
  });
});
