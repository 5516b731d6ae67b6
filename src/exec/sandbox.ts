import { execFile } from 'node:child_process';
import { accessSync, constants, lstatSync, mkdtempSync, readdirSync, readlinkSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { SandboxMode } from './config.js';
import { SandboxUnavailableError } from './errors.js';
import { SAFE_PATH } from './script-env.js';

/** What actually isolates a run. */
export type SandboxKind = 'bwrap' | 'unshare' | 'none';

/** The outcome of probing the host once: which sandbox works, and why the better ones did not. */
export interface SandboxPlan {
  kind: SandboxKind;
  /** Absolute path of bwrap or unshare; '' for none. */
  binary: string;
  /** unshare only: the host refuses plain namespaces to this user, so a user namespace maps it to root. */
  mapRootUser: boolean;
  /** Why `auto` did not get bubblewrap (and unshare); empty when it did. */
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
  let etc: string[] = [];
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
  plan: Pick<SandboxPlan, 'kind' | 'binary' | 'mapRootUser' | 'layout'>;
  network: boolean;
  workdir: string;
  /** Extra read-only binds (virtualenvs, the interpreter's prefix). */
  readOnlyPaths: string[];
  /** The project checkout, bound read-only at `mountPath`. */
  workspace?: { hostPath: string; mountPath: string } | undefined;
  /** The command to run inside. */
  inner: string[];
}

/** The argv that runs `inner` in the sandbox. Pure: the plan carries everything read from the host. */
export function buildSandboxArgv(input: SandboxArgvInput): { file: string; args: string[] } {
  const { plan, network, workdir, inner } = input;
  const [head, ...rest] = inner;
  if (head === undefined) throw new Error('empty command');
  if (plan.kind === 'none') return { file: head, args: rest };
  if (plan.kind === 'unshare') {
    // A pid namespace whose init dies with unshare (--kill-child): killing unshare kills every process the
    // script started, also ones that called setsid() to leave the process group.
    const args = [...(network ? [] : ['--net']), '--pid', '--fork', '--kill-child', '--mount-proc'];
    if (plan.mapRootUser) args.push('--map-root-user');
    return { file: plan.binary, args: [...args, '--', ...inner] };
  }
  const args = [
    '--unshare-pid',
    '--unshare-ipc',
    '--unshare-uts',
    '--unshare-cgroup-try',
    ...(network ? [] : ['--unshare-net']),
    '--die-with-parent',
    '--new-session',
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
  args.push('--proc', '/proc', '--dev', '/dev', '--tmpfs', '/tmp');
  args.push('--ro-bind-try', '/sys/devices/system/cpu', '/sys/devices/system/cpu');
  for (const path of input.readOnlyPaths) args.push('--ro-bind-try', path, path);
  // Not -try: a run promised its workspace must fail to start rather than run without it.
  if (input.workspace) args.push('--ro-bind', input.workspace.hostPath, input.workspace.mountPath);
  // After the /tmp tmpfs: the work dir usually lives under /tmp and must be mounted on top of it.
  args.push('--bind', workdir, workdir, '--chdir', workdir);
  return { file: plan.binary, args: [...args, '--', ...inner] };
}

/** First executable of that name on the safe PATH and the parent's PATH. */
export function findBinary(name: string, hostPath = process.env.PATH ?? ''): string | null {
  const dirs = [...SAFE_PATH.split(':'), ...hostPath.split(':')].filter((d) => d.startsWith('/'));
  for (const dir of new Set(dirs)) {
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return null;
}

interface ProbeOptions {
  workRoot: string;
  /** Probe timeout; a wedged sandbox counts as unavailable. @defaultValue 10000 */
  timeoutMs?: number;
}

const planCache = new Map<string, Promise<SandboxPlan>>();

/**
 * Finds out, once per process and mode, which sandbox works here by running `true` inside it with the network
 * switched off, exactly as a run would. `auto` falls back bwrap → unshare → none and records why; an explicit
 * mode that fails is a SandboxUnavailableError, since silently running unisolated is what must never happen.
 */
export function probeSandbox(mode: SandboxMode, options: ProbeOptions): Promise<SandboxPlan> {
  const key = `${mode}\0${options.workRoot}`;
  let cached = planCache.get(key);
  if (!cached) {
    cached = probeUncached(mode, options);
    planCache.set(key, cached);
    // A failed probe is not cached: the admin may fix the host and retry without restarting the worker.
    cached.catch(() => planCache.delete(key));
  }
  return cached;
}

async function probeUncached(mode: SandboxMode, options: ProbeOptions): Promise<SandboxPlan> {
  const layout = readHostLayout();
  const none: SandboxPlan = { kind: 'none', binary: '', mapRootUser: false, notes: [], layout };
  if (mode === 'none') return none;
  const failures: string[] = [];
  if (mode === 'auto' || mode === 'bwrap') {
    const binary = findBinary('bwrap');
    if (binary) {
      const plan: SandboxPlan = { kind: 'bwrap', binary, mapRootUser: false, notes: [], layout };
      const why = await tryPlan(plan, options);
      if (why === null) return plan;
      failures.push(`bubblewrap failed: ${why}`);
    } else {
      failures.push('bubblewrap (bwrap) not found');
    }
    if (mode === 'bwrap') throw new SandboxUnavailableError(`REPGEN_SANDBOX=bwrap but ${failures.join('; ')}`);
  }
  const binary = findBinary('unshare');
  if (binary) {
    for (const mapRootUser of [false, true]) {
      const plan: SandboxPlan = { kind: 'unshare', binary, mapRootUser, notes: [], layout };
      const why = await tryPlan(plan, options);
      if (why === null) return { ...plan, notes: failures.length ? [`${failures.join('; ')}; using unshare`] : [] };
      failures.push(`unshare${mapRootUser ? ' --map-root-user' : ''} failed: ${why}`);
    }
  } else {
    failures.push('unshare not found');
  }
  if (mode === 'unshare') throw new SandboxUnavailableError(`REPGEN_SANDBOX=unshare but ${failures.join('; ')}`);
  return { ...none, notes: [`no sandbox works on this host (${failures.join('; ')})`] };
}

/** Runs `true` in the sandbox; null when it worked, else the reason. */
function tryPlan(plan: SandboxPlan, options: ProbeOptions): Promise<string | null> {
  const trueBin = findBinary('true') ?? '/bin/true';
  let workdir: string;
  try {
    workdir = mkdtempSync(join(options.workRoot, 'repgen-probe-'));
  } catch (err) {
    return Promise.resolve(`cannot create a work dir under ${options.workRoot}: ${(err as Error).message}`);
  }
  const { file, args } = buildSandboxArgv({ plan, network: false, workdir, readOnlyPaths: [], inner: [trueBin] });
  return new Promise((resolve) => {
    execFile(file, args, { timeout: options.timeoutMs ?? 10_000, env: { PATH: SAFE_PATH } }, (err, _stdout, stderr) => {
      rmSync(workdir, { recursive: true, force: true });
      if (!err) return resolve(null);
      const detail = String(stderr).trim().split('\n')[0] || err.message.split('\n')[0] || 'unknown error';
      resolve(detail);
    });
  });
}
