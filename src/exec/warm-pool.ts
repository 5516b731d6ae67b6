/**
 * The warm interpreter of the local executor's pool (`REPGEN_WARM_POOL`). A pooled run is a whole sandbox started
 * ahead of time, exactly as a cold run's (same namespaces, uid, seccomp, cgroup, limits, an empty work dir of its
 * own), whose interpreter has already imported the heavy modules and waits on stdin for its go message. It serves
 * one run and dies with it: no module state, file, process or seed can reach the next run, and no fork happens
 * after threads exist. What a pool entry cannot know ahead (the files) is written into its work dir at go time.
 *
 * Run as `python -c WARM_SOURCE` (not `-I`: the request's PYTHON* variables apply as in a cold run). It writes
 * READY_MARKER and its CPU time so far on stdout, reads one JSON line `{entry, args, cpu}` from stdin, points stdin
 * at /dev/null, sets its CPU limit to what is used plus the run's own, and runs the entry as `__main__` the way
 * `python ENTRY` does (argv, sys.path[0], __file__, exit codes, tracebacks from the script's frame on).
 */
export const WARM_SOURCE = String.raw`
import os, sys
for _m in ("numpy", "torch", "torch.nn", "torch.nn.functional"):
    try:
        __import__(_m)
    except BaseException:
        pass
import gc, json, resource, runpy, traceback
gc.collect()
def _cpu():
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime
os.write(1, b"\0REPGEN-WARM-READY %d\n" % int(_cpu() * 1000))
_buf = b""
while not _buf.endswith(b"\n"):
    _c = os.read(0, 65536)
    if not _c:
        os._exit(0)
    _buf += _c
_msg = json.loads(_buf)
_fd = os.open("/dev/null", os.O_RDONLY)
os.dup2(_fd, 0)
os.close(_fd)
# Whole seconds only: the script gets its limit or up to a second less, never more.
_soft = int(_cpu()) + int(_msg["cpu"])
_hard = _soft + max(1, int(_msg["cpu"]) // 10)
resource.setrlimit(resource.RLIMIT_CPU, (_soft, min(_hard, resource.getrlimit(resource.RLIMIT_CPU)[1])))
_entry = os.path.abspath(_msg["entry"])
sys.argv = [_msg["entry"]] + list(_msg["args"])
sys.path[0] = os.path.dirname(_entry)
del _m, _buf, _c, _msg, _fd, _soft, _hard
# As "python ENTRY" does it: a fresh __main__ module, the file's absolute path as __file__ and in tracebacks.
import types, atexit, threading
_main = types.ModuleType("__main__")
_main.__file__ = _entry
_main.__builtins__ = __builtins__
_main.__cached__ = None
sys.modules["__main__"] = _main
_code = 0
try:
    with open(_entry, "rb") as _f:
        _src = _f.read()
    exec(compile(_src, _entry, "exec"), _main.__dict__)
except SystemExit as _e:
    _c = _e.code
    if _c is None:
        _code = 0
    elif isinstance(_c, int):
        _code = _c & 0xFF
    else:
        print(_c, file=sys.stderr)
        _code = 1
except BaseException as _e:
    _tb = _e.__traceback__
    while _tb is not None and _tb.tb_frame.f_code.co_filename != _entry:
        _tb = _tb.tb_next
    traceback.print_exception(type(_e), _e, _tb)
    _code = 1
# Python's own exit, less the module teardown (which costs a torch process a tenth of a second): wait for
# non-daemon threads, run atexit handlers, flush, exit.
try:
    threading._shutdown()
except BaseException:
    pass
try:
    atexit._run_exitfuncs()
except BaseException:
    pass
for _s in (sys.stdout, sys.stderr):
    try:
        _s.flush()
    except BaseException:
        pass
os._exit(_code)
`;

export const READY_MARKER = '\0REPGEN-WARM-READY ';

/** The import CPU time (ms) a warm interpreter reported once ready, or null when `text` holds no ready line. */
export function parseReady(text: string): number | null {
  const at = text.indexOf(READY_MARKER);
  if (at < 0) return null;
  const end = text.indexOf('\n', at);
  if (end < 0) return null;
  const ms = Number(text.slice(at + READY_MARKER.length, end));
  return Number.isFinite(ms) && ms >= 0 ? ms : null;
}
