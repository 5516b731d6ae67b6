import { z } from 'zod';
import type { OutputFile } from '../types.js';

/**
 * The runner: a small Python program shipped in each run's ConfigMap and started as the container's command.
 *
 * Why a runner and not `python script.py` directly: the Kubernetes log endpoint merges stdout and stderr and
 * knows nothing of signals, CPU time or the files a script wrote. The runner keeps the local executor's
 * semantics inside the pod: it copies the files out of the read-only ConfigMap into the writable work dir, runs
 * the setup commands, runs the script in its own session with RLIMIT_CPU, kills the whole group at the
 * timeout, caps what it forwards of each stream, and writes everything to its stdout as one JSON frame per line
 * (`\x1erepgen {…}`), ending with an exit frame. `parseRunnerLog` turns the pod log back into a RunResult.
 * A line without the frame prefix (the runtime's own error, a runner crash) is kept as stderr.
 */
export const FRAME_PREFIX = '\u001erepgen ';

/** What the runner reads from `request.json` in its ConfigMap. */
export const RunnerRequest = z.object({
  entry: z.string(),
  args: z.array(z.string()),
  interpreter: z.string(),
  setup: z.array(z.string()),
  timeoutMs: z.number().int().positive(),
  cpuSeconds: z.number().int().positive(),
  maxOutputBytes: z.number().int().positive(),
  /** Output files up to this size that are UTF-8 text come back with their content. */
  inlineFileBytes: z.number().int().min(0),
  /** At most this many files of $REPGEN_OUT are listed. */
  maxOutputFiles: z.number().int().positive(),
  /** ConfigMap key → relative path in the work dir (ConfigMap keys cannot hold `/`). */
  files: z.array(z.object({ key: z.string(), path: z.string() })),
});
export type RunnerRequest = z.infer<typeof RunnerRequest>;

