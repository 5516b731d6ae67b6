import { spawn, type ChildProcess, type SpawnOptions, type StdioOptions } from 'node:child_process';
import { lstatSync, mkdtempSync, readdirSync, readlinkSync, rmSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Writable } from 'node:stream';
import { chownTree, holdDir, type HeldDir } from '../../host/untrusted-tree.js';
import type { SandboxMode } from '../config.js';
import { SandboxUnavailableError } from '../errors.js';
import { SAFE_PATH } from './script-env.js';
import { createRunCgroup, detectCgroups, joinCgroupArgv, type CgroupSupport, type RunCgroup } from './cgroup.js';
import { buildSeccompFilter, hostSeccompArch } from './seccomp.js';
import { findBinary } from './find-binary.js';

export { findBinary } from './find-binary.js';

/** What actually isolates a run. */
export type SandboxKind = 'bwrap' | 'none';

/** The uid and gid the script has inside the sandbox: `nobody`, which /etc/passwd names (getpass, torch caches). */
export const SANDBOX_INNER_ID = 65534;

/** The outcome of probing the host once: which sandbox works, and what it could not enforce. */
export interface SandboxPlan {
  kind: SandboxKind;
  /** Absolute path of bwrap; '' for none. */
  binary: string;
  /**
   * Host uid/gid bubblewrap runs as. Set when this process is root: a user namespace created by root maps the
   * script to host uid 0, which the kernel still trusts for /proc/sys, RLIMIT_NPROC and root-owned files.
   */
  runAs: { uid: number; gid: number } | null;
  /** The seccomp program (`bwrap --seccomp`); null where the architecture has no syscall table (notes say so). */
  seccomp: Buffer | null;
  /** Where run cgroups go (memory and pids of the whole tree); null where none can be had (notes say so). */
  cgroups: CgroupSupport | null;
  /** util-linux setpriv, which drops to `runAs` after the cgroup is joined as root. */
  setpriv: string | null;
  /** What this plan could not enforce, said in every result's isolation notes. */
  notes: string[];
  /** How the host's root is laid out, so the bwrap sandbox can mirror it read-only. */
  layout: HostLayout;
}

export interface HostLayout {
  /** Top-level entries like /lib that are symlinks on merged-/usr systems (path → target). */
  rootLinks: Array<{ path: string; target: string }>;
  /** Top-level library/binary folders that are real directories. */
  rootDirs: string[];
  /** Entries of /etc the sandbox gets (see ETC_ALLOWLIST), the ones present on this host. */
  etcEntries: string[];
}

const ROOT_ENTRIES = ['/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32'];

/**
 * Only these parts of /etc are visible: what the dynamic loader, Python, BLAS (Debian's alternatives), SSL, name
 * resolution and matplotlib read. The rest of /etc (shadow, host keys, service configs) stays out of reach.
 */
const ETC_ALLOWLIST = [
  'ld.so.cache',
  'ld.so.conf',
  'ld.so.conf.d',
  'alternatives',
  'localtime',
  'timezone',
  'nsswitch.conf',
  'passwd',
  'group',
  'hosts',
  'host.conf',
  'resolv.conf',
  'gai.conf',
  'ssl',
  'ca-certificates',
  'ca-certificates.conf',
  'mime.types',
  'matplotlibrc',
  'fonts',
  'os-release',
];

/** Reads the host's root layout (top-level links, /etc entries) that the bwrap argv mirrors. */
export function readHostLayout(): HostLayout {
  const rootLinks: HostLayout['rootLinks'] = [];
  const rootDirs: string[] = [];
  for (const path of ROOT_ENTRIES) {
    try {
      const st = lstatSync(path);
      if (st.isSymbolicLink()) rootLinks.push({ path, target: readlinkSync(path) });
      else if (st.isDirectory()) rootDirs.push(path);
    } catch {
      // absent on this host: nothing to mirror
    }
  }
  let etc: string[];
  try {
    etc = readdirSync('/etc');
  } catch {
    etc = [];
  }
  const wanted = new Set(ETC_ALLOWLIST);
  // python3.X folders hold sitecustomize and Debian's distutils config.
  const etcEntries = etc.filter((name) => wanted.has(name) || /^python3(\.\d+)?$/.test(name)).map((name) => `/etc/${name}`);
  return { rootLinks, rootDirs, etcEntries };
}

