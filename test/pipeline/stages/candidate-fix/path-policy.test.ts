import { describe, expect, it } from 'vitest';
import { refusedPath } from '../../../../src/pipeline/stages/candidate-fix/path-policy.js';

describe('refusedPath: a candidate fix changes library code only (hostile paths)', () => {
  it.each([['toylib/blocks.py'], ['src/toylib/models/resnet.py'], ['toylib/__init__.pyi'], ['timm/layers/helpers.py']])(
    'accepts %s',
    (path) => {
      expect(refusedPath(path)).toBeNull();
    },
  );

  it.each([
    ['../outside.py', /not a plain path/],
    ['toylib/../../etc/x.py', /not a plain path/],
    ['/etc/passwd', /absolute/],
    ['toylib//blocks.py', /not a plain path/],
    ['./toylib/blocks.py', /not a plain path/],
    ['toylib\\blocks.py', /backslash/],
    ['toylib/\0quoted', /control character/],
    ['toylib/\x1bblocks.py', /control character/],
    ['repro.py', /is the reproduction/],
    ['toylib/repro.py', /is the reproduction/],
    ['tests/test_blocks.py', /test folder/],
    ['toylib/test/helpers.py', /test folder/],
    ['toylib/test_blocks.py', /test file/],
    ['toylib/blocks_test.py', /test file/],
    ['conftest.py', /build or setup file/],
    ['toylib/conftest.py', /build or setup file/],
    ['.github/workflows/ci.yml', /hidden/],
    ['.gitlab-ci.yml', /hidden/],
    ['.circleci/config.yml', /hidden/],
    ['.git/hooks/pre-commit', /hidden/],
    ['setup.py', /build or setup file/],
    ['setup.cfg', /build or setup file/],
    ['pyproject.toml', /build or setup file/],
    ['toylib/build.toml', /build or setup file/],
    ['requirements-dev.txt', /build or setup file/],
    ['tox.ini', /build or setup file/],
    ['noxfile.py', /build or setup file/],
    ['Jenkinsfile', /CI file/],
    ['azure-pipelines.yml', /CI file/],
    ['toylib/_ext.c', /not Python source/],
    ['toylib/_ext.pyx', /not Python source/],
    ['README.md', /not Python source/],
    ['', /names no file/],
    [`${'a/'.repeat(200)}x.py`, /too long/],
  ])('refuses %s', (path, why) => {
    expect(refusedPath(path)).toMatch(why);
  });

  it('refuses the reproduction under the name it runs as', () => {
    expect(refusedPath('toylib/check_bug.py', ['check_bug.py'])).toMatch(/is the reproduction/);
  });
});
