import { chmodSync, existsSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildExtensions, missingHeadersHint } from '../../../src/env/build/extension-build.js';
import { writeCExtensionProject, projectOnlySpec } from '../../helpers/c-extension.js';
import type { BuiltEnv, ProjectInstall } from '../../../src/env/types.js';
import { UvEnvBuilder } from '../../../src/env/uv-builder.js';
import { findBinary, probeSandbox, type SandboxPlan } from '../../../src/exec/sandbox/sandbox.js';
import { removeTree } from '../../../src/env/build/seal-env.js';
import { makeTempDir } from '../../helpers/temp-dir.js';

describe('buildExtensions (setup.py build_ext --inplace in the sandbox)', () => {
  let root: string;
  let plan: SandboxPlan;
  let env: BuiltEnv;
  const signal = new AbortController().signal;
  const project: ProjectInstall = { root: '', importRoots: [''], mode: 'build', distribution: 'pkg', extensions: ['csrc/ext.c'] };

  function checkout(name: string): string {
    return writeCExtensionProject(join(root, name));
  }

  beforeAll(async () => {
    root = makeTempDir('repgen-ext-');
    chmodSync(root, 0o711);
    plan = await probeSandbox('bwrap', { workRoot: tmpdir() });
    const uv = findBinary('uv');
    if (!uv) throw new Error('uv not found: run scripts/ensure-system.sh');
    const builder = new UvEnvBuilder({ cacheRoot: join(root, 'cache'), uv, basePython: '/usr/bin/python3', plan });
    const spec = projectOnlySpec(project);
    const built = await builder.build(spec, { checkout: null, signal });
    if (!built.ok) throw new Error(JSON.stringify(built.failure));
    env = built.env;
  }, 60_000);

  // A sealed env's folders are read-only: as any uid but root, rmSync cannot empty them.
  afterAll(() => removeTree(root));

  it('compiles the extension next to its sources with the env’s interpreter', async () => {
    const dir = checkout('ok');
    expect(await buildExtensions({ plan, env, project, checkout: dir, signal })).toBeNull();
    expect(readdirSync(join(dir, 'pkg')).some((f) => f.startsWith('_C.') && f.endsWith('.so'))).toBe(true);
    const answer = execFileSync(env.python, ['-c', 'import pkg._C as c; print(c.answer)'], { cwd: dir, encoding: 'utf8' });
    expect(answer.trim()).toBe('42');
    expect(readdirSync(dir).filter((f) => f.startsWith('.repgen-build-'))).toEqual([]);
  });

  it('reports a failing extension build as the extensions step, with the log', async () => {
    const dir = checkout('bad');
    writeFileSync(join(dir, 'fail'), '');
    const failure = await buildExtensions({ plan, env, project, checkout: dir, signal });
    expect(failure).toMatchObject({ step: 'extensions', package: 'pkg', configKey: 'environment.build' });
    expect(failure?.logTail).toContain('extension did not compile');
  });

  it('says so when the project has no setup.py to build in place with (another build backend)', async () => {
    const dir = checkout('nosetup');
    rmSync(join(dir, 'setup.py'));
    const failure = await buildExtensions({ plan, env, project, checkout: dir, signal });
    expect(failure).toMatchObject({
      step: 'extensions',
      configKey: 'environment.build',
      message: expect.stringMatching(/only through setup\.py/),
    });
  });

  it('does nothing for a project without extensions', async () => {
    const dir = checkout('plain');
    expect(await buildExtensions({ plan, env, project: { ...project, mode: 'pth', extensions: [] }, checkout: dir, signal })).toBeNull();
    expect(existsSync(join(dir, 'pkg', '_C.so'))).toBe(false);
  });
});

describe('missingHeadersHint: a compile that stops at a header the machine should hold', () => {
  it("names Debian's packages for torch's and pybind11's headers (detectron2 v0.6 on python3-torch)", () => {
    const log = [
      'box_iou_rotated.h:3:10: fatal error: torch/types.h: No such file or directory',
      'cocoeval.h:4:10: fatal error: pybind11/numpy.h: No such file or directory',
    ].join('\n');
    expect(missingHeadersHint(log)).toBe(
      "the interpreter lacks torch's C++ headers and pybind11's headers (a machine package, not the project's: " +
        'on Debian, apt-get install libtorch-dev pybind11-dev)',
    );
  });

  it("says nothing for the project's own errors (a missing header of its own, a syntax error)", () => {
    expect(missingHeadersHint('src/a.c:1:10: fatal error: mylib/a.h: No such file or directory')).toBeNull();
    expect(missingHeadersHint("src/a.c:3:1: error: expected ';' before '}' token")).toBeNull();
  });
});