export const RUNNER_PY = String.raw`# RepGen runner: runs one candidate script and reports it as JSON frames on stdout.
import json, os, resource, selectors, signal, subprocess, sys, time, codecs

PREFIX = "\x1erepgen "

def emit(obj):
    sys.stdout.buffer.write((PREFIX + json.dumps(obj, separators=(",", ":")) + "\n").encode("utf-8"))
    sys.stdout.buffer.flush()

class Capture:
    """First half and last half of a stream, as the local executor keeps them (output-capture.ts)."""
    def __init__(self, cap):
        self.cap = cap
        self.head_cap = cap // 2
        self.tail_cap = cap - self.head_cap
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0
    def push(self, chunk):
        self.total += len(chunk)
        room = self.head_cap - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if chunk:
            self.tail += chunk
            if len(self.tail) > 2 * self.tail_cap + 65536:
                del self.tail[: len(self.tail) - self.tail_cap]
    def text(self):
        if self.total <= self.cap:
            return (bytes(self.head) + bytes(self.tail)).decode("utf-8", "replace")
        tail = bytes(self.tail[-self.tail_cap:]) if self.tail_cap else b""
        head = bytes(self.head)
        head_end = utf8_boundary(head, len(head))
        tail_start = 0
        while tail_start < len(tail) and tail_start < 4 and (tail[tail_start] & 0xC0) == 0x80:
            tail_start += 1
        kept = head_end + (len(tail) - tail_start)
        marker = "\n\u2026 [repgen: %d bytes of output omitted] \u2026\n" % (self.total - kept)
        return head[:head_end].decode("utf-8", "replace") + marker + tail[tail_start:].decode("utf-8", "replace")

def utf8_boundary(buf, end):
    i = end
    while i > 0 and i > end - 4 and (buf[i - 1] & 0xC0) == 0x80:
        i -= 1
    if i == 0:
        return end
    lead = buf[i - 1]
    need = 4 if lead >= 0xF0 else 3 if lead >= 0xE0 else 2 if lead >= 0xC0 else 1
    return end if end - (i - 1) >= need else i - 1

def main():
    conf_dir = sys.argv[1]
    with open(os.path.join(conf_dir, "request.json"), encoding="utf-8") as fh:
        req = json.load(fh)
    work = os.environ.get("REPGEN_WORKDIR") or os.getcwd()
    out_dir = os.environ.get("REPGEN_OUT") or os.path.join(work, ".repgen", "out")
    for d in (work, out_dir):
        os.makedirs(d, exist_ok=True)
    for f in req["files"]:
        dest = os.path.join(work, f["path"])
        os.makedirs(os.path.dirname(dest) or work, exist_ok=True)
        with open(os.path.join(conf_dir, f["key"]), "rb") as src, open(dest, "wb") as dst:
            dst.write(src.read())

    cap = req["maxOutputBytes"]
    text_file_limit = req.get("inlineFileBytes", 65536)
    max_files = req.get("maxOutputFiles", 200)
    captures = {"o": Capture(cap), "e": Capture(cap), "a": Capture(cap)}
    # Live frames carry each stream's head as it arrives, so a pod killed from outside (OOM, deadline) still
    # leaves what the script printed; the final "text" frames carry the exact capped texts.
    live = {"o": 0, "e": 0}
    live_cap = cap // 2
    decoders = {"o": codecs.getincrementaldecoder("utf-8")("replace"), "e": codecs.getincrementaldecoder("utf-8")("replace")}
    started = time.monotonic()
    deadline = started + req["timeoutMs"] / 1000.0
    cpu = req["cpuSeconds"]

    def cap_limit(kind, soft, hard):
        cur = resource.getrlimit(kind)[1]
        if cur != resource.RLIM_INFINITY:
            soft, hard = min(soft, cur), min(hard, cur)
        resource.setrlimit(kind, (soft, hard))

    def limit_cpu():
        cap_limit(resource.RLIMIT_CPU, cpu, cpu + 5)
        cap_limit(resource.RLIMIT_CORE, 0, 0)

    def take(stream, chunk):
        captures[stream].push(chunk)
        captures["a"].push(chunk)
        room = live_cap - live[stream]
        if room > 0:
            part = chunk[:room]
            live[stream] += len(part)
            text = decoders[stream].decode(part)
            if text:
                emit({"s": stream, "d": text})

    def run(argv):
        proc = subprocess.Popen(argv, cwd=work, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                start_new_session=True, preexec_fn=limit_cpu)
        sel = selectors.DefaultSelector()
        sel.register(proc.stdout, selectors.EVENT_READ, "o")
        sel.register(proc.stderr, selectors.EVENT_READ, "e")
        open_streams = 2
        timed_out = False
        while open_streams:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                timed_out = True
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                break
            for key, _ in sel.select(timeout=min(remaining, 0.5)):
                chunk = os.read(key.fileobj.fileno(), 65536)
                if not chunk:
                    sel.unregister(key.fileobj)
                    open_streams -= 1
                    continue
                take(key.data, chunk)
        if timed_out:
            # Drain what is already in the pipes without blocking; the group is dead.
            for key in list(sel.get_map().values()):
                try:
                    os.set_blocking(key.fileobj.fileno(), False)
                    while True:
                        chunk = os.read(key.fileobj.fileno(), 65536)
                        if not chunk:
                            break
                        take(key.data, chunk)
                except OSError:
                    pass
        sel.close()
        rc = proc.wait()
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        return rc, timed_out

    rc, timed_out = 0, False
    argv = [req["interpreter"], req["entry"]] + list(req["args"])
    if req["setup"]:
        # As the local executor does: setup and script in one shell, stop at the first failing command.
        argv = ["/bin/sh", "-c", "set -e\n" + "\n".join(req["setup"]) + '\nexec "$@"', "repgen-setup"] + argv
    try:
        rc, timed_out = run(argv)
    except OSError as err:
        take("e", ("repgen runner: cannot start %s: %s\n" % (argv[0], err)).encode("utf-8"))
        emit({"t": "spawn_failed", "message": "%s: %s" % (argv[0], err)})
        rc = 127

    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    files = []
    for root, dirs, names in os.walk(out_dir):
        dirs.sort()
        for name in sorted(names):
            if len(files) >= max_files:
                break
            full = os.path.join(root, name)
            if os.path.islink(full) or not os.path.isfile(full):
                continue
            rel = os.path.relpath(full, out_dir)
            try:
                size = os.path.getsize(full)
                entry = {"p": rel, "n": size}
                if size <= text_file_limit:
                    with open(full, "rb") as fh:
                        data = fh.read()
                    try:
                        entry["c"] = data.decode("utf-8")
                    except UnicodeDecodeError:
                        pass
                files.append(entry)
            except OSError:
                pass
    sig = None
    code = rc
    if rc < 0:
        try:
            sig = signal.Signals(-rc).name
        except ValueError:
            sig = "SIG%d" % -rc
        code = None
    for stream in ("o", "e", "a"):
        emit({"t": "text", "s": stream, "d": captures[stream].text(), "n": captures[stream].total})
    emit({"t": "exit", "code": code, "signal": sig, "timedOut": timed_out,
          "cpuMs": int((usage.ru_utime + usage.ru_stime) * 1000), "maxrssKb": usage.ru_maxrss,
          "durationMs": int((time.monotonic() - started) * 1000), "bytes": {"o": captures["o"].total, "e": captures["e"].total}, "files": files})
    sys.exit(code if code is not None else 128 + (-rc))

main()
`;

