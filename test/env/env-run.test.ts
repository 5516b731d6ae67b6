import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BuiltEnv } from '../../src/env/types.js';
import { UvEnvBuilder } from '../../src/env/uv-builder.js';
import { createLocalExecutor, type LocalExecutor } from '../../src/exec/local/executor.js';
import { findBinary, probeSandbox } from '../../src/exec/sandbox/sandbox.js';
import { indexSpec, makeDists, requirement, startLoopbackIndex, type LoopbackIndex } from '../helpers/loopback-pypi.js';
import { removeTree } from '../../src/env/build/seal-env.js';
import { makeTempDir } from '../helpers/temp-dir.js';

// A built env as runs use it: the local executor runs a script with the env's interpreter in the usual sandbox,
// the checkout mounted read-only at /workspace, and the project (a src/ layout) importable through the venv's .pth.

describe('a built env in a sandboxed run', () => {
  let root: string;
  let index: LoopbackIndex;
  let env: BuiltEnv;
  let executor: LocalExecutor;
  let checkout: string;

  beforeAll(async () => {
    root = makeTempDir('repgen-envrun-');
    chmodSync(root, 0o711);
    const dists = join(root, 'dists');
    mkdirSync(dists);
    makeDists(dists, [{ name: 'alpha', version: '2.0', init: 'VERSION = "alpha 2.0 from the env"\n' }]);
    index = await startLoopbackIndex(dists);
    checkout = join(root, 'checkout');
    mkdirSync(join(checkout, 'src', 'mypkg'), { recursive: true });
    writeFileSync(join(checkout, 'src', 'mypkg', '__init__.py'), 'WHERE = __file__\n');
    chmodSync(root, 0o755);
    const plan = await probeSandbox('bwrap', { workRoot: tmpdir() });
    const builder = new UvEnvBuilder({
      cacheRoot: join(root, 'cache'),
      uv: findBinary('uv') as string,
      basePython: '/usr/bin/python3',
      plan,
    });
    const built = await builder.build(
      indexSpec(index, [requirement('alpha')], {
        project: { root: '', importRoots: ['src'], mode: 'pth', distribution: 'mypkg', extensions: [] },
      }),
      { checkout, signal: new AbortController().signal },
    );
    if (!built.ok) throw new Error(JSON.stringify(built.failure));
    env = built.env;
    executor = createLocalExecutor({ warmPool: 'off' });
  }, 60_000);

  afterAll(async () => {
    await executor?.close();
    await index?.close();
    await removeTree(root); // sealed envs' folders are read-only
  });

  it('imports the locked dependency from the venv and the project from the mounted checkout', async () => {
    const script = 'import alpha, mypkg, sys\nprint(alpha.VERSION)\nprint(mypkg.WHERE)\nprint(sys.prefix)\n';
    const r = await executor.run({
      files: [{ path: 'main.py', content: script }],
      entry: 'main.py',
      interpreter: env.python,
      workspace: { hostPath: checkout },
    });
    expect(r.stderr).toBe('');
    const [version, where, prefix] = r.stdout.trim().split('\n');
    expect(version).toBe('alpha 2.0 from the env');
    expect(where).toBe('/workspace/src/mypkg/__init__.py');
    expect(prefix).toBe(env.readOnlyPaths[0]);
  });
});
