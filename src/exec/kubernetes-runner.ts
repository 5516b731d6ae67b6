import { z } from 'zod';
import type { OutputFile } from './types.js';

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
    kept = {"o": 0, "e": 0}
    total = {"o": 0, "e": 0}
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

    def run(argv, phase):
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
                stream = key.data
                if not chunk:
                    sel.unregister(key.fileobj)
                    open_streams -= 1
                    continue
                total[stream] += len(chunk)
                room = cap - kept[stream]
                if room <= 0:
                    continue
                part = chunk[:room]
                kept[stream] += len(part)
                text = decoders[stream].decode(part)
                if text:
                    emit({"s": stream, "d": text})
        if timed_out:
            # Drain what is already in the pipes without blocking; the group is dead.
            for key in list(sel.get_map().values()):
                try:
                    os.set_blocking(key.fileobj.fileno(), False)
                    chunk = os.read(key.fileobj.fileno(), 65536) or b""
                except OSError:
                    chunk = b""
                if chunk:
                    total[key.data] += len(chunk)
                    room = max(0, cap - kept[key.data])
                    part = chunk[:room]
                    kept[key.data] += len(part)
                    if part:
                        emit({"s": key.data, "d": decoders[key.data].decode(part)})
        sel.close()
        rc = proc.wait()
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        return rc, timed_out

    rc, timed_out = 0, False
    for i, cmd in enumerate(req["setup"]):
        rc, timed_out = run(["sh", "-c", cmd], "setup")
        if rc != 0 or timed_out:
            emit({"t": "setup_failed", "i": i, "code": rc})
            break
    else:
        argv = [req["interpreter"], req["entry"]] + list(req["args"])
        try:
            rc, timed_out = run(argv, "script")
        except OSError as err:
            emit({"s": "e", "d": "repgen runner: cannot start %s: %s\n" % (argv[0], err)})
            rc = 127

    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    files = []
    for root, _dirs, names in os.walk(out_dir):
        for name in sorted(names):
            if len(files) >= max_files:
                break
            full = os.path.join(root, name)
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
        sig = signal.Signals(-rc).name
        code = None
    emit({"t": "exit", "code": code, "signal": sig, "timedOut": timed_out,
          "cpuMs": int((usage.ru_utime + usage.ru_stime) * 1000), "maxrssKb": usage.ru_maxrss,
          "durationMs": int((time.monotonic() - started) * 1000), "bytes": total, "files": files})
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

const StreamFrame = z.object({ s: z.enum(['o', 'e']), d: z.string() });
const SetupFailedFrame = z.object({ t: z.literal('setup_failed'), i: z.number(), code: z.number() });

export interface RunnerLog {
  stdout: string;
  stderr: string;
  output: string;
  /** Bytes the script wrote (from the exit frame when there is one, else what the log carried). */
  stdoutBytes: number;
  stderrBytes: number;
  stdoutTruncated: boolean;
  stderrTruncated: boolean;
  exit: ExitFrame | null;
  setupFailed: { index: number; code: number } | null;
  files: OutputFile[];
}

/** Appends to a string while keeping at most `cap` UTF-8 bytes of it. */
class CappedText {
  text = '';
  bytes = 0;
  truncated = false;
  constructor(private readonly cap: number) {}
  add(piece: string): void {
    if (this.bytes >= this.cap) {
      if (piece) this.truncated = true;
      return;
    }
    const buf = Buffer.from(piece, 'utf8');
    if (this.bytes + buf.length <= this.cap) {
      this.text += piece;
      this.bytes += buf.length;
      return;
    }
    const room = this.cap - this.bytes;
    // Cut at a character boundary: drop continuation bytes at the cut.
    let end = room;
    while (end > 0 && ((buf[end] ?? 0) & 0xc0) === 0x80) end -= 1;
    this.text += buf.subarray(0, end).toString('utf8');
    this.bytes = this.cap;
    this.truncated = true;
  }
}

/**
 * Decodes a pod log written by the runner. Pure: the log text in, the streams and the exit frame out.
 * A truncated last line (the log was cut) is dropped; foreign lines count as stderr.
 */
export function parseRunnerLog(log: string, cap: number): RunnerLog {
  const out = new CappedText(cap);
  const err = new CappedText(cap);
  const all = new CappedText(cap);
  let seenOut = 0;
  let seenErr = 0;
  let foreign = 0;
  let exit: ExitFrame | null = null;
  let setupFailed: RunnerLog['setupFailed'] = null;
  const lines = log.split('\n');
  const complete = log.endsWith('\n') ? lines.slice(0, -1) : lines;
  for (const line of complete) {
    if (!line.startsWith(FRAME_PREFIX)) {
      const text = `${line}\n`;
      foreign += Buffer.byteLength(text);
      seenErr += Buffer.byteLength(text);
      err.add(text);
      all.add(text);
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
      const n = Buffer.byteLength(stream.data.d);
      if (stream.data.s === 'o') {
        seenOut += n;
        out.add(stream.data.d);
      } else {
        seenErr += n;
        err.add(stream.data.d);
      }
      all.add(stream.data.d);
      continue;
    }
    const ex = ExitFrame.safeParse(value);
    if (ex.success) {
      exit = ex.data;
      continue;
    }
    const sf = SetupFailedFrame.safeParse(value);
    if (sf.success) setupFailed = { index: sf.data.i, code: sf.data.code };
  }
  const stdoutBytes = exit ? exit.bytes.o : seenOut;
  const stderrBytes = exit ? exit.bytes.e + foreign : seenErr;
  return {
    stdout: out.text,
    stderr: err.text,
    output: all.text,
    stdoutBytes,
    stderrBytes,
    stdoutTruncated: out.truncated || stdoutBytes > out.bytes,
    stderrTruncated: err.truncated || stderrBytes > err.bytes,
    exit,
    setupFailed,
    files: (exit?.files ?? []).map((f) => ({ path: f.p, size: f.n, ...(f.c !== undefined ? { content: f.c } : {}) })),
  };
}
