import { mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readCheckoutFiles } from '../../../src/env/read/read-checkout-files.js';
import { makeTempDir } from '../../helpers/temp-dir.js';

describe('readCheckoutFiles (the checkout adapter)', () => {
  const dir = makeTempDir('repgen-env-checkout-');
  const outside = makeTempDir('repgen-env-outside-');
  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
    rmSync(outside, { recursive: true, force: true });
  });

  it('lists paths, reads the dependency files and what repgen.yml names, and follows no link out of the checkout', async () => {
    mkdirSync(join(dir, 'src/pkg'), { recursive: true });
    mkdirSync(join(dir, '.git'), { recursive: true });
    mkdirSync(join(dir, 'ci'), { recursive: true });
    writeFileSync(join(dir, 'pyproject.toml'), '[project]\nname = "pkg"\n');
    writeFileSync(join(dir, 'src/pkg/__init__.py'), '');
    writeFileSync(join(dir, '.git/config'), 'secret');
    writeFileSync(join(dir, 'ci/extra-deps.list'), 'six\n');
    writeFileSync(join(outside, 'secret.txt'), 'token=abc');
    symlinkSync(join(outside, 'secret.txt'), join(dir, 'requirements.txt'));
    symlinkSync(outside, join(dir, 'linked-dir'));
    const files = await readCheckoutFiles(dir, ['ci/extra-deps.list', 'not/there.txt']);
    expect(files.paths.sort()).toEqual(['ci/extra-deps.list', 'pyproject.toml', 'src/pkg/__init__.py']);
    expect([...files.texts.keys()].sort()).toEqual(['ci/extra-deps.list', 'pyproject.toml']);
  });
});
