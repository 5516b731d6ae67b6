import { randomUUID } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalExecutor } from '../../../src/exec/local/executor.js';
import { WARM_NOTE } from '../../../src/exec/warm/pool.js';
import { detectCgroups } from '../../../src/exec/sandbox/cgroup.js';
import { findBinary } from '../../../src/exec/sandbox/sandbox.js';
import { hostSeccompArch, SYSCALL_NUMBERS } from '../../../src/exec/sandbox/seccomp.js';
import type { RunRequestInput, RunResult, ScriptExecutor } from '../../../src/exec/types.js';
import { killAllWith, livePidsWith } from '../proc-helpers.js';
import { waitFor } from '../../helpers/poll.js';
import { makeTempDir } from '../../helpers/temp-dir.js';

export type EscapePath = 'native' | 'python' | 'warm';

/** The highest count a probe printed as `<word> <n>` lines before it was stopped (0 when it printed none). */
function lastCount(stdout: string, word: string): number {
  const counts = stdout
    .split('\n')
    .filter((l) => l.startsWith(`${word} `))
    .map((l) => Number(l.split(' ')[1]));
  return Math.max(0, ...counts);
}

/**
 * Defines the escape suite for one way of starting a run: the C launcher, the Python one (used where no C compiler
 * is) and the warm pool's fork. One file per way (escape.<way>.test.ts), so the three run side by side; every piece
 * of state (the host folder, its secrets, the canaries) belongs to one call, never to this module, which test files
 * may share.
 */