export interface SandboxArgvInput {
  plan: Pick<SandboxPlan, 'kind' | 'binary' | 'layout' | 'seccomp'>;
  network: boolean;
  workdir: string;
  /** Extra read-only binds (virtualenvs, the interpreter's prefix). */
  readOnlyPaths: string[];
  /** The project checkout, bound read-only at `mountPath`. */
  workspace?: { hostPath: string; mountPath: string } | undefined;
  /** Size of the private /tmp and /dev/shm tmpfs, each. */
  tmpBytes: number;
  /** The fd bwrap reads the seccomp program from (see SECCOMP_FD). */
  seccompFd?: number;
  /** The command to run inside; it becomes the namespace's pid 1 (the launcher reaps what the script orphans). */
  inner: string[];
  /**
   * The script's environment, set by bwrap inside (--clearenv, --setenv) so the processes outside — the root shell
   * joining the cgroup, setpriv, bwrap — run with PATH only: a request's LD_PRELOAD or LD_LIBRARY_PATH must not load
   * into them, and nothing of RepGen's own environment sits in any process of the run.
   */
  env?: Record<string, string>;
}

/** The whole environment of the processes outside the sandbox (OUTER_ENV) and what bwrap sets inside. */
export const OUTER_ENV: Readonly<Record<string, string>> = Object.freeze({ PATH: SAFE_PATH });

/** The fd a spawned bwrap reads its seccomp program from: the one after the launcher's report channel (fd 3). */
export const SECCOMP_FD = 4;

/** The transparent huge page mode and size, read-only: all of /sys/kernel a run sees. */
export const THP_FILES: readonly string[] = [
  '/sys/kernel/mm/transparent_hugepage/enabled',
  '/sys/kernel/mm/transparent_hugepage/hpage_pmd_size',
];

/**
 * The argv that runs `inner` in the sandbox. Pure: the plan carries everything read from the host.
 *
 * bwrap: an unprivileged uid in fresh user, pid, net, ipc, uts and cgroup namespaces, no capabilities, no further
 * user namespaces, no_new_privs, the seccomp filter; read-only system dirs and /etc allowlist, a read-only root,
 * /proc with /proc/sys read-only, no /sys but the CPU topology and the huge page mode, sized tmpfs /tmp and /dev/shm,
 * the work dir the only host folder it can write.
 */
export function buildSandboxArgv(input: SandboxArgvInput): { file: string; args: string[] } {
  const { plan, network, workdir, inner } = input;
  const [head, ...rest] = inner;
  if (head === undefined) throw new Error('empty command');
  if (plan.kind === 'none') return { file: head, args: rest };
  const id = String(SANDBOX_INNER_ID);
  const size = String(input.tmpBytes);
  const args = [
    '--unshare-user',
    '--uid',
    id,
    '--gid',
    id,
    '--disable-userns',
    '--unshare-pid',
    '--unshare-ipc',
    '--unshare-uts',
    '--unshare-cgroup-try',
    ...(network ? [] : ['--unshare-net']),
    '--die-with-parent',
    '--new-session',
    '--as-pid-1',
    '--cap-drop',
    'ALL',
    '--hostname',
    'repgen',
    '--ro-bind',
    '/usr',
    '/usr',
  ];
  for (const { path, target } of plan.layout.rootLinks) args.push('--symlink', target, path);
  for (const dir of plan.layout.rootDirs) args.push('--ro-bind', dir, dir);
  for (const entry of plan.layout.etcEntries) args.push('--ro-bind-try', entry, entry);
  // bwrap covers /proc/sys only when access(W_OK) on the folder succeeds, which it never does: cover it here.
  args.push('--proc', '/proc', '--ro-bind', '/proc/sys', '/proc/sys', '--ro-bind-try', '/proc/sysrq-trigger', '/proc/sysrq-trigger');
  args.push('--dev', '/dev', '--size', size, '--tmpfs', '/dev/shm', '--size', size, '--tmpfs', '/tmp');
  args.push('--ro-bind-try', '/sys/devices/system/cpu', '/sys/devices/system/cpu');
  // glibc reads these two when a run asks malloc for huge pages (GLIBC_TUNABLES, script-env.ts); with neither it never asks.
  for (const f of THP_FILES) args.push('--ro-bind-try', f, f);
  for (const path of input.readOnlyPaths) args.push('--ro-bind-try', path, path);
  // Not -try: a run promised its workspace must fail to start rather than run without it.
  if (input.workspace) args.push('--ro-bind', input.workspace.hostPath, input.workspace.mountPath);
  // After the /tmp tmpfs: the work dir usually lives under /tmp and must be mounted on top of it.
  args.push('--bind', workdir, workdir, '--chdir', workdir);
  // Last: the root and /dev are tmpfs the script's own uid owns; read-only, they cannot hold unbounded files.
  args.push('--remount-ro', '/dev', '--remount-ro', '/');
  if (plan.seccomp) args.push('--seccomp', String(input.seccompFd ?? SECCOMP_FD));
  args.push('--clearenv');
  for (const [name, value] of Object.entries(input.env ?? OUTER_ENV)) args.push('--setenv', name, value);
  return { file: plan.binary, args: [...args, '--', ...inner] };
}

