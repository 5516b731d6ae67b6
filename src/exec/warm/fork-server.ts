/**
 * The fork server of the local executor's warm pool (`REPGEN_WARM_POOL`). It is started like a cold run (same
 * sandbox: namespaces, uid, seccomp, cgroup, the launcher's limits) as `python -c FORK_SERVER_SOURCE`, imports the
 * heavy modules once, and then serves one run at a time: each run is a child forked from it, so it starts with
 * torch imported and nothing of any earlier run (module state is the server's pristine copy, fds are the child's
 * own, the random generators are reseeded).
 *
 * Protocol. Host → server, on stdin: one JSON line per run, `{dir, entry, args, cpu, env}`, or `{preload: [names]}`
 * to import a run's leading imports in the server before forking it (import-ahead.ts says which, and which runs
 * such a server may then serve). Server → host, on stdout: frames of a kind byte, a 4-byte big-endian length and
 * a payload — `R` once (ready: its import CPU ms, how many threads it has, which of its own imports failed), `P`
 * per preload (what it imported, skipped or failed on, its threads after, what the imports printed), then per run
 * `S` (forked: the script has started, so the host never starts it again), `O`/`E` (the run's stdout/stderr,
 * relayed from pipes of its own) and `X` (the end: exit status, CPU and peak RSS of the run, and whether the server
 * is still clean). A run never sees the server's stdout: its fds 1 and 2 are its own pipes, so
 * it cannot forge a frame. What the server imports ahead comes from where the run's own imports would (the
 * workspace, the interpreter's packages), never from a run's folder: it is the code the run would run first.
 *
 * After the run's process exits, everything else in the sandbox's pid namespace dies (kill(-1): the server is a
 * subreaper and reaps it), then /tmp, /dev/shm and System V IPC objects are emptied; the host removes the run's
 * additions to the server's work dir (tidy-server-dir.ts). The server stays non-dumpable (no /proc/<pid>/mem, no
 * ptrace by the same uid), the child becomes dumpable again, as a cold run's script is. The server refuses to fork
 * (`threads` > 1 in its ready frame) when an import left a thread running: a fork then copies locks held by threads
 * that do not exist in the child.
 *
 * String hashing is the server's: PYTHONHASHSEED is read once, when an interpreter starts, so a forked run keeps
 * the server's hash seed whatever its own seed (its REPGEN_SEED and generators are its own).
 */
/** What every fork server imports when it starts, before any run. */
export const SERVER_IMPORTS: readonly string[] = ['numpy', 'torch', 'torch.nn', 'torch.nn.functional'];