export function defineEscapeSuite(which: EscapePath): void {
  /**
   * The escape suite (issue 12): hostile scripts, one case each, run in the sandbox CI has (bubblewrap on a root
   * host). Every case asserts its own finding and then that nothing left the box: no secret of the parent in what
   * came back, no host file read or written, no process left behind. Probes open kernel settings for writing and
   * close them again: nothing here ever writes one.
   */

  const SECRET_ENV = { GITHUB_TOKEN: 'ghp_escapeSuiteSecret0123456789', ANTHROPIC_API_KEY: 'sk-ant-escape-suite-secret' };
  const HOST_SECRET = `host-secret-${randomUUID()}`;
  const arch = hostSeccompArch() ?? 'x86_64';
  const NR = { ...SYSCALL_NUMBERS[arch], pidfd_open: 434 };

  const root = makeTempDir('repgen-escape-');
  chmodSync(root, 0o755);
  const workRoot = join(root, 'runs');
  mkdirSync(workRoot, { mode: 0o755 });
  const hostSecretFile = join(root, 'host-secret.txt');
  writeFileSync(hostSecretFile, HOST_SECRET, { mode: 0o644 });
  const checkout = join(root, 'checkout');
  mkdirSync(join(checkout, 'pkg'), { recursive: true, mode: 0o755 });
  writeFileSync(join(checkout, 'pkg', '__init__.py'), 'VALUE = 1\n');

  const PRELUDE = `
import ctypes, errno, json, os, signal, sys, time
libc = ctypes.CDLL(None, use_errno=True)
NR = json.loads(${JSON.stringify(JSON.stringify(NR))})
def sc(name, *args):
    ctypes.set_errno(0)
    conv = [ctypes.c_long(a) if isinstance(a, int) else a for a in args]
    r = libc.syscall(ctypes.c_long(NR[name]), *conv)
    return r, ctypes.get_errno()
def report(**kw):
    print("REPORT " + json.dumps(kw), flush=True)
def writable(path):
    try:
        fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
    except OSError as e:
        return False
    os.close(fd)
    return True
`;

  interface Hostile {
    /** What came back from the REPORT line. */
    found: Record<string, unknown>;
    r: RunResult;
  }

  const path: EscapePath = which;

  function executorWith(extra: Parameters<typeof createLocalExecutor>[0] = {}): ScriptExecutor {
    const how =
      path === 'warm' ? { launcher: 'native' as const, warmPool: 'always' as const } : { launcher: path, warmPool: 'off' as const };
    return createLocalExecutor({ workRoot, ...how, ...extra }, { hostEnv: { ...process.env, ...SECRET_ENV } });
  }

  /** Runs a hostile script, then checks that nothing left the box. */
  async function hostile(body: string, extra: Partial<RunRequestInput> = {}, ex: ScriptExecutor = executorWith()): Promise<Hostile> {
    const marker = `repgen-escape-${randomUUID()}`;
    const canary = join(root, `canary-${randomUUID()}`);
    const before = readdirSync(root).sort();
    try {
      const r = await ex.run({
        files: [{ path: 'hostile.py', content: `${PRELUDE}\n${body}\n` }],
        entry: 'hostile.py',
        args: [marker, canary, hostSecretFile],
        envAllowlist: ['GITHUB_TOKEN', 'ANTHROPIC_API_KEY'],
        limits: { timeoutMs: 60_000, ...(extra.limits ?? {}) },
        ...extra,
      });
      // No secret of the parent, no host file's content in anything that came back.
      const everything = JSON.stringify(r);
      for (const secret of [...Object.values(SECRET_ENV), HOST_SECRET]) expect(everything).not.toContain(secret);
      // No host file written: the canary the script was told to create does not exist, nothing new in the folder.
      expect(existsSync(canary)).toBe(false);
      expect(readdirSync(root).sort()).toEqual(before);
      // No process left: everything the script started (its argv carries the marker) is gone.
      await waitFor(() => livePidsWith(marker).length === 0, { what: 'no process left with the marker' });
      // The warm path's runs are forked from its server, not started cold behind its back.
      if (path === 'warm') expect(r.notes ?? [], JSON.stringify(r.notes)).toContain(WARM_NOTE);
      const line = r.stdout.split('\n').find((l) => l.startsWith('REPORT '));
      const found = line ? (JSON.parse(line.slice('REPORT '.length)) as Record<string, unknown>) : {};
      return { found, r };
    } finally {
      killAllWith(marker);
    }
  }

  /** The note every result carries when its run had no cgroup (src/exec/sandbox/sandbox.ts). */
  const NO_CGROUP_NOTE = /^no cgroup \(.*\): memory is limited per process \(RLIMIT_DATA\), shared memory is not counted$/;

  /**
   * Shared memory (MAP_SHARED, memfd) is bounded by the run's cgroup only. Where RepGen gets none (not root, or no
   * writable hierarchy), docs/sandbox.md promises no bound on it, but a note in every result that says so and a
   * per-process RLIMIT_DATA: the note is on the run, and a private allocation stops at the limit within 10 %.
   */
  async function expectNoCgroupSaid(r: RunResult, limitMb: number): Promise<void> {
    expect(
      r.isolation.notes.filter((n) => NO_CGROUP_NOTE.test(n)),
      JSON.stringify(r.isolation.notes),
    ).toHaveLength(1);
    const { found, r: priv } = await hostile(
      `
chunks = []
try:
    for i in range(100):
        chunks.append(bytearray(16 << 20))
        print("allocated", (i + 1) * 16, flush=True)
except MemoryError:
    report(err="MemoryError")
else:
    report(err=None)`,
      { limits: { memoryMb: limitMb } },
    );
    expect(found.err).toBe('MemoryError');
    expect(lastCount(priv.stdout, 'allocated')).toBeLessThanOrEqual(limitMb * 1.1);
  }

  describe(`escape suite (${which}): hostile scripts stay in the box`, () => {
    let server: Server;
    let port = 0;
    /** Whether this host gives runs a cgroup (RepGen as root, a writable hierarchy, setpriv), as the sandbox decides. */
    let cgroup = false;
    beforeAll(async () => {
      cgroup = (await detectCgroups()).support !== null && findBinary('setpriv') !== null;
    });
    afterAll(() => rmSync(root, { recursive: true, force: true }));
    beforeAll(async () => {
      // A service on the host's loopback, which an isolated script must not reach.
      server = createServer((s) => s.end('host-service\n'));
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      port = (server.address() as { port: number }).port;
    });
    afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

    it('1. no kernel setting under /proc/sys can be opened for writing (core_pattern included)', async () => {
      const { found } = await hostile(`
n, w = 0, []
for d, _, files in os.walk("/proc/sys"):
    for f in files:
        n += 1
        if writable(os.path.join(d, f)):
            w.append(os.path.join(d, f))
report(checked=n, writable=w[:20], core=writable("/proc/sys/kernel/core_pattern"))`);
      expect(found.checked).toBeGreaterThan(100);
      expect(found.writable).toEqual([]);
      expect(found.core).toBe(false);
    });

    it('2. /proc/sysrq-trigger, /sys and the other /proc control files cannot be opened for writing', async () => {
      const { found } = await hostile(`
sysfiles = []
for d, _, files in os.walk("/sys"):
    for f in files:
        if writable(os.path.join(d, f)):
            sysfiles.append(os.path.join(d, f))
sysseen = sorted(os.path.join(d, f) for d, _, files in os.walk("/sys/kernel") for f in files)
report(sysrq=writable("/proc/sysrq-trigger"), sys=sorted(os.listdir("/sys")), syskernel=sysseen, syswritable=sysfiles[:10],
       others=[p for p in ["/proc/kcore", "/proc/kmsg", "/proc/irq/default_smp_affinity", "/proc/bus", "/proc/1/oom_score_adj"] if writable(p)])`);
      // Of /sys/kernel, only the huge page mode (glibc reads it when asked for huge pages), read-only.
      const thp = ['/sys/kernel/mm/transparent_hugepage/enabled', '/sys/kernel/mm/transparent_hugepage/hpage_pmd_size'];
      expect(found).toEqual({
        sysrq: false,
        sys: thp.some((f) => existsSync(f)) ? ['devices', 'kernel'] : ['devices'],
        syskernel: thp.filter((f) => existsSync(f)),
        syswritable: [],
        others: [],
      });
    });

    it('3. runs as an unprivileged uid with no capabilities, no_new_privs and seccomp; cannot become root', async () => {
      const { found } = await hostile(`
st = dict(l.split(":\\t", 1) for l in open("/proc/self/status").read().splitlines() if ":\\t" in l)
try:
    os.setuid(0); root = True
except OSError:
    root = False
report(uid=os.getuid(), euid=os.geteuid(), gid=os.getgid(), groups=os.getgroups(), caps=[st[k].strip() for k in ["CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"]],
       nnp=st["NoNewPrivs"].strip(), seccomp=st["Seccomp"].strip(), root=root, hostuid=open("/proc/self/uid_map").read().split())`);
      expect(found.uid).toBe(65534);
      expect(found.euid).toBe(65534);
      expect(found.gid).toBe(65534);
      expect(found.caps).toEqual(Array(5).fill('0000000000000000'));
      expect(found.nnp).toBe('1');
      expect(found.seccomp).toBe('2');
      expect(found.root).toBe(false);
    });

    it('4. setuid-root binaries give nothing (no_new_privs): mount and su fail', async () => {
      const { found } = await hostile(`
import subprocess
res = {}
for name, argv in [("mount", ["mount", "-t", "tmpfs", "none", "/tmp"]), ("su", ["su", "-c", "id"]), ("unshare", ["unshare", "-U", "-r", "id"])]:
    try:
        p = subprocess.run(argv, capture_output=True, timeout=10, stdin=subprocess.DEVNULL)
        res[name] = p.returncode
    except FileNotFoundError:
        res[name] = "absent"
report(**res)`);
      for (const v of Object.values(found)) expect(v === 'absent' || (typeof v === 'number' && v !== 0)).toBe(true);
    });

    it('5. no new user namespace: unshare, clone with CLONE_NEWUSER and clone3 are refused', async () => {
      const { found } = await hostile(`
CLONE_NEWUSER, CLONE_NEWNS, CLONE_NEWNET = 0x10000000, 0x00020000, 0x40000000
r1 = sc("unshare", CLONE_NEWUSER)
r2 = sc("unshare", CLONE_NEWNS)
r3 = sc("clone", CLONE_NEWUSER | signal.SIGCHLD, 0, 0, 0, 0)
if r3[0] == 0:
    os._exit(0)
r4 = sc("clone3", None, 0)
r5 = sc("setns", 0, 0)
report(unshare_user=r1, unshare_mnt=r2, clone_user=r3, clone3=r4, setns=r5)`);
      expect(found.unshare_user).toEqual([-1, 1]);
      expect(found.unshare_mnt).toEqual([-1, 1]);
      expect(found.clone_user).toEqual([-1, 1]);
      expect(found.clone3).toEqual([-1, 38]);
      expect(found.setns).toEqual([-1, 1]);
    });

    it('6. no mounts: mount, umount2 and the new mount API are refused', async () => {
      const { found } = await hostile(`
r1 = sc("mount", b"none", b"/tmp", b"tmpfs", 0, None)
r2 = sc("umount2", b"/proc", 2)
r3 = sc("fsopen", b"tmpfs", 0)
r4 = sc("open_tree", -100, b"/", 1)
report(mount=r1, umount=r2, fsopen=r3, open_tree=r4)`);
      expect(found).toEqual({ mount: [-1, 1], umount: [-1, 1], fsopen: [-1, 1], open_tree: [-1, 1] });
    });

    it("7. the launcher's result channel is out of reach: no fd 3, no pidfd_getfd, no /proc/1/fd; a crash is reported as the crash", async () => {
      const { found, r } = await hostile(`
fds = sorted(int(x) for x in os.listdir("/proc/self/fd"))
try:
    os.write(3, b'{"exitCode": 0, "signal": null, "cpuMs": 1, "maxRssKb": 1}\\n'); fd3 = "written"
except OSError as e:
    fd3 = e.errno
pidfd, _ = sc("pidfd_open", 1, 0)
got = sc("pidfd_getfd", pidfd, 3, 0) if pidfd >= 0 else "no pidfd"
try:
    os.listdir("/proc/1/fd"); listed = True
except OSError:
    listed = False
try:
    os.open("/proc/1/fd/3", os.O_WRONLY); opened = True
except OSError:
    opened = False
report(fds=fds, fd3=fd3, getfd=got, listed=listed, opened=opened)
os.kill(os.getpid(), signal.SIGSEGV)`);
      // 0, 1, 2 and the listing's own fd: nothing the launcher, bwrap or RepGen's own parent held leaks in.
      expect(found.fds).toEqual([0, 1, 2, 3]);
      expect(found.fd3).toBe(9); // EBADF: the listing's fd is closed by then
      expect(found.getfd).toEqual([-1, 1]);
      expect(found.listed).toBe(false);
      expect(found.opened).toBe(false);
      expect(r.exitCode).toBeNull();
      expect(r.signal).toBe('SIGSEGV');
      expect(r.infra).toBeNull();
    });

    it('8. the script cannot kill or stop the launcher (pid 1): its own exit code comes back', async () => {
      const { found, r } = await hostile(`
res = []
for s in (signal.SIGKILL, signal.SIGTERM, signal.SIGSTOP, signal.SIGINT):
    try:
        os.kill(1, s); res.append("sent")
    except OSError as e:
        res.append(e.errno)
time.sleep(0.3)
report(res=res)
sys.exit(7)`);
      expect(found.res).toHaveLength(4);
      expect(r.exitCode).toBe(7);
      expect(r.signal).toBeNull();
      expect(r.infra).toBeNull();
    });

    it('9. no ptrace and no reading another process: ptrace, process_vm_readv, kcmp, /proc/1/mem, /proc/1/environ', async () => {
      const { found } = await hostile(`
PTRACE_ATTACH, PTRACE_TRACEME = 16, 0
buf = ctypes.create_string_buffer(64)
iov = (ctypes.c_void_p * 2)(ctypes.cast(buf, ctypes.c_void_p), 64)
res = {"attach": sc("ptrace", PTRACE_ATTACH, 1, 0, 0), "traceme": sc("ptrace", PTRACE_TRACEME, 0, 0, 0),
       "vm_readv": sc("process_vm_readv", 1, iov, 1, iov, 1, 0), "kcmp": sc("kcmp", 1, os.getpid(), 0, 0, 0)}
for p in ("/proc/1/mem", "/proc/1/environ", "/proc/1/cwd/x"):
    try:
        open(p, "rb").read(1); res[p] = "read"
    except OSError as e:
        res[p] = e.errno
report(**res)`);
      expect(found.attach).toEqual([-1, 1]);
      expect(found.traceme).toEqual([-1, 1]);
      expect(found.vm_readv).toEqual([-1, 1]);
      expect(found.kcmp).toEqual([-1, 1]);
      expect(found['/proc/1/mem']).not.toBe('read');
      expect(found['/proc/1/environ']).not.toBe('read');
    });

    it('10. kernel attack surface is denied: bpf, perf_event_open, userfaultfd, io_uring, keyctl, modules, kexec, open_by_handle_at', async () => {
      const { found } = await hostile(`
attr = ctypes.create_string_buffer(128)
report(bpf=sc("bpf", 0, attr, 128), perf=sc("perf_event_open", attr, 0, -1, -1, 0), uffd=sc("userfaultfd", 0),
       uring=sc("io_uring_setup", 8, attr), keyctl=sc("keyctl", 0, 0), add_key=sc("add_key", b"user", b"x", b"y", 1, -3),
       init_module=sc("init_module", None, 0, b""), finit=sc("finit_module", 0, b"", 0), kexec=sc("kexec_load", 0, 0, None, 0),
       handle=sc("open_by_handle_at", -100, attr, 0), reboot=sc("reboot", 0, 0, 0, None), swapon=sc("swapon", b"/tmp/x", 0),
       chroot=sc("chroot", b"/tmp"), settime=sc("clock_settime", 0, attr), syslog=sc("syslog", 3, attr, 16))`);
      for (const [name, v] of Object.entries(found)) expect([name, v]).toEqual([name, [-1, 1]]);
      expect(Object.keys(found)).toHaveLength(15);
    });

    it('11. cannot type into a terminal (TIOCSTI) or reach the controlling tty', async () => {
      const { found } = await hostile(`
import fcntl, termios
c = ctypes.c_char(b"x")
res = {"tiocsti": sc("ioctl", 0, termios.TIOCSTI, ctypes.byref(c))}
try:
    os.open("/dev/tty", os.O_RDWR); res["tty"] = "opened"
except OSError as e:
    res["tty"] = e.errno
report(**res)`);
      expect(found.tiocsti).toEqual([-1, 1]);
      expect(found.tty).not.toBe('opened');
    });

    it('12. host files are not there: /etc/shadow, /root, the host /tmp, the project checkout, host processes', async () => {
      const { found } = await hostile(`
marker, canary, secret = sys.argv[1:4]
pids = [int(p) for p in os.listdir("/proc") if p.isdigit()]
report(shadow=os.path.exists("/etc/shadow"), root=os.path.exists("/root"), secret=os.path.exists(secret),
       project=os.path.exists(${JSON.stringify(process.cwd())}), home=os.path.exists("/home"), var=os.path.exists("/var"),
       pids=len(pids), etc=sorted(os.listdir("/etc")))`);
      expect(found).toMatchObject({ shadow: false, root: false, secret: false, project: false, home: false, var: false });
      expect(found.pids).toBeLessThanOrEqual(3);
      expect(found.etc).not.toContain('shadow');
      expect(found.etc).not.toContain('ssh');
    });

    it('13. writes outside the work dir fail or stay inside: /, /usr, /etc, /dev, /proc, the host canary path', async () => {
      const { found } = await hostile(`
marker, canary, secret = sys.argv[1:4]
res = {}
for p in ["/evil", "/usr/evil", "/etc/evil", "/dev/evil", "/proc/evil", "/sys/devices/evil", os.path.dirname(secret) + "/evil"]:
    try:
        open(p, "w").write("x"); res[p] = "written"
    except OSError as e:
        res[p] = "refused"
try:
    os.makedirs(os.path.dirname(canary), exist_ok=True)
    open(canary, "w").write("escaped")
    res["canary"] = "written inside"
except OSError:
    res["canary"] = "refused"
report(**res)`);
      for (const p of ['/evil', '/usr/evil', '/etc/evil', '/dev/evil', '/proc/evil', '/sys/devices/evil']) expect(found[p]).toBe('refused');
      // The canary's folder does not exist in the box; if the script made it there, it was in its private /tmp.
      expect(['refused', 'written inside']).toContain(found.canary);
    });

    it('14. $REPGEN_OUT replaced by a symlink to a host folder: nothing is collected, and the notes say why', async () => {
      const { r } = await hostile(`
import shutil
marker, canary, secret = sys.argv[1:4]
out = os.environ["REPGEN_OUT"]
shutil.rmtree(out)
os.symlink(os.path.dirname(secret), out)
report(done=True)`);
      expect(r.files).toEqual([]);
      expect(r.notes).toContain('$REPGEN_OUT was replaced by a symlink: nothing collected');
    });

    it('15. links, FIFOs, sockets and non-UTF-8 names under $REPGEN_OUT: skipped, no hang, no host content', async () => {
      // A collector that opened the FIFO would block for good: the test's own timeout is the hang check.
      const { r } = await hostile(`
import socket
marker, canary, secret = sys.argv[1:4]
out = os.environ["REPGEN_OUT"]
os.symlink(secret, os.path.join(out, "secret-link"))
os.symlink("/etc/passwd", os.path.join(out, "passwd"))
os.mkfifo(os.path.join(out, "fifo"))
s = socket.socket(socket.AF_UNIX); s.bind(os.path.join(out, "sock"))
open(os.path.join(out.encode(), b"bad-\\xff\\xfe.txt"), "w").write("x")
os.makedirs(os.path.join(out, "d/" * 40), exist_ok=True)
open(os.path.join(out, "ok.txt"), "w").write("fine")
report(done=True)`);
      expect(r.files).toEqual([{ path: 'ok.txt', size: 4, content: 'fine' }]);
      expect(r.notes).toContain('2 symlink(s) under $REPGEN_OUT not followed');
      expect(r.notes?.join(' ')).toMatch(/3 entries under \$REPGEN_OUT skipped/);
    });

    it('16. 50,000 files under $REPGEN_OUT: a bounded listing, not a host that chokes', async () => {
      const before = process.memoryUsage().rss;
      const { r } = await hostile(`
out = os.environ["REPGEN_OUT"]
for i in range(50000):
    open(os.path.join(out, "f%05d" % i), "w").close()
report(done=True)`);
      expect(r.files).toHaveLength(200);
      expect(r.notes?.join(' ')).toMatch(/holds more than 4000 entries: the listing stopped there/);
      // Bounded, not zero: the walk holds at most 4,000 names, and removing the work dir costs some memory too.
      expect(process.memoryUsage().rss - before).toBeLessThan(200 * 1024 * 1024);
    });

    it('17. 300 MB on stdout and stderr: capped and counted, the host neither throws nor grows', async () => {
      const before = process.memoryUsage().rss;
      const { r } = await hostile(`
chunk = b"A" * (1 << 20)
for i in range(150):
    os.write(1, chunk); os.write(2, chunk)
report(done=True)`);
      expect(r.stdoutBytes).toBeGreaterThanOrEqual(150 * (1 << 20));
      expect(r.stderrBytes).toBe(150 * (1 << 20));
      expect(r.stdoutTruncated).toBe(true);
      expect(Buffer.byteLength(r.output)).toBeLessThanOrEqual(1_000_000 + 200);
      expect(process.memoryUsage().rss - before).toBeLessThan(100 * 1024 * 1024);
    });

    it('18. a fork bomb stops at the process limit (within 10 %) and leaves nothing behind', async () => {
      const limit = 64;
      const { found, r } = await hostile(
        `
n = 0
try:
    for i in range(2000):
        pid = os.fork()
        if pid == 0:
            time.sleep(600)
            os._exit(0)
        n += 1
except OSError as e:
    err = e.errno
else:
    err = None
report(forked=n, err=err)`,
        {},
        executorWith({ maxProcesses: limit }),
      );
      expect(found.err).toBe(11); // EAGAIN
      expect(found.forked as number).toBeLessThanOrEqual(limit * 1.1);
      expect(r.exitCode).toBe(0);
    });

    it('19. MAP_SHARED memory past the memory limit is stopped within 10 %', async () => {
      const limitMb = 400;
      const { r } = await hostile(
        `
import mmap
m = mmap.mmap(-1, 1500 << 20, flags=mmap.MAP_SHARED)
for i in range(0, 1500 << 20, 4096):
    m[i] = 1
    if i % (16 << 20) == 0:
        print("touched", i >> 20, flush=True)
report(all=True)`,
        { limits: { memoryMb: limitMb } },
      );
      if (!cgroup) return expectNoCgroupSaid(r, limitMb);
      expect(r.isolation.notes.filter((n) => NO_CGROUP_NOTE.test(n))).toEqual([]);
      const touched = lastCount(r.stdout, 'touched');
      expect(r.stdout).not.toContain('REPORT');
      expect(touched).toBeLessThanOrEqual(limitMb * 1.1);
      expect(r.oomKilled || r.signal === 'SIGBUS' || r.exitCode !== 0).toBe(true);
    });

    it('20. memfd memory past the memory limit is stopped within 10 %', async () => {
      const limitMb = 400;
      const { r } = await hostile(
        `
fd = os.memfd_create("big")
chunk = b"m" * (16 << 20)
total = 0
for i in range(100):
    os.write(fd, chunk); total += 16
    print("wrote", total, flush=True)
report(all=True)`,
        { limits: { memoryMb: limitMb } },
      );
      if (!cgroup) return expectNoCgroupSaid(r, limitMb);
      expect(r.isolation.notes.filter((n) => NO_CGROUP_NOTE.test(n))).toEqual([]);
      const wrote = lastCount(r.stdout, 'wrote');
      expect(r.stdout).not.toContain('REPORT');
      expect(wrote).toBeLessThanOrEqual(limitMb * 1.1);
    });

    it('21. /tmp and /dev/shm are sized (half the memory limit each, as statvfs says): writing past them fails with ENOSPC within 10 %', async () => {
      const limitMb = 400;
      const { found, r } = await hostile(
        `
res = {"size": {d: os.statvfs(d).f_blocks * os.statvfs(d).f_frsize for d in ("/tmp", "/dev/shm")}}
chunk = b"t" * (8 << 20)
for d in ("/tmp", "/dev/shm"):
    n = 0
    try:
        with open(d + "/fill", "wb") as f:
            for i in range(200):
                f.write(chunk); f.flush(); n += 8
    except OSError as e:
        res[d] = [n, e.errno]
    else:
        res[d] = [n, None]
    os.unlink(d + "/fill")
report(**res)`,
        { limits: { memoryMb: limitMb } },
      );
      expect(r.oomKilled).toBe(false);
      // What docs/sandbox.md says a run sees (test/docs/docs-pages.test.ts holds the page to it).
      expect(found.size).toEqual({ '/tmp': (limitMb / 2) << 20, '/dev/shm': (limitMb / 2) << 20 });
      for (const d of ['/tmp', '/dev/shm']) {
        const [mb, errno] = found[d] as [number, number | null];
        expect(errno).toBe(28);
        expect(mb).toBeLessThanOrEqual((limitMb / 2) * 1.1);
      }
    });

    it('22. open files stop at RLIMIT_NOFILE (within 10 %)', async () => {
      const limit = 256;
      const { found } = await hostile(
        `
fds = []
try:
    while len(fds) < 100000:
        fds.append(os.open("/dev/null", os.O_RDONLY))
    err = None
except OSError as e:
    err = e.errno
report(opened=len(fds), err=err)`,
        {},
        executorWith({ maxOpenFiles: limit }),
      );
      expect(found.err).toBe(24); // EMFILE
      expect(found.opened as number).toBeLessThanOrEqual(limit * 1.1);
    });

    it('23. the CPU-time limit holds within 10 %; a script that ignores SIGXCPU is killed 1 s later', async () => {
      const burn = await hostile(`\nwhile True:\n    pass`, { limits: { cpuSeconds: 1, timeoutMs: 30_000 } });
      expect(burn.r.signal).toBe('SIGXCPU');
      expect(burn.r.cpuMs as number).toBeLessThanOrEqual(1000 * 1.1);
      const ignorer = await hostile(`\nsignal.signal(signal.SIGXCPU, signal.SIG_IGN)\nwhile True:\n    pass`, {
        limits: { cpuSeconds: 1, timeoutMs: 30_000 },
      });
      expect(ignorer.r.timedOut).toBe(false);
      expect(ignorer.r.signal).toBe('SIGKILL');
      // The hard limit: the soft one plus max(1 s, 10 %), so within 10 % for limits of 10 s and more.
      expect(ignorer.r.cpuMs as number).toBeLessThanOrEqual(2000 * 1.1);
    });

    it('24. a daemon (setsid, double fork) and a process that ignores SIGTERM do not outlive the run', async () => {
      const { r } = await hostile(`
marker = sys.argv[1]
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        os.execv(sys.executable, [sys.executable, "-c", "import time; time.sleep(600)", marker])
    os._exit(0)
time.sleep(0.5)
report(parent="done")`);
      expect(r.exitCode).toBe(0);
    });

    it("25. network off: the host's loopback services are out of reach", async () => {
      const { found } = await hostile(`
import socket
res = {}
for host in ("127.0.0.1", "::1"):
    try:
        s = socket.create_connection((host, ${port}), timeout=2)
        res[host] = s.recv(64).decode()
    except OSError as e:
        res[host] = "unreachable"
report(ifaces=sorted(os.listdir("/sys/class/net")) if os.path.exists("/sys/class/net") else [], **res)`);
      expect(found['127.0.0.1']).toBe('unreachable');
      expect(found['::1']).toBe('unreachable');
    });

    it("26. no secret in the script's environment or the launcher's, even when allowlisted by mistake", async () => {
      const { found } = await hostile(`
envs = {"self": dict(os.environ)}
for pid in os.listdir("/proc"):
    if pid.isdigit():
        try:
            envs[pid] = open("/proc/%s/environ" % pid, "rb").read().decode(errors="replace")
        except OSError as e:
            envs[pid] = e.errno
report(names=sorted(os.environ), envs=envs)`);
      expect(found.names).not.toContain('GITHUB_TOKEN');
      expect(found.names).not.toContain('ANTHROPIC_API_KEY');
    });

    it('27. the workspace cannot be changed: write, rename, unlink, chmod, mkdir all fail; the checkout is untouched', async () => {
      const { found } = await hostile(
        `
ws = os.environ["REPGEN_WORKSPACE"]
res = {}
for name, op in [("write", lambda: open(ws + "/pkg/__init__.py", "a").write("x")), ("create", lambda: open(ws + "/new.py", "w")),
                 ("rename", lambda: os.rename(ws + "/pkg", ws + "/pkg2")), ("unlink", lambda: os.unlink(ws + "/pkg/__init__.py")),
                 ("chmod", lambda: os.chmod(ws + "/pkg", 0o777)), ("mkdir", lambda: os.mkdir(ws + "/d")), ("utime", lambda: os.utime(ws + "/pkg"))]:
    try:
        op(); res[name] = "done"
    except OSError as e:
        res[name] = "refused"
import pkg
report(imported=pkg.VALUE, **res)`,
        { workspace: { hostPath: checkout } },
      );
      expect(found).toEqual({
        imported: 1,
        write: 'refused',
        create: 'refused',
        rename: 'refused',
        unlink: 'refused',
        chmod: 'refused',
        mkdir: 'refused',
        utime: 'refused',
      });
      expect(readdirSync(checkout)).toEqual(['pkg']);
      expect(readFileSync(join(checkout, 'pkg', '__init__.py'), 'utf8')).toBe('VALUE = 1\n');
    });
  });
}