interface ProbeOptions {
  workRoot: string;
  /** Host uid/gid bwrap runs as when this process is root. @defaultValue 65534 */
  sandboxUid?: number;
  /** Probe timeout; a wedged sandbox counts as unavailable. @defaultValue 10000 */
  timeoutMs?: number;
}

const planCache = new Map<string, Promise<SandboxPlan>>();

/**
 * Finds out, once per process and mode, whether the sandbox works here by running `true` inside it exactly as a
 * run would (same uid, namespaces, mounts, seccomp). A sandbox that cannot isolate the filesystem and the
 * network is never used instead: without bubblewrap, untrusted code runs only when the operator chose
 * REPGEN_SANDBOX=none, and every result says so.
 */
export function probeSandbox(mode: SandboxMode, options: ProbeOptions): Promise<SandboxPlan> {
  const key = `${mode}\0${options.workRoot}\0${options.sandboxUid ?? ''}`;
  let cached = planCache.get(key);
  if (!cached) {
    cached = probeUncached(mode, options);
    planCache.set(key, cached);
    // A failed probe is not cached: the admin may fix the host and retry without restarting the worker.
    cached.catch(() => planCache.delete(key));
  }
  return cached;
}

/** Host uid/gid for bwrap: this process's own unless it is root. */
export function sandboxRunAs(sandboxUid: number, euid: number | undefined = process.geteuid?.()): SandboxPlan['runAs'] {
  return euid === 0 ? { uid: sandboxUid, gid: sandboxUid } : null;
}

/**
 * Why `uid` cannot reach `path` (every folder on the way searchable, the last one also readable when `read`), or
 * null when it can. Root needs no check; bwrap as another uid would fail later with a bare "Permission denied".
 */
export async function unreachableBy(path: string, ids: { uid: number; gid: number } | null, read = false): Promise<string | null> {
  if (!ids) return null;
  const parts = path.split('/').filter((p) => p);
  for (let i = 0; i <= parts.length; i++) {
    const dir = `/${parts.slice(0, i).join('/')}`;
    const st = await stat(dir).catch(() => null);
    if (!st) return `${dir} does not exist`;
    const bits = st.uid === ids.uid ? 6 : st.gid === ids.gid ? 3 : 0;
    const mode = (st.mode >> bits) & 0o7;
    const need = i === parts.length && read ? 0o5 : 0o1;
    if (st.isDirectory() && (mode & need) !== need) return `${dir} is not ${need === 0o5 ? 'readable' : 'searchable'} by uid ${ids.uid}`;
  }
  return null;
}

async function probeUncached(mode: SandboxMode, options: ProbeOptions): Promise<SandboxPlan> {
  const layout = readHostLayout();
  if (mode === 'none') {
    return {
      kind: 'none',
      binary: '',
      runAs: null,
      seccomp: null,
      cgroups: null,
      setpriv: null,
      layout,
      notes: ['no sandbox (REPGEN_SANDBOX=none): the script could read and write every file this process can, and use its network'],
    };
  }
  const binary = findBinary('bwrap');
  const hint = 'install bubblewrap, or set REPGEN_SANDBOX=none to run untrusted code without isolation';
  if (!binary) throw new SandboxUnavailableError(`no sandbox: bubblewrap (bwrap) not found; ${hint}`);
  const arch = hostSeccompArch();
  const notes = arch ? [] : [`no seccomp filter: no syscall table for ${process.arch}`];
  const found = await detectCgroups();
  const setpriv = findBinary('setpriv');
  const plan: SandboxPlan = {
    kind: 'bwrap',
    binary,
    runAs: sandboxRunAs(options.sandboxUid ?? SANDBOX_INNER_ID),
    seccomp: arch ? buildSeccompFilter(arch) : null,
    cgroups: found.support && setpriv ? found.support : null,
    setpriv,
    notes,
    layout,
  };
  const blocked = await unreachableBy(options.workRoot, plan.runAs);
  if (blocked) {
    throw new SandboxUnavailableError(
      `the work root ${options.workRoot} (REPGEN_WORK_ROOT) is closed to the sandbox's uid: ${blocked}; ` +
        `make it searchable (chmod o+x) or set REPGEN_SANDBOX_UID`,
    );
  }
  if (plan.cgroups && (await tryPlan(plan, options)) !== null) plan.cgroups = null;
  if (!plan.cgroups) {
    const reason = found.support ? 'setpriv (util-linux) not found' : found.reason;
    notes.push(`no cgroup (${reason}): memory is limited per process (RLIMIT_DATA), shared memory is not counted`);
  }
  const why = await tryPlan(plan, options);
  if (why !== null) throw new SandboxUnavailableError(`no sandbox: bubblewrap failed: ${why}; ${hint}`);
  return plan;
}