export const FORK_SERVER_SOURCE = String.raw`# repgen fork server
import os, sys
# Nothing is imported from the server's own folder: what it imports ahead for a run comes from where the run's own
# imports would, past the run's folder (the child puts that first on sys.path again).
if sys.path and sys.path[0] in ("", os.getcwd()):
    sys.path[0] = "/nonexistent/repgen-fork-server"
# What the imports print goes to stderr: stdout is the frame channel (the host skips what came before the ready frame).
_out = os.dup(1)
os.dup2(2, 1)
_failed = []
for _m in (${SERVER_IMPORTS.map((m) => JSON.stringify(m)).join(', ')}):
    try:
        __import__(_m)
    except BaseException as _e:
        _failed.append("%s: %s: %s" % (_m, type(_e).__name__, str(_e)[:300]))
try:
    sys.stdout.flush()
except BaseException:
    pass
os.dup2(_out, 1)
os.close(_out)
import ctypes, gc, json, resource, select, shutil, signal, struct, traceback, types, atexit, threading, random, base64, importlib
_libc = ctypes.CDLL(None, use_errno=True)
_libc.prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE 0: the runs share our uid
_libc.prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER: what a run leaves behind re-parents to us
gc.collect()
gc.freeze()
def _cpu():
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime
READY_SYNC = b"\0REPGEN-FORK-SERVER\0"
def _frame(kind, payload):
    data = kind + struct.pack(">I", len(payload)) + payload
    while data:
        data = data[os.write(1, data):]
os.write(1, READY_SYNC)
_frame(b"R", json.dumps({"cpuMs": int(_cpu() * 1000), "threads": len(os.listdir("/proc/self/task")), "failed": _failed}).encode())

def _retitle(words):
    # What ps and /proc/<pid>/cmdline show for the run: its own argv, as a cold run's, written over ours (which
    # holds this whole source, so it has room); the kernel reads the command line from this memory.
    try:
        with open("/proc/self/stat") as f:
            st = f.read()
        fields = st[st.rfind(")") + 2:].split()
        start, end = int(fields[45]), int(fields[46])
        blob = b"\0".join(w.encode("utf-8", "surrogateescape") for w in words)[: end - start - 1]
        ctypes.memmove(start, blob + b"\0" * (end - start - len(blob)), end - start)
    except Exception:
        pass

def _child(msg, out_w, err_w):
    code = 0
    try:
        _retitle([sys.executable, msg["entry"]] + list(msg["args"]))
        os.dup2(out_w, 1)
        os.dup2(err_w, 2)
        fd = os.open("/dev/null", os.O_RDONLY)
        os.dup2(fd, 0)
        os.closerange(3, 65536)
        _libc.prctl(4, 1, 0, 0, 0)
        try:
            # When the sandbox's memory runs out, the kernel kills the run, not the server it shares the cgroup with.
            with open("/proc/self/oom_score_adj", "w") as f:
                f.write("1000")
        except OSError:
            pass
        signal.signal(signal.SIGINT, signal.default_int_handler)
        os.chdir(msg["dir"])
        os.environ.clear()
        os.environ.update(msg["env"])
        os.environ["PWD"] = msg["dir"]
        soft = int(msg["cpu"])
        hard = min(soft + max(1, soft // 10), resource.getrlimit(resource.RLIMIT_CPU)[1])
        resource.setrlimit(resource.RLIMIT_CPU, (min(soft, hard), hard))
        random.seed()
        if "numpy" in sys.modules:
            sys.modules["numpy"].random.seed()
        entry = os.path.abspath(msg["entry"])
        sys.argv = [msg["entry"]] + list(msg["args"])
        sys.path[0] = os.path.dirname(entry)
        main = types.ModuleType("__main__")
        main.__file__ = entry
        main.__builtins__ = __builtins__
        main.__cached__ = None
        sys.modules["__main__"] = main
        with open(entry, "rb") as f:
            src = f.read()
    except BaseException as e:
        os.write(2, ("repgen: cannot start the run: %s\n" % e).encode())
        os._exit(127)
    del msg, out_w, err_w
    try:
        exec(compile(src, entry, "exec"), main.__dict__)
    except SystemExit as e:
        c = e.code
        if c is None:
            code = 0
        elif isinstance(c, int):
            code = c & 0xFF
        else:
            print(c, file=sys.stderr)
            code = 1
    except BaseException as e:
        tb = e.__traceback__
        while tb is not None and tb.tb_frame.f_code.co_filename != entry:
            tb = tb.tb_next
        traceback.print_exception(type(e), e, tb)
        code = 1
    # Python's own exit, less the module teardown: wait for non-daemon threads, run atexit handlers, flush, exit.
    try:
        threading._shutdown()
    except BaseException:
        pass
    try:
        atexit._run_exitfuncs()
    except BaseException:
        pass
    for s in (sys.stdout, sys.stderr):
        try:
            s.flush()
        except BaseException:
            pass
    os._exit(code)

def _reap():
    while True:
        try:
            got, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if got == 0:
            return

def _sweep():
    for _ in range(10000):
        try:
            os.kill(-1, signal.SIGKILL)
        except ProcessLookupError:
            return True
        _reap()
    return False

def _walk(top):
    """Every path under top, not descending into mount points (the work dir, read-only binds)."""
    seen = set()
    for root, dirs, files in os.walk(top):
        keep = []
        for d in dirs:
            path = os.path.join(root, d)
            seen.add(path)
            if not os.path.ismount(path) and not os.path.islink(path):
                keep.append(d)
        dirs[:] = keep
        for f in files:
            seen.add(os.path.join(root, f))
    return seen

_TOPS = ("/tmp", "/dev/shm")
_BASELINE = set()
for _t in _TOPS:
    _BASELINE |= _walk(_t)

def _wipe():
    """Removes what runs added under /tmp and /dev/shm since the server started; True when nothing is left."""
    for top in _TOPS:
        for path in sorted(_walk(top) - _BASELINE, key=len):
            try:
                if os.path.isdir(path) and not os.path.islink(path):
                    for root, dirs, _ in os.walk(path):
                        for d in dirs:
                            try:
                                os.chmod(os.path.join(root, d), 0o700)
                            except OSError:
                                pass
                    os.chmod(path, 0o700)
                    shutil.rmtree(path)
                else:
                    os.unlink(path)
            except FileNotFoundError:
                pass
            except OSError:
                pass
    return all(not (_walk(t) - _BASELINE) for t in _TOPS)

def _drop_ipc():
    clean = True
    for kind, call in (("shm", lambda i: _libc.shmctl(i, 0, None)), ("sem", lambda i: _libc.semctl(i, 0, 0)), ("msg", lambda i: _libc.msgctl(i, 0, None))):
        try:
            with open("/proc/sysvipc/" + kind) as f:
                ids = [int(line.split()[1]) for line in f.readlines()[1:] if line.strip()]
        except OSError:
            continue
        for i in ids:
            if call(i) != 0:
                clean = False
    return clean

def _serve(msg):
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        _child(msg, out_w, err_w)
    # The run is forked: from here on the host never starts it again, whatever becomes of this server.
    _frame(b"S", b"")
    os.close(out_w)
    os.close(err_w)
    fds = {out_r: b"O", err_r: b"E"}
    status = ru = None
    clean = True
    while fds or status is None:
        if status is None:
            got, st, r = os.wait4(pid, 0 if not fds else os.WNOHANG)
            if got == pid:
                status, ru = st, r
                # The run is over: what it left running dies now, and with it the last writers of its pipes.
                clean = _sweep() and clean
        if fds:
            ready, _, _ = select.select(list(fds), [], [], 0.05)
            for fd in ready:
                data = os.read(fd, 65536)
                if data:
                    _frame(fds[fd], data)
                else:
                    os.close(fd)
                    del fds[fd]
    clean = _sweep() and clean
    clean = _wipe() and clean
    clean = _drop_ipc() and clean
    end = {"cpuMs": (ru.ru_utime + ru.ru_stime) * 1000.0, "maxRssKb": ru.ru_maxrss, "clean": clean}
    if os.WIFSIGNALED(status):
        try:
            end["signal"] = signal.Signals(os.WTERMSIG(status)).name
        except ValueError:
            end["signal"] = "SIG%d" % os.WTERMSIG(status)
        end["exitCode"] = None
    else:
        end["exitCode"] = os.WEXITSTATUS(status)
        end["signal"] = None
    _frame(b"X", json.dumps(end).encode())

def _threads():
    return len(os.listdir("/proc/self/task"))

def _preload(names):
    """Imports a run's leading imports here, before forking it: what they print is captured (the host replays it
    into every run that imports them), and the first import that fails or leaves a thread running ends the list.
    A module already imported, or of the standard library (quick to import, and nothing of it to carry into runs
    that do not import it), is skipped: only what it loads anew ties the server to runs that import it."""
    res = {"loaded": [], "skipped": [], "failed": None, "threads": 1}
    std = getattr(sys, "stdlib_module_names", ())
    caps = [os.memfd_create("repgen-preload-out"), os.memfd_create("repgen-preload-err")]
    saved = [os.dup(1), os.dup(2)]
    os.dup2(caps[0], 1)
    os.dup2(caps[1], 2)
    def flush():
        for s in (sys.stdout, sys.stderr):
            try:
                s.flush()
            except BaseException:
                pass
    # What the modules imported whole printed; a failed import's output is not kept: the run prints it again.
    kept = [0, 0]
    try:
        for name in names:
            if name in sys.modules or name.split(".")[0] in std:
                res["skipped"].append(name)
                continue
            try:
                importlib.import_module(name)
            except BaseException as e:
                res["failed"] = {"module": name, "error": ("%s: %s" % (type(e).__name__, e))[:500]}
                break
            flush()
            kept = [os.lseek(fd, 0, os.SEEK_CUR) for fd in caps]
            res["loaded"].append(name)
            res["threads"] = _threads()
            if res["threads"] > 1:
                break
    finally:
        flush()
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        os.close(saved[0])
        os.close(saved[1])
    for key, fd, n in zip(("stdout", "stderr"), caps, kept):
        os.lseek(fd, 0, 0)
        res[key] = base64.b64encode(os.read(fd, min(n, 1 << 16))).decode()
        os.close(fd)
    gc.collect()
    gc.freeze()
    _frame(b"P", json.dumps(res).encode())

_buf = b""
while True:
    while b"\n" not in _buf:
        _c = os.read(0, 1 << 20)
        if not _c:
            os._exit(0)
        _buf += _c
    _line, _buf = _buf.split(b"\n", 1)
    _msg = json.loads(_line)
    if "preload" in _msg:
        _preload(_msg["preload"])
    else:
        _serve(_msg)
`;
