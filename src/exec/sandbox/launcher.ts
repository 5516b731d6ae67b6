import { z } from 'zod';

/**
 * Invoked as `python -I -S -c LAUNCHER_SOURCE CPU_SECONDS DATA_BYTES FILE_BYTES SUBREAPER(0|1) NPROC NOFILE ARGV...`.
 *
 * A few lines of Python that sit between the sandbox and the script. Node cannot learn the resource usage of a
 * grandchild (libuv reaps children without rusage), so the launcher forks the script, sets its limits in the
 * child (RLIMIT_CPU, RLIMIT_DATA, RLIMIT_FSIZE, RLIMIT_NPROC, RLIMIT_NOFILE, no core dumps), waits with wait4() and
 * reports exit status, CPU time and peak RSS as JSON lines on fd 3. The script cannot reach that channel: fd 3 is
 * close-on-exec, the launcher is not dumpable (no ptrace, no /proc/<pid>/fd of it for the same uid), the seccomp
 * filter denies pidfd_getfd, and as the namespace's pid 1 it ignores the script's signals.
 *
 * RLIMIT_DATA rather than RLIMIT_AS: torch reserves far more address space than it touches, and an address-space
 * cap small enough to matter breaks `import torch` (shared libraries fail to map); the data limit counts
 * private writable memory, which is what a runaway tensor allocation consumes.
 *
 * Runs under `-I -S` so no PYTHON* variable or site package of the script's environment changes it; it only
 * needs the standard library of any Python 3, and skips even `json` to start fast.
 */
export const LAUNCHER_SOURCE = String.raw`
import os, resource, signal, sys
try:
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE 0
except Exception:
    libc = None
cpu, data, fsize, subreaper = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4] == "1"
nproc, nofile = int(sys.argv[5]), int(sys.argv[6])
argv = sys.argv[7:]
reap_all = subreaper or os.getpid() == 1
os.set_inheritable(3, False)
def say(line):
    os.write(3, (line + "\n").encode())
say('{"started": true}')
def cap(kind, soft, hard):
    cur = resource.getrlimit(kind)[1]
    if cur != resource.RLIM_INFINITY:
        soft, hard = min(soft, cur), min(hard, cur)
    resource.setrlimit(kind, (soft, hard))
if subreaper and libc is not None:
    # No pid namespace: orphans of the script re-parent to us instead of init, so they stay in reach.
    libc.prctl(36, 1, 0, 0, 0)
# As pid 1 only signals with a handler reach us, and Python has one for SIGINT: the script must not stop us.
signal.signal(signal.SIGINT, signal.SIG_IGN)
pid = os.fork()
if pid == 0:
    try:
        cap(resource.RLIMIT_CPU, cpu, cpu + max(1, cpu // 10))
        cap(resource.RLIMIT_DATA, data, data)
        cap(resource.RLIMIT_CORE, 0, 0)
        cap(resource.RLIMIT_FSIZE, fsize, fsize)
        cap(resource.RLIMIT_NPROC, nproc, nproc)
        cap(resource.RLIMIT_NOFILE, nofile, nofile)
        # Python ignores SIGPIPE and SIGXFSZ; exec would pass that on to shell setup commands.
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)
        signal.signal(signal.SIGXFSZ, signal.SIG_DFL)
        # Only stdin/out/err reach the script: fds our own parent leaked to us stay here (fd 3 is close-on-exec).
        os.closerange(4, 65536)
        os.execv(argv[0], argv)
    except BaseException as e:
        try:
            msg = ("%s: %s" % (argv[0], e)).replace("\\", "/").replace('"', "'").replace("\n", " ")
            say('{"execError": "%s"}' % msg)
            sys.stderr.write("repgen: cannot execute %s: %s\n" % (argv[0], e)); sys.stderr.flush()
        finally:
            os._exit(127)
while True:
    try:
        got, status, ru = os.wait4(-1 if reap_all else pid, 0)
        if got == pid:
            break
    except InterruptedError:
        continue
if subreaper:
    # What the script left running (daemons, orphans) dies with it, as it would with a pid namespace.
    me = str(os.getpid())
    for _ in range(100):
        kids = []
        for name in os.listdir("/proc"):
            if name.isdigit():
                try:
                    with open("/proc/%s/stat" % name) as f:
                        st = f.read()
                    if st[st.rfind(")") + 2:].split(" ")[1] == me:
                        kids.append(int(name))
                except OSError:
                    pass
        if not kids:
            break
        for k in kids:
            try:
                os.kill(k, signal.SIGKILL)
            except OSError:
                pass
        for k in kids:
            try:
                os.waitpid(k, 0)
            except OSError:
                pass
if os.WIFSIGNALED(status):
    n = os.WTERMSIG(status)
    try:
        name = signal.Signals(n).name
    except ValueError:
        name = "SIG%d" % n
    code, sig = "null", '"%s"' % name
else:
    code, sig = str(os.WEXITSTATUS(status)), "null"
say('{"exitCode": %s, "signal": %s, "cpuMs": %.3f, "maxRssKb": %d}' % (code, sig, (ru.ru_utime + ru.ru_stime) * 1000.0, ru.ru_maxrss))
os._exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status))
`;

/** One JSON line of the launcher's report channel. */
export const LauncherLine = z.object({
  started: z.boolean().optional(),
  execError: z.string().optional(),
  exitCode: z.number().int().nullable().optional(),
  signal: z.string().nullable().optional(),
  cpuMs: z.number().min(0).optional(),
  maxRssKb: z.number().min(0).optional(),
});
export type LauncherLine = z.infer<typeof LauncherLine>;

export interface LauncherReport {
  started: boolean;
  execError: string | null;
  /** Present once the script was waited for; absent when the launcher itself was killed (timeout, abort). */
  exit: { exitCode: number | null; signal: string | null; cpuMs: number; peakMemoryMb: number } | null;
}

/** Reads the report channel's text; lines that are not the launcher's JSON are ignored. */
export function parseLauncherReport(text: string): LauncherReport {
  const report: LauncherReport = { started: false, execError: null, exit: null };
  for (const raw of text.split('\n')) {
    if (!raw.trim()) continue;
    let json: unknown;
    try {
      json = JSON.parse(raw);
    } catch {
      continue;
    }
    const line = LauncherLine.safeParse(json);
    if (!line.success) continue;
    const l = line.data;
    if (l.started) report.started = true;
    if (l.execError !== undefined) report.execError = l.execError;
    if (l.cpuMs !== undefined && l.maxRssKb !== undefined) {
      report.exit = {
        exitCode: l.exitCode ?? null,
        signal: l.signal ?? null,
        cpuMs: Math.round(l.cpuMs),
        peakMemoryMb: Math.round((l.maxRssKb / 1024) * 10) / 10,
      };
    }
  }
  return report;
}