const ExitFrame = z.object({
  t: z.literal('exit'),
  code: z.number().int().nullable(),
  signal: z.string().nullable(),
  timedOut: z.boolean(),
  cpuMs: z.number(),
  maxrssKb: z.number(),
  durationMs: z.number(),
  bytes: z.object({ o: z.number(), e: z.number() }),
  files: z.array(z.object({ p: z.string(), n: z.number(), c: z.string().optional() })),
});
export type ExitFrame = z.infer<typeof ExitFrame>;

const StreamFrame = z.object({ s: z.enum(['o', 'e']), d: z.string() }).strict();
const TextFrame = z.object({ t: z.literal('text'), s: z.enum(['o', 'e', 'a']), d: z.string(), n: z.number() });
const SpawnFailedFrame = z.object({ t: z.literal('spawn_failed'), message: z.string() });

export interface RunnerLog {
  stdout: string;
  stderr: string;
  output: string;
  /** Bytes the script wrote (from the runner's counts when it finished, else what the log carried). */
  stdoutBytes: number;
  stderrBytes: number;
  stdoutTruncated: boolean;
  stderrTruncated: boolean;
  exit: ExitFrame | null;
  /** The interpreter or shell could not be started. */
  spawnFailed: string | null;
  files: OutputFile[];
}

/**
 * Decodes a pod log written by the runner. Pure: the log text in, the streams and the exit frame out.
 * The final text frames (head + tail, capped like the local executor's) win; without them (the pod was
 * killed from outside) the live head frames are what there is. A truncated last line is dropped; lines
 * without the frame prefix (the runtime's own error) count as stderr.
 */
export function parseRunnerLog(log: string, cap: number): RunnerLog {
  const live = { o: '', e: '', a: '' };
  const liveBytes = { o: 0, e: 0 };
  const finals: Partial<Record<'o' | 'e' | 'a', { text: string; total: number }>> = {};
  let foreign = '';
  let exit: ExitFrame | null = null;
  let spawnFailed: string | null = null;
  const lines = log.split('\n');
  // The last piece is '' after a final newline, or a line the log limit cut: dropped either way.
  const complete = lines.slice(0, -1);
  for (const line of complete) {
    if (!line.startsWith(FRAME_PREFIX)) {
      foreign += `${line}\n`;
      live.a += `${line}\n`;
      continue;
    }
    let value: unknown;
    try {
      value = JSON.parse(line.slice(FRAME_PREFIX.length));
    } catch {
      continue;
    }
    const stream = StreamFrame.safeParse(value);
    if (stream.success) {
      live[stream.data.s] += stream.data.d;
      live.a += stream.data.d;
      liveBytes[stream.data.s] += Buffer.byteLength(stream.data.d);
      continue;
    }
    const text = TextFrame.safeParse(value);
    if (text.success) {
      finals[text.data.s] = { text: text.data.d, total: text.data.n };
      continue;
    }
    const ex = ExitFrame.safeParse(value);
    if (ex.success) {
      exit = ex.data;
      continue;
    }
    const sf = SpawnFailedFrame.safeParse(value);
    if (sf.success) spawnFailed = sf.data.message;
  }
  const o = finals.o;
  const e = finals.e;
  const a = finals.a;
  const stdoutBytes = o ? o.total : liveBytes.o;
  const stderrBytes = (e ? e.total : liveBytes.e) + Buffer.byteLength(foreign);
  return {
    stdout: o ? o.text : live.o,
    stderr: (e ? e.text : live.e) + foreign,
    output: a ? a.text + foreign : live.a,
    stdoutBytes,
    stderrBytes,
    // Without the runner's counts a full live head is the only hint that more was written.
    stdoutTruncated: o ? o.total > cap : liveBytes.o >= Math.floor(cap / 2),
    stderrTruncated: e ? e.total > cap : liveBytes.e >= Math.floor(cap / 2),
    exit,
    spawnFailed,
    files: (exit?.files ?? []).map((f) => ({ path: f.p, size: f.n, ...(f.c !== undefined ? { content: f.c } : {}) })),
  };
}
