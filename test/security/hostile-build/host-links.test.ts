import {
  chmodSync,
  existsSync,
  linkSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readlinkSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildProjectCheckout } from '../../../src/env/build/project-build.js';
import { removeTree } from '../../../src/env/build/seal-env.js';
import type { BuiltEnv, ProjectInstall } from '../../../src/env/types.js';
import { UvEnvBuilder } from '../../../src/env/uv-builder.js';
import { createLocalExecutor } from '../../../src/exec/local/executor.js';
import { findBinary, handWorkdirToSandbox, probeSandbox, type SandboxPlan } from '../../../src/exec/sandbox/sandbox.js';
import { SETUP_PY, writeCExtensionProject, projectOnlySpec } from '../../helpers/c-extension.js';

// Issue 38, item 1 and 3: the host never writes or chowns through a link it did not make, in a folder a sandbox
// could write (a warm server's work dir) or in a copy of a checkout (a committed link). Each test plants a link to a
// file of the host's (0600, RepGen's uid) and shows the host neither wrote it nor gave it to the sandbox's uid. As
// root the sandbox's uid is another one (65534) and a chown through the link would show; as another uid, a write
// through it would.

const root = mkdtempSync(join(tmpdir(), 'repgen-host-links-'));
chmodSync(root, 0o755);
// Sealed envs' folders are read-only: rmSync removes them only as root, who passes every mode bit.
afterAll(() => removeTree(root));

interface Victim {
  path: string;
  uid: number;
  content: string;
}

/** A file of the host's outside every sandbox: a planted link points at it. */
function victim(): Victim {
  const dir = mkdtempSync(join(root, 'host-only-'));
  const path = join(dir, 'key');
  writeFileSync(path, 'host secret\n', { mode: 0o600 });
  return { path, uid: statSync(path).uid, content: 'host secret\n' };
}

function untouched(v: Victim): void {
  expect(readFileSync(v.path, 'utf8')).toBe(v.content);
  expect(statSync(v.path).uid).toBe(v.uid);
  expect(statSync(v.path).mode & 0o777).toBe(0o600);
  expect(statSync(join(v.path, '..')).uid).toBe(v.uid);
}

describe('a warm server cannot make the host write or chown through a link (issue 38, item 1)', () => {
  it('a leading import plants run-1/main.py and run-2 as links to a host file: the host writes neither, the runs still run', async () => {
    const v = victim();
    const ws = mkdtempSync(join(root, 'ws-'));
    chmodSync(ws, 0o755);
    // Imported ahead in the fork server (its cwd is the server's work dir) before the run's files are written.
    writeFileSync(
      join(ws, 'planter.py'),
      [
        'import os',
        `VICTIM = ${JSON.stringify(v.path)}`,
        'for n in range(1, 4):',
        '    try:',
        '        os.mkdir("run-%d" % n)',
        '        os.symlink(VICTIM, "run-%d/main.py" % n)',
        '        os.symlink(os.path.dirname(VICTIM), "run-%d/out" % n)',
        '    except OSError:',
        '        pass',
        'try:',
        '    os.symlink(os.path.dirname(VICTIM), "run-4")',
        'except OSError:',
        '    pass',
        '',
      ].join('\n'),
    );
    chmodSync(join(ws, 'planter.py'), 0o644);
    const ex = createLocalExecutor({ workRoot: root, warmPool: 'always' });
    try {
      const req = {
        files: [{ path: 'main.py', content: 'import planter\nprint("ran")\n' }],
        entry: 'main.py',
        workspace: { hostPath: ws },
      };
      const results = [];
      for (let i = 0; i < 3; i++) results.push(await ex.run(req));
      untouched(v);
      expect(existsSync(join(v.path, '..', 'main.py'))).toBe(false);
      // The planted names cost the server (the run goes cold), never the run.
      for (const r of results) expect([r.exitCode, r.stdout]).toEqual([0, 'ran\n']);
    } finally {
      await ex.close();
    }
  });
});

describe('handing a work dir to the sandbox never chowns through a link (issue 38, item 1)', () => {
  let plan: SandboxPlan;
  beforeAll(async () => {
    plan = await probeSandbox('bwrap', { workRoot: root });
  });

  it('a link and a hard link to a host file, and a link to a host folder: none of their targets changes owner', async () => {
    const v = victim();
    const dir = mkdtempSync(join(root, 'work-'));
    mkdirSync(join(dir, 'pkg'));
    writeFileSync(join(dir, 'pkg', 'mod.py'), 'x = 1\n');
    symlinkSync(v.path, join(dir, 'pkg', 'l1'));
    symlinkSync(join(v.path, '..'), join(dir, 'ldir'));
    linkSync(v.path, join(dir, 'hard'));
    await handWorkdirToSandbox(plan, dir);
    untouched(v);
    const uid = plan.runAs?.uid ?? v.uid;
    expect(statSync(join(dir, 'pkg', 'mod.py')).uid).toBe(uid);
    expect(lstatSync(join(dir, 'pkg', 'l1')).uid).toBe(uid);
  });
});

describe('an extension build copies a committed link as a link and never chowns its target (issue 38, item 3)', () => {
  let plan: SandboxPlan;
  let env: BuiltEnv;
  const signal = new AbortController().signal;
  const project: ProjectInstall = { root: '', importRoots: [''], mode: 'build', distribution: 'pkg', extensions: ['csrc/ext.c'] };
  const spec = projectOnlySpec(project);

  beforeAll(async () => {
    plan = await probeSandbox('bwrap', { workRoot: root });
    const uv = findBinary('uv');
    if (!uv) throw new Error('uv not found: run scripts/ensure-system.sh');
    const built = await new UvEnvBuilder({ cacheRoot: join(root, 'cache'), uv, basePython: '/usr/bin/python3', plan }).build(spec, {
      checkout: null,
      signal,
    });
    if (!built.ok) throw new Error(JSON.stringify(built.failure));
    env = built.env;
  }, 120_000);

  it('pkg/l1 -> a host file, pkg/ldir -> a host folder: the build works, the links stay links, their targets stay the host’s', async () => {
    const v = victim();
    const checkout = writeCExtensionProject(join(root, 'checkout'));
    symlinkSync(v.path, join(checkout, 'pkg', 'l1'));
    symlinkSync(join(v.path, '..'), join(checkout, 'pkg', 'ldir'));
    const r = await buildProjectCheckout({ cacheRoot: join(root, 'cache'), plan }, spec, env, checkout, signal);
    if (!r.ok) throw new Error(JSON.stringify(r.failure));
    expect(readlinkSync(join(r.checkout, 'pkg', 'l1'))).toBe(v.path);
    expect(lstatSync(join(r.checkout, 'pkg', 'ldir')).isSymbolicLink()).toBe(true);
    untouched(v);
  });

  it('a setup.py that plants the build marker as a link to a host file: the host writes its marker, not the file', async () => {
    const v = victim();
    const checkout = writeCExtensionProject(join(root, 'checkout-marker'));
    writeFileSync(join(checkout, 'setup.py'), `${SETUP_PY}\nos.symlink(${JSON.stringify(v.path)}, ".repgen-build.json")\n`);
    const r = await buildProjectCheckout({ cacheRoot: join(root, 'cache'), plan }, spec, env, checkout, signal);
    if (!r.ok) throw new Error(JSON.stringify(r.failure));
    untouched(v);
    expect(lstatSync(join(r.checkout, '.repgen-build.json')).isFile()).toBe(true);
  });
});