/**
 * What to spawn for a sandbox argv, and how: with a run cgroup, a root shell joins it and setpriv drops to the
 * sandbox uid; without, spawn() drops the uid itself. Call writeSeccomp() on the child right after spawning.
 */
export function sandboxSpawn(
  plan: SandboxPlan,
  cmd: { file: string; args: string[] },
  cgroup: RunCgroup | null,
  base: SpawnOptions,
  stdin: 'pipe' | 'ignore' = 'ignore',
): { file: string; args: string[]; options: SpawnOptions } {
  const stdio: StdioOptions = [stdin, 'pipe', 'pipe', 'pipe', plan.seccomp ? 'pipe' : 'ignore'];
  if (cgroup && plan.setpriv) {
    const [file, ...args] = joinCgroupArgv(cgroup.procsFiles, plan.runAs, plan.setpriv, [cmd.file, ...cmd.args]);
    return { file: file as string, args, options: { ...base, stdio } };
  }
  return { ...cmd, options: { ...base, stdio, ...(plan.runAs ? { uid: plan.runAs.uid, gid: plan.runAs.gid } : {}) } };
}

/** Hands bwrap its seccomp program on fd 4 (it reads to EOF before it starts the command). */
export function writeSeccomp(plan: SandboxPlan, child: ChildProcess): void {
  const pipe = child.stdio[SECCOMP_FD] as Writable | null | undefined;
  if (!pipe) return;
  pipe.on('error', () => undefined);
  pipe.end(plan.seccomp);
}

/**
 * Makes a work dir usable by the sandbox's host uid (only it and this process can enter it). Nothing is chowned
 * through a link, nor a link entered (untrusted-tree.ts): a build copy of a checkout may hold a committed one.
 */
export async function handWorkdirToSandbox(plan: SandboxPlan, dir: string | HeldDir): Promise<void> {
  if (!plan.runAs) return;
  const held = typeof dir === 'string' ? await holdDir(dir) : dir;
  try {
    await chownTree(held, plan.runAs.uid, plan.runAs.gid);
  } finally {
    if (typeof dir === 'string') await held.close();
  }
}

/** Runs `true` in the sandbox; null when it worked, else the reason. */
async function tryPlan(plan: SandboxPlan, options: ProbeOptions): Promise<string | null> {
  const trueBin = findBinary('true') ?? '/bin/true';
  let workdir = '';
  try {
    workdir = mkdtempSync(join(options.workRoot, 'repgen-probe-'));
    await handWorkdirToSandbox(plan, workdir);
  } catch (err) {
    if (workdir) rmSync(workdir, { recursive: true, force: true });
    return `cannot create a work dir under ${options.workRoot}: ${(err as Error).message}`;
  }
  const cmd = buildSandboxArgv({ plan, network: false, workdir, readOnlyPaths: [], tmpBytes: 1 << 20, inner: [trueBin] });
  let cgroup: RunCgroup | null = null;
  if (plan.cgroups) {
    try {
      cgroup = await createRunCgroup(plan.cgroups, { memoryBytes: 256 << 20, pids: 64 });
    } catch (err) {
      rmSync(workdir, { recursive: true, force: true });
      return `cannot create a cgroup: ${(err as Error).message}`;
    }
  }
  const { file, args, options: spawnOptions } = sandboxSpawn(plan, cmd, cgroup, { cwd: workdir, env: { ...OUTER_ENV } });
  return new Promise((resolve) => {
    let stderr = '';
    let done = false;
    const finish = (why: string | null): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      rmSync(workdir, { recursive: true, force: true });
      void (cgroup?.remove() ?? Promise.resolve()).then(() => resolve(why));
    };
    const child = spawn(file, args, spawnOptions);
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      finish('timed out');
    }, options.timeoutMs ?? 10_000);
    writeSeccomp(plan, child);
    child.stderr?.on('data', (c: Buffer) => {
      if (stderr.length < 4096) stderr += c.toString('utf8');
    });
    child.on('error', (err) => finish(err.message));
    child.on('close', (code, sig) => {
      if (code === 0) return finish(null);
      finish(stderr.trim().split('\n')[0] || `exit ${code ?? sig ?? 'unknown'}`);
    });
  });
}
