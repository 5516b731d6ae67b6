import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rmdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * A cgroup per run, when this host lends one: a memory limit for the whole process tree that also counts what
 * RLIMIT_DATA does not (MAP_SHARED and memfd memory, pages of the sandbox's tmpfs /tmp and /dev/shm), and a pids
 * limit. Needs root and a writable cgroup hierarchy (v1 memory + pids controllers, or v2 with both enabled for
 * our subtree); without one the run keeps its rlimits and the isolation notes say what is not bounded.
 */
export interface CgroupSupport {
  kind: 'v1' | 'v2';
  /** Folders under which run cgroups are made: one per v1 controller, one for v2. */
  parents: { memory: string; pids: string };
}

export interface RunCgroup {
  /** The cgroup.procs files a process writes its pid into to join (one per hierarchy). */
  procsFiles: string[];
  /** How many processes the kernel's OOM killer killed in this cgroup. */
  oomKills(): Promise<number>;
  /** Removes the cgroup (after every process in it has exited). */
  remove(): Promise<void>;
}

interface MountLine {
  dir: string;
  type: string;
  options: string[];
}

function parseMounts(text: string): MountLine[] {
  return text
    .split('\n')
    .map((l) => l.split(' '))
    .filter((f) => f.length >= 4)
    .map((f) => ({ dir: f[1] ?? '', type: f[2] ?? '', options: (f[3] ?? '').split(',') }));
}

/** `controller → path` of this process, from /proc/self/cgroup (v2's entry is under ''). */
function parseOwnCgroups(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of text.split('\n')) {
    const m = /^\d+:([^:]*):(.*)$/.exec(line);
    if (!m) continue;
    for (const ctrl of (m[1] ?? '').split(',')) out.set(ctrl, m[2] ?? '/');
  }
  return out;
}

async function canMakeChild(parent: string): Promise<boolean> {
  const probe = join(parent, `repgen-probe-${process.pid}-${randomBytes(3).toString('hex')}`);
  try {
    await mkdir(probe);
    await rmdir(probe);
    return true;
  } catch {
    return false;
  }
}

/** Finds a cgroup hierarchy this process may create run cgroups in; the reason when there is none. */
export async function detectCgroups(
  euid: number | undefined = process.geteuid?.(),
): Promise<{ support: CgroupSupport | null; reason: string }> {
  if (euid !== 0) return { support: null, reason: 'not running as root' };
  let mounts: MountLine[];
  let own: Map<string, string>;
  try {
    mounts = parseMounts(await readFile('/proc/self/mounts', 'utf8'));
    own = parseOwnCgroups(await readFile('/proc/self/cgroup', 'utf8'));
  } catch {
    return { support: null, reason: 'cannot read /proc/self/mounts or /proc/self/cgroup' };
  }
  const v1 = (ctrl: string): string | null => {
    const m = mounts.find((x) => x.type === 'cgroup' && x.options.includes(ctrl));
    const path = own.get(ctrl);
    return m && path !== undefined ? join(m.dir, path) : null;
  };
  const memory = v1('memory');
  const pids = v1('pids');
  if (memory && pids) {
    if ((await canMakeChild(memory)) && (await canMakeChild(pids)))
      return { support: { kind: 'v1', parents: { memory, pids } }, reason: '' };
    return { support: null, reason: 'the cgroup v1 memory/pids hierarchies are read-only here' };
  }
  const unified = mounts.find((x) => x.type === 'cgroup2' && x.dir === '/sys/fs/cgroup');
  const path = own.get('');
  if (unified && path !== undefined) {
    const parent = join(unified.dir, path);
    const enabled = await readFile(join(parent, 'cgroup.subtree_control'), 'utf8').catch(() => '');
    const ctrls = enabled.trim().split(/\s+/);
    if (!ctrls.includes('memory') || !ctrls.includes('pids')) {
      return { support: null, reason: `cgroup v2: memory and pids are not enabled for ${parent}'s children` };
    }
    if (await canMakeChild(parent)) return { support: { kind: 'v2', parents: { memory: parent, pids: parent } }, reason: '' };
    return { support: null, reason: 'the cgroup v2 hierarchy is read-only here' };
  }
  return { support: null, reason: 'no cgroup hierarchy with the memory and pids controllers is mounted' };
}

/** Makes the run's cgroup with its limits. Throws when the host refuses (the caller runs without it and says so). */
export async function createRunCgroup(support: CgroupSupport, limits: { memoryBytes: number; pids: number }): Promise<RunCgroup> {
  const name = `repgen-run-${randomBytes(6).toString('hex')}`;
  const made: string[] = [];
  const remove = async (): Promise<void> => {
    for (const dir of made) {
      // The last processes of a killed tree may take a moment to leave.
      for (let i = 0; i < 50; i++) {
        try {
          await rmdir(dir);
          break;
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code === 'ENOENT') break;
          await new Promise((r) => setTimeout(r, 20));
        }
      }
    }
  };
  try {
    if (support.kind === 'v1') {
      const mem = join(support.parents.memory, name);
      const pids = join(support.parents.pids, name);
      await mkdir(mem);
      made.push(mem);
      await mkdir(pids);
      made.push(pids);
      await writeFile(join(mem, 'memory.limit_in_bytes'), String(limits.memoryBytes));
      // Where swap accounting exists, swap counts against the same limit.
      await writeFile(join(mem, 'memory.memsw.limit_in_bytes'), String(limits.memoryBytes)).catch(() => undefined);
      await writeFile(join(pids, 'pids.max'), String(limits.pids));
      return {
        procsFiles: [join(mem, 'cgroup.procs'), join(pids, 'cgroup.procs')],
        oomKills: async () => readCounter(join(mem, 'memory.oom_control'), 'oom_kill'),
        remove,
      };
    }
    const dir = join(support.parents.memory, name);
    await mkdir(dir);
    made.push(dir);
    await writeFile(join(dir, 'memory.max'), String(limits.memoryBytes));
    await writeFile(join(dir, 'memory.swap.max'), '0').catch(() => undefined);
    await writeFile(join(dir, 'pids.max'), String(limits.pids));
    return { procsFiles: [join(dir, 'cgroup.procs')], oomKills: async () => readCounter(join(dir, 'memory.events'), 'oom_kill'), remove };
  } catch (err) {
    await remove();
    throw err;
  }
}

async function readCounter(file: string, key: string): Promise<number> {
  const text = await readFile(file, 'utf8').catch(() => '');
  const m = new RegExp(`^${key} (\\d+)$`, 'm').exec(text);
  return m ? Number(m[1]) : 0;
}

/**
 * The command that joins `procsFiles` and then runs `argv` as `runAs` (joining needs root; the sandbox must not
 * have it). `setpriv` is util-linux's: it drops groups, gid and uid before exec.
 */
export function joinCgroupArgv(
  procsFiles: string[],
  runAs: { uid: number; gid: number } | null,
  setpriv: string,
  argv: string[],
): string[] {
  const n = procsFiles.length;
  const joins = procsFiles.map((_, i) => `echo $$ > "$${i + 1}"`).join(' && ');
  const drop = runAs ? [setpriv, `--reuid=${runAs.uid}`, `--regid=${runAs.gid}`, '--clear-groups', '--'] : [];
  return ['/bin/sh', '-c', `${joins} && shift ${n} && exec "$@"`, 'repgen-cgroup', ...procsFiles, ...drop, ...argv];
}
