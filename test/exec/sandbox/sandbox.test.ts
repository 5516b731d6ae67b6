import { rmSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { SandboxUnavailableError } from '../../../src/exec/errors.js';
import { buildSandboxArgv, findBinary, probeSandbox, type SandboxPlan } from '../../../src/exec/sandbox/sandbox.js';
import { makeTempDir } from '../../helpers/temp-dir.js';

const layout = {
  rootLinks: [{ path: '/lib', target: 'usr/lib' }],
  rootDirs: ['/lib64'],
  etcEntries: ['/etc/ld.so.cache', '/etc/alternatives'],
};
const bwrap: SandboxPlan = {
  kind: 'bwrap',
  binary: '/usr/bin/bwrap',
  runAs: { uid: 65534, gid: 65534 },
  seccomp: Buffer.alloc(8),
  cgroups: null,
  setpriv: null,
  notes: [],
  layout,
};
const tmpBytes = 1 << 30;
const inner = ['/usr/bin/python3', 'main.py'];

function pairs(args: string[], flag: string): string[][] {
  const out: string[][] = [];
  args.forEach((a, i) => {
    if (a === flag) out.push(args.slice(i + 1, i + 3));
  });
  return out;
}

describe('buildSandboxArgv', () => {
  it('bwrap: no network, a pid namespace, read-only system dirs, only allowlisted /etc, writable work dir', () => {
    const { file, args } = buildSandboxArgv({
      plan: bwrap,
      network: false,
      workdir: '/tmp/w',
      readOnlyPaths: ['/opt/venv'],
      inner,
      tmpBytes,
    });
    expect(file).toBe('/usr/bin/bwrap');
    for (const flag of [
      '--unshare-user',
      '--disable-userns',
      '--unshare-net',
      '--unshare-pid',
      '--die-with-parent',
      '--new-session',
      '--as-pid-1',
    ]) {
      expect(args).toContain(flag);
    }
    expect(pairs(args, '--uid')).toEqual([['65534', '--gid']]);
    expect(pairs(args, '--cap-drop')[0]?.[0]).toBe('ALL');
    expect(pairs(args, '--seccomp')[0]?.[0]).toBe('4');
    // /proc/sys read-only over the fresh /proc; sized tmpfs for /tmp and /dev/shm; root and /dev read-only at the end.
    expect(pairs(args, '--ro-bind')).toContainEqual(['/proc/sys', '/proc/sys']);
    expect(args.indexOf('/proc/sys')).toBeGreaterThan(args.indexOf('--proc'));
    expect(pairs(args, '--size')).toEqual([
      [String(tmpBytes), '--tmpfs'],
      [String(tmpBytes), '--tmpfs'],
    ]);
    expect(pairs(args, '--tmpfs').map((p) => p[0])).toEqual(['/dev/shm', '/tmp']);
    expect(pairs(args, '--remount-ro').map((p) => p[0])).toEqual(['/dev', '/']);
    expect(args.some((a) => a === '/sys')).toBe(false);
    expect(pairs(args, '--ro-bind')).toContainEqual(['/usr', '/usr']);
    expect(pairs(args, '--ro-bind')).toContainEqual(['/lib64', '/lib64']);
    expect(pairs(args, '--symlink')).toContainEqual(['usr/lib', '/lib']);
    expect(pairs(args, '--ro-bind-try').map((p) => p[0])).toEqual([
      '/etc/ld.so.cache',
      '/etc/alternatives',
      '/proc/sysrq-trigger',
      '/sys/devices/system/cpu',
      '/sys/kernel/mm/transparent_hugepage/enabled',
      '/sys/kernel/mm/transparent_hugepage/hpage_pmd_size',
      '/opt/venv',
    ]);
    expect(args.some((a) => a === '/etc')).toBe(false);
    // The work dir is bound after the /tmp tmpfs, or the tmpfs would hide it.
    expect(args.indexOf('--bind')).toBeGreaterThan(args.indexOf('--tmpfs'));
    expect(pairs(args, '--bind')).toEqual([['/tmp/w', '/tmp/w']]);
    expect(args.slice(-3)).toEqual(['--', ...inner]);
    // Without a seccomp program (an architecture with no table) there is no --seccomp to hang on.
    expect(
      buildSandboxArgv({ plan: { ...bwrap, seccomp: null }, network: false, workdir: '/w', readOnlyPaths: [], inner, tmpBytes }).args,
    ).not.toContain('--seccomp');
  });

  it('bwrap binds the workspace read-only at its mount path, after the /tmp tmpfs', () => {
    const { args } = buildSandboxArgv({
      plan: bwrap,
      network: false,
      workdir: '/tmp/w',
      readOnlyPaths: [],
      inner,
      tmpBytes,
      workspace: { hostPath: '/srv/checkouts/abc', mountPath: '/workspace' },
    });
    expect(pairs(args, '--ro-bind')).toContainEqual(['/srv/checkouts/abc', '/workspace']);
    expect(args.indexOf('/srv/checkouts/abc')).toBeGreaterThan(args.indexOf('--tmpfs'));
    expect(pairs(args, '--bind')).toEqual([['/tmp/w', '/tmp/w']]);
  });

  it('bwrap sets the script env inside (--clearenv, --setenv), so whatever starts bwrap needs PATH only', () => {
    const env = { PATH: '/usr/bin', LD_LIBRARY_PATH: '/w/lib', REPGEN_OUT: '/w/out' };
    const { args } = buildSandboxArgv({ plan: bwrap, network: false, workdir: '/w', readOnlyPaths: [], inner, tmpBytes, env });
    const setenv = args.flatMap((a, i) => (a === '--setenv' ? [[args[i + 1], args[i + 2]]] : []));
    expect(setenv).toEqual(Object.entries(env));
    expect(args.indexOf('--clearenv')).toBeLessThan(args.indexOf('--setenv'));
    expect(args.slice(-3)).toEqual(['--', ...inner]);
    // Without an env (the probe) bwrap still clears what it was started with.
    const probe = buildSandboxArgv({ plan: bwrap, network: false, workdir: '/w', readOnlyPaths: [], inner, tmpBytes }).args;
    expect(probe).toContain('--clearenv');
    expect(probe.filter((a) => a === '--setenv')).toHaveLength(1);
  });

  it('bwrap with network=true keeps the host network and everything else', () => {
    const { args } = buildSandboxArgv({ plan: bwrap, network: true, workdir: '/w', readOnlyPaths: [], inner, tmpBytes });
    expect(args).not.toContain('--unshare-net');
    expect(args).toContain('--unshare-pid');
  });

  it('none: the command itself', () => {
    const none: SandboxPlan = { ...bwrap, kind: 'none', binary: '' };
    expect(buildSandboxArgv({ plan: none, network: false, workdir: '/w', readOnlyPaths: [], inner, tmpBytes })).toEqual({
      file: '/usr/bin/python3',
      args: ['main.py'],
    });
  });
});

describe('probeSandbox on this host', () => {
  it('auto picks bubblewrap, which works here, as an unprivileged host uid when we are root', async () => {
    const plan = await probeSandbox('auto', { workRoot: '/tmp' });
    expect(plan.kind).toBe('bwrap');
    expect(plan.notes).toEqual([]);
    expect(plan.seccomp?.length).toBeGreaterThan(0);
    if (process.geteuid?.() === 0) expect(plan.runAs).toEqual({ uid: 65534, gid: 65534 });
  });

  it('no weaker sandbox in silence: when bubblewrap fails, auto refuses and names REPGEN_SANDBOX=none', async () => {
    // A work root where no work dir can be made makes the probe fail, which is how a broken host looks.
    for (const mode of ['auto', 'bwrap'] as const) {
      const run = probeSandbox(mode, { workRoot: '/proc' });
      await expect(run).rejects.toBeInstanceOf(SandboxUnavailableError);
      await expect(run).rejects.toThrow(
        /^no sandbox: bubblewrap failed: cannot create a work dir.*set REPGEN_SANDBOX=none to run untrusted code without isolation$/,
      );
    }
  });

  it('none is only what the operator chose, and it says what that means', async () => {
    const plan = await probeSandbox('none', { workRoot: '/tmp' });
    expect(plan.kind).toBe('none');
    expect(plan.notes[0]).toMatch(/^no sandbox \(REPGEN_SANDBOX=none\): the script could read and write every file/);
  });

  it('a work root the sandbox uid cannot reach is refused up front with the fix, not a bare Permission denied', async () => {
    const closed = makeTempDir('repgen-closed-');
    try {
      if (process.geteuid?.() !== 0) return;
      const run = probeSandbox('auto', { workRoot: closed });
      await expect(run).rejects.toThrow(
        `the work root ${closed} (REPGEN_WORK_ROOT) is closed to the sandbox's uid: ${closed} is not searchable by uid 65534`,
      );
    } finally {
      rmSync(closed, { recursive: true, force: true });
    }
  });

  it('finds binaries on the safe PATH, not only the parent PATH', () => {
    expect(findBinary('sh', '')).toMatch(/\/sh$/);
    expect(findBinary('definitely-not-a-binary-xyz', '')).toBeNull();
  });
});
