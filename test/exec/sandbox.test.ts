import { describe, expect, it } from 'vitest';
import { SandboxUnavailableError } from '../../src/exec/errors.js';
import { buildSandboxArgv, findBinary, probeSandbox, type SandboxPlan } from '../../src/exec/sandbox.js';

const layout = {
  rootLinks: [{ path: '/lib', target: 'usr/lib' }],
  rootDirs: ['/lib64'],
  etcEntries: ['/etc/ld.so.cache', '/etc/alternatives'],
};
const bwrap: SandboxPlan = { kind: 'bwrap', binary: '/usr/bin/bwrap', mapRootUser: false, notes: [], layout };
const unshare: SandboxPlan = { kind: 'unshare', binary: '/usr/bin/unshare', mapRootUser: true, notes: [], layout };
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
    const { file, args } = buildSandboxArgv({ plan: bwrap, network: false, workdir: '/tmp/w', readOnlyPaths: ['/opt/venv'], inner });
    expect(file).toBe('/usr/bin/bwrap');
    for (const flag of ['--unshare-net', '--unshare-pid', '--die-with-parent', '--new-session']) expect(args).toContain(flag);
    expect(pairs(args, '--ro-bind')).toContainEqual(['/usr', '/usr']);
    expect(pairs(args, '--ro-bind')).toContainEqual(['/lib64', '/lib64']);
    expect(pairs(args, '--symlink')).toContainEqual(['usr/lib', '/lib']);
    expect(pairs(args, '--ro-bind-try').map((p) => p[0])).toEqual([
      '/etc/ld.so.cache',
      '/etc/alternatives',
      '/sys/devices/system/cpu',
      '/opt/venv',
    ]);
    expect(args.some((a) => a === '/etc')).toBe(false);
    // The work dir is bound after the /tmp tmpfs, or the tmpfs would hide it.
    expect(args.indexOf('--bind')).toBeGreaterThan(args.indexOf('--tmpfs'));
    expect(pairs(args, '--bind')).toEqual([['/tmp/w', '/tmp/w']]);
    expect(args.slice(-3)).toEqual(['--', ...inner]);
  });

  it('bwrap binds the workspace read-only at its mount path, after the /tmp tmpfs', () => {
    const { args } = buildSandboxArgv({
      plan: bwrap,
      network: false,
      workdir: '/tmp/w',
      readOnlyPaths: [],
      inner,
      workspace: { hostPath: '/srv/checkouts/abc', mountPath: '/workspace' },
    });
    expect(pairs(args, '--ro-bind')).toContainEqual(['/srv/checkouts/abc', '/workspace']);
    expect(args.indexOf('/srv/checkouts/abc')).toBeGreaterThan(args.indexOf('--tmpfs'));
    expect(pairs(args, '--bind')).toEqual([['/tmp/w', '/tmp/w']]);
  });

  it('bwrap with network=true keeps the host network and everything else', () => {
    const { args } = buildSandboxArgv({ plan: bwrap, network: true, workdir: '/w', readOnlyPaths: [], inner });
    expect(args).not.toContain('--unshare-net');
    expect(args).toContain('--unshare-pid');
  });

  it('unshare: a net and pid namespace whose init dies with unshare', () => {
    expect(buildSandboxArgv({ plan: unshare, network: false, workdir: '/w', readOnlyPaths: [], inner })).toEqual({
      file: '/usr/bin/unshare',
      args: ['--net', '--pid', '--fork', '--kill-child', '--mount-proc', '--map-root-user', '--', ...inner],
    });
    expect(buildSandboxArgv({ plan: unshare, network: true, workdir: '/w', readOnlyPaths: [], inner }).args).not.toContain('--net');
  });

  it('none: the command itself', () => {
    const none: SandboxPlan = { ...bwrap, kind: 'none', binary: '' };
    expect(buildSandboxArgv({ plan: none, network: false, workdir: '/w', readOnlyPaths: [], inner })).toEqual({
      file: '/usr/bin/python3',
      args: ['main.py'],
    });
  });
});

describe('probeSandbox on this host', () => {
  it('auto picks bubblewrap, which works here', async () => {
    const plan = await probeSandbox('auto', { workRoot: '/tmp' });
    expect(plan.kind).toBe('bwrap');
    expect(plan.notes).toEqual([]);
  });

  it('an explicit mode that cannot work is a SandboxUnavailableError, never a silent fallback', async () => {
    // A work root that cannot be created makes every probe fail, which is how a broken host looks.
    const run = probeSandbox('bwrap', { workRoot: '/proc/no-such-dir' });
    await expect(run).rejects.toBeInstanceOf(SandboxUnavailableError);
    await expect(run).rejects.toThrow(/REPGEN_SANDBOX=bwrap but bubblewrap failed: cannot create a work dir/);
  });

  it('auto on a host where nothing works falls back to none and says why', async () => {
    const plan = await probeSandbox('auto', { workRoot: '/proc/no-such-dir' });
    expect(plan.kind).toBe('none');
    expect(plan.notes[0]).toMatch(/^no sandbox works on this host \(bubblewrap failed: .*unshare failed/);
  });

  it('finds binaries on the safe PATH, not only the parent PATH', () => {
    expect(findBinary('sh', '')).toMatch(/\/sh$/);
    expect(findBinary('definitely-not-a-binary-xyz', '')).toBeNull();
  });
});
