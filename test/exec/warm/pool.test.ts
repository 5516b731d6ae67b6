import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createLocalExecutor } from '../../../src/exec/local/executor.js';
import { WARM_NOTE } from '../../../src/exec/warm/pool.js';
import { createFrameReader, MAX_FRAME_BYTES, READY_SYNC } from '../../../src/exec/warm/fork-server-frames.js';
import { waitFor } from '../../helpers/poll.js';
import { makeTempDir } from '../../helpers/temp-dir.js';

const workRoot = makeTempDir('repgen-warm-test-');
chmodSync(workRoot, 0o755);
afterAll(() => rmSync(workRoot, { recursive: true, force: true }));

const script = (content: string, extra = {}) => ({ files: [{ path: 'main.py', content }], entry: 'main.py', ...extra });

/**
 * Host pids of this file's fork servers (the server's source in their argv, a parent that is not one) and of the runs
 * forked from them, from one look at /proc: a test that waits on the runs acts on the servers of the same moment.
 */
function warmProcesses(): { servers: number[]; runs: number[] } {
  const procs: { pid: number; ppid: number; source: boolean }[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (!readlinkSync(`/proc/${name}/cwd`).startsWith(workRoot)) continue;
      const cmd = readFileSync(`/proc/${name}/cmdline`, 'utf8');
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      procs.push({
        pid: Number(name),
        ppid,
        source: cmd.includes('# repgen fork server') && !cmd.includes('bwrap') && !cmd.includes('launcher'),
      });
    } catch {
      // gone
    }
  }
  const sourced = new Set(procs.filter((p) => p.source).map((p) => p.pid));
  const serverPids = procs.filter((p) => p.source && !sourced.has(p.ppid)).map((p) => p.pid);
  // A forked run shows its own argv (the server writes it over its own), so it is found by its parent.
  return { servers: serverPids, runs: procs.filter((p) => serverPids.includes(p.ppid)).map((p) => p.pid) };
}
const servers = (): number[] => warmProcesses().servers;

function frame(kind: string, payload: Buffer | string): Buffer {
  const body = Buffer.from(payload);
  const head = Buffer.alloc(5);
  head.write(kind, 0, 'latin1');
  head.writeUInt32BE(body.length, 1);
  return Buffer.concat([head, body]);
}

describe('fork server frames', () => {
  it('reads frames split anywhere, and stops at the first thing that is not one', () => {
    const end = JSON.stringify({ exitCode: 3, signal: null, cpuMs: 12.5, maxRssKb: 2048, clean: true });
    // What an interpreter printed before the server's marker (a workspace's sitecustomize) is skipped, even a fake frame.
    const bytes = Buffer.concat([
      Buffer.from('hello from sitecustomize\n'),
      frame('O', 'not yet'),
      READY_SYNC,
      frame('R', '{"cpuMs": 900, "threads": 1}'),
      frame('O', 'out'),
      frame('E', 'err'),
      frame('X', end),
    ]);
    const reader = createFrameReader();
    const frames = [];
    for (let i = 0; i < bytes.length; i += 3) frames.push(...reader.push(bytes.subarray(i, i + 3)));
    expect(frames.map((f) => f.kind)).toEqual(['ready', 'stdout', 'stderr', 'end']);
    expect(frames[0]).toEqual({ kind: 'ready', ready: { cpuMs: 900, threads: 1, failed: [] } });
    expect(frames[1]).toEqual({ kind: 'stdout', data: Buffer.from('out') });
    expect(frames[3]).toMatchObject({ kind: 'end', end: { exitCode: 3, clean: true } });
  });

  it('a foreign kind, an oversized length or a malformed end frame is bad, and nothing is read after it', () => {
    for (const bad of [
      Buffer.from('hello world'),
      Buffer.concat([Buffer.from('O'), Buffer.from([0xff, 0xff, 0xff, 0xff])]),
      frame('X', '{"exitCode": "0"}'),
      frame('R', 'not json'),
    ]) {
      const reader = createFrameReader();
      const frames = reader.push(Buffer.concat([READY_SYNC, bad, frame('O', 'after')]));
      expect(frames.at(-1)?.kind).toBe('bad');
      expect(frames.some((f) => f.kind === 'stdout')).toBe(false);
      expect(reader.push(frame('O', 'more'))).toEqual([]);
    }
    expect(MAX_FRAME_BYTES).toBeGreaterThanOrEqual(65536);
  });
});

describe('warm pool (fork server)', () => {
  it('nothing carries over: a global, a monkeypatched torch, files, a daemon, SysV memory, an env change, the RNG', async () => {
    const ex = createLocalExecutor({ workRoot, warmPool: 'always' });
    const first = await ex.run(
      script(`
import os, random, subprocess, sys, torch, builtins, ctypes
builtins.REPGEN_LEAK = 1
torch.zeros = lambda *a, **k: "patched"
open("/tmp/leftover", "w").write("x")
open("/dev/shm/leftover", "w").write("x")
open("leftover.txt", "w").write("x")
open(os.path.join(os.path.dirname(os.getcwd()), "beside.txt"), "w").write("x")
os.environ["REPGEN_LEAK"] = "1"
libc = ctypes.CDLL(None)
assert libc.shmget(0x5eed, 4096, 0o1600) >= 0
# A daemon that outlives the script and writes later, unless it dies with the run.
subprocess.Popen([sys.executable, "-c", "import os, time; os.setsid(); time.sleep(1.5); open('/tmp/late', 'w').write('x')"], start_new_session=True)
print(random.random(), torch.rand(1).item())
`),
    );
    expect(first.notes).toContain(WARM_NOTE);
    expect(first.exitCode).toBe(0);
    const second = await ex.run(
      script(`
import os, random, time, torch, builtins
time.sleep(2)
others = [p for p in os.listdir("/proc") if p.isdigit() and int(p) not in (1, os.getpid(), os.getppid())]
seen = (hasattr(builtins, "REPGEN_LEAK"), torch.zeros(1).tolist(), os.listdir("/tmp"), os.listdir("/dev/shm"),
        os.path.exists("leftover.txt"), sorted(os.listdir("..")), os.environ.get("REPGEN_LEAK"), open("/proc/sysvipc/shm").read().count("\\n"), others)
print(seen)
print(random.random(), torch.rand(1).item())
`),
    );
    expect(second.notes).toContain(WARM_NOTE);
    expect(second.stderr).toBe('');
    const [line, rng] = second.stdout.split('\n');
    const cwd = second.stdout.match(/run-\d+/g) ?? [];
    expect(line).toMatch(/^\(False, \[0\.0\], \[[^\]]*\], \[\], False, \['out', 'run-2'\], None, 1, \[\]\)$/);
    expect(line).not.toContain('leftover');
    expect(line).not.toContain('late');
    expect(cwd).toEqual(['run-2']);
    // Fresh random state per run: not the continuation of the first run's generators.
    expect(rng).not.toBe(first.stdout.trim());
    await ex.close();
  });

  it('a run that starts threads and OpenMP work does not hang the server, and the next run is still warm', async () => {
    const ex = createLocalExecutor({ workRoot, warmPool: 'always' });
    const r = await ex.run(
      script(
        `
import threading, torch
torch.set_num_threads(2)
x = torch.randn(512, 512)
out = []
ts = [threading.Thread(target=lambda: out.append(float((x @ x).sum()))) for _ in range(4)]
[t.start() for t in ts]; [t.join() for t in ts]
t = threading.Thread(target=lambda: out.append(1)); t.start()  # non-daemon: waited for at exit
daemon = threading.Thread(target=lambda: __import__("time").sleep(60), daemon=True); daemon.start()
print(len(out) >= 4, torch.get_num_threads())
`,
        { limits: { timeoutMs: 60_000 } },
      ),
    );
    expect(r.notes).toContain(WARM_NOTE);
    expect(r.timedOut).toBe(false);
    expect(r.stdout).toBe('True 2\n');
    const next = await ex.run(
      script('import torch; print(torch.get_num_threads() >= 1, (torch.ones(64, 64) @ torch.ones(64, 64))[0, 0].item())'),
    );
    expect(next.notes).toContain(WARM_NOTE);
    expect(next.stdout).toBe('True 64.0\n');
    await ex.close();
  });

  it('a run cannot forge the end of its run or take the pool down: a server killed mid-run is replaced and the run comes back cold', async () => {
    const ex = createLocalExecutor({ workRoot, warmPool: 'auto' });
    // Bytes shaped like the server's frames on the run's own stdout are the run's output, nothing more.
    const fake = String.raw`X\x00\x00\x00\x4f{"exitCode": 0, "signal": null, "cpuMs": 1, "maxRssKb": 1, "clean": true}`;
    const forged = await ex.run(script(`import sys\nsys.stdout.buffer.write(b'${fake}')\nsys.stdout.flush()\nraise SystemExit(5)`));
    expect(forged.notes).toContain(WARM_NOTE);
    expect(forged.exitCode).toBe(5);
    expect(forged.stdout).toContain('"clean": true');
    // The server's memory, environment and fds are out of the run's reach (it is not dumpable), though the run has its uid.
    const peek = await ex.run(
      script(`
import os
ppid = os.getppid()
out = []
for path in ("/proc/%d/mem" % ppid, "/proc/%d/environ" % ppid, "/proc/%d/fd/0" % ppid):
    try:
        open(path, "rb").read(1)
        out.append("open")
    except OSError as e:
        out.append(type(e).__name__)
print(os.stat("/proc/%d" % ppid).st_uid == os.getuid(), out)
`),
    );
    expect(peek.notes).toContain(WARM_NOTE);
    expect(peek.stdout).toMatch(/^(True|False) \['PermissionError', 'PermissionError', 'PermissionError'\]\n$/);
    // The script kills the process it was forked from: it had started, so it is not run again (a cold retry would run
    // it twice); the result says the sandbox failed.
    const killer = await ex.run(script('import os, signal\nos.kill(os.getppid(), signal.SIGKILL)\nprint("survived")'));
    expect(killer.notes?.[0]).toBe(WARM_NOTE);
    expect(killer.notes?.some((n) => n.startsWith('cold start'))).toBe(false);
    expect(killer.infra?.kind).toBe('sandbox_failed');
    expect(killer.infra?.message).toMatch(
      /^the warm interpreter died during the run \(.*\) after it had started the script: .*not run again/,
    );
    expect(killer.stdout).not.toContain('survived');
    expect(killer.exitCode).toBeNull();
    // Killed from outside while a run is in it: the same, the script ran once.
    const slow = ex.run(script('import time\nprint("start", flush=True)\ntime.sleep(3)\nprint("done")'));
    const serving = await waitFor(
      () => {
        const seen = warmProcesses();
        return seen.runs.length >= 1 ? seen.servers : null;
      },
      { what: 'a warm server serving runs' },
    );
    for (const pid of serving) process.kill(pid, 'SIGKILL');
    const afterKill = await slow;
    expect(afterKill.notes?.some((n) => n.startsWith('cold start'))).toBe(false);
    expect(afterKill.infra?.kind).toBe('sandbox_failed');
    expect(afterKill.stdout).not.toContain('done');
    // The next run gets a new server.
    const again = await ex.run(script('print("ok")'));
    expect(again.notes).toContain(WARM_NOTE);
    expect(again.stdout).toBe('ok\n');
    await ex.close();
    await waitFor(() => servers().length === 0, { what: 'every warm server gone' });
  });

  it('auto: runs of every seed share one server; a warmUp registers before it resolves; close() stops it', async () => {
    const ex = createLocalExecutor({ workRoot, warmPool: 'auto' });
    // Not awaited, as the pipeline does it: the run comes while the server is still importing.
    const warming = ex.warmUp(script('print(1)', { seed: 7 }));
    const r = await ex.run(script('import os; print(os.environ["REPGEN_SEED"], os.environ["PYTHONHASHSEED"])', { seed: 7 }));
    expect(r.notes, JSON.stringify(r.notes)).toContain(WARM_NOTE);
    expect(r.stdout).toBe('7 7\n');
    expect(await warming).toBe(true);
    const other = await ex.run(script('import os; print(os.environ["REPGEN_SEED"])', { seed: 8 }));
    expect(other.notes).toContain(WARM_NOTE);
    expect(other.notes).toContain("string hashing keeps the warm interpreter's seed: PYTHONHASHSEED=8 applies when an interpreter starts");
    expect(other.stdout).toBe('8\n');
    expect(servers()).toHaveLength(1);
    await ex.close();
    await waitFor(() => servers().length === 0, { what: 'every warm server gone' });
  });

  it('two runs of one shape at once each get a server of their own, and each its own output', async () => {
    const ex = createLocalExecutor({ workRoot, warmPool: 'auto' });
    const a = script('import time\ntime.sleep(0.3)\nprint("A" * 5000)', { seed: 11 });
    const b = script('import time\ntime.sleep(0.3)\nprint("B" * 5000)', { seed: 12 });
    const [ra, rb] = await Promise.all([ex.run(a), ex.run(b)]);
    expect(ra.stdout).toBe(`${'A'.repeat(5000)}\n`);
    expect(rb.stdout).toBe(`${'B'.repeat(5000)}\n`);
    expect([ra.exitCode, rb.exitCode]).toEqual([0, 0]);
    expect([...(ra.notes ?? []), ...(rb.notes ?? [])].filter((n) => n === WARM_NOTE)).toHaveLength(2);
    expect(servers()).toHaveLength(2);
    await ex.close();
    await waitFor(() => servers().length === 0, { what: 'every warm server gone' });
  });

  it("a run's large buffers go on transparent huge pages where the kernel offers them on request, forked or cold", async () => {
    // 64 MB through malloc (mmap'd, past glibc's threshold), one byte written per 4 KiB page; then what of it the
    // kernel backs with huge pages. glibc.malloc.hugetlb=1 asks for them (madvise); without it, under the kernel's
    // usual `madvise` mode, none.
    const touch = [
      'n = 64 << 20',
      'b = bytearray(n)',
      "b[::4096] = b'\\x01' * (n // 4096)",
      "print([int(l.split()[1]) for l in open('/proc/self/smaps_rollup') if l.startswith('AnonHugePages:')][0])",
    ].join('\n');
    // A kernel without THP has no such file: then no huge pages, and the runs must still work.
    const thp = '/sys/kernel/mm/transparent_hugepage/enabled';
    const mode = existsSync(thp) ? /\[(\w+)\]/.exec(readFileSync(thp, 'utf8'))?.[1] : undefined;
    const ex = createLocalExecutor({ workRoot, warmPool: 'always' });
    const cold = createLocalExecutor({ workRoot, warmPool: 'off' });
    try {
      const forked = await ex.run(script(touch));
      const started = await cold.run(script(touch));
      expect(forked.notes).toContain(WARM_NOTE);
      expect(started.notes ?? []).not.toContain(WARM_NOTE);
      for (const r of [forked, started]) {
        expect(r.exitCode, r.stderr).toBe(0);
        const hugeKb = Number(r.stdout.trim());
        if (mode === 'always' || mode === 'madvise') expect(hugeKb).toBeGreaterThanOrEqual(32 * 1024);
        else expect(hugeKb).toBe(0);
      }
      // The request's own env still has the last word (a report about memory use may want glibc's defaults).
      const plain = await cold.run(script(touch, { env: { GLIBC_TUNABLES: '' } }));
      if (mode === 'madvise') expect(Number(plain.stdout.trim())).toBe(0);
    } finally {
      await ex.close();
      await cold.close();
    }
  });

  it('a run waiting on an importing server takes a ready one that frees first; the other finishes its import for later', async () => {
    const ex = createLocalExecutor({ workRoot, warmPool: 'always' });
    try {
      const cwd = 'import os\nprint(os.getcwd())';
      // Warmed, not run: no run of this shape has ended yet, so a run that finds the server busy starts its own.
      expect(await ex.warmUp(script(cwd))).toBe(true);
      // One takes the one ready server; the other starts another, whose torch import (seconds) outlasts the short
      // run (0.1 s): it is served by the first server instead, in that server's next run dir.
      const [short, next] = await Promise.all([ex.run(script(`import time\ntime.sleep(0.1)\n${cwd}`)), ex.run(script(cwd))]);
      const dirOf = (r: { stdout: string }): string => r.stdout.trim().replace(/\/run-\d+$/, '');
      expect([short.exitCode, next.exitCode]).toEqual([0, 0]);
      expect(next.notes).toContain(WARM_NOTE);
      expect(dirOf(next)).toBe(dirOf(short));
      expect(new Set([short.stdout, next.stdout]).size).toBe(2);
      // The server started for it is not lost: once its import ends (a pair of runs taking one server each tells),
      // two runs go at once.
      await waitFor(() => servers().length === 2, { what: 'two warm servers' });
      let apart = false;
      const pair = `import time\ntime.sleep(0.5)\n${cwd}`;
      for (let i = 0; i < 20 && !apart; i++)
        apart = new Set((await Promise.all([ex.run(script(pair)), ex.run(script(pair))])).map(dirOf)).size === 2;
      expect(apart).toBe(true);
      expect(servers()).toHaveLength(2);
    } finally {
      await ex.close();
    }
  });

  it('a run that finds its server busy waits for it where runs of its shape end sooner than an import: no second server', async () => {
    const ex = createLocalExecutor({ workRoot, warmPool: 'auto' });
    try {
      const cwd = 'import os\nprint(os.getcwd())';
      // The confirmation's case: a short run has ended on the one server, then two seeds come at once.
      const first = await ex.run(script(cwd, { seed: 1 }));
      expect(first.notes).toContain(WARM_NOTE);
      const [a, b] = await Promise.all([
        ex.run(script(`import time\ntime.sleep(0.1)\n${cwd}`, { seed: 2 })),
        ex.run(script(cwd, { seed: 3 })),
      ]);
      const dirOf = (r: { stdout: string }): string => r.stdout.trim().replace(/\/run-\d+$/, '');
      expect([a.exitCode, b.exitCode]).toEqual([0, 0]);
      for (const r of [a, b]) expect(r.notes).toContain(WARM_NOTE);
      expect(new Set([first, a, b].map(dirOf)).size).toBe(1);
      // No import was started for the second seed (before, a second server imported torch and was never used).
      expect(servers()).toHaveLength(1);
    } finally {
      await ex.close();
    }
  });

  it('a timed-out run kills its server; the next run gets a fresh one', async () => {
    const ex = createLocalExecutor({ workRoot, warmPool: 'always' });
    // The limit counts from the request: a server started by the run would spend it importing torch.
    expect(await ex.warmUp(script('print(1)', { limits: { timeoutMs: 1500 } }))).toBe(true);
    const r = await ex.run(script('import time\nprint("start", flush=True)\ntime.sleep(30)', { limits: { timeoutMs: 1500 } }));
    expect(r.timedOut).toBe(true);
    expect(r.signal).toBe('SIGKILL');
    expect(r.stdout).toBe('start\n');
    expect(r.notes).toContain('killed after the 1500 ms wall-clock limit');
    const next = await ex.run(script('print("fresh")'));
    expect(next.notes).toContain(WARM_NOTE);
    expect(next.stdout).toBe('fresh\n');
    await ex.close();
  });

  it('a stopped server does not stretch the limit: it counts from the request, and the script that never started is not said to have run', async () => {
    const ex = createLocalExecutor({ workRoot, warmPool: 'always' });
    try {
      expect(await ex.warmUp(script('print(1)'))).toBe(true);
      for (const pid of servers()) process.kill(pid, 'SIGSTOP');
      const r = await ex.run(script('print("ran")', { limits: { timeoutMs: 2000 } }));
      expect(r.timedOut).toBe(true);
      expect(r.stdout).toBe('');
      expect(r.durationMs).toBeGreaterThanOrEqual(2000);
      expect(r.notes).toContain('killed after the 2000 ms wall-clock limit');
      expect(r.notes).toContain('the warm interpreter had not started the script');
      expect(r.notes?.some((n) => n.startsWith('cold start'))).toBe(false);
    } finally {
      await ex.close();
    }
  });

  it("ps shows a forked run's own command line, as a cold run's", async () => {
    const ex = createLocalExecutor({ workRoot, warmPool: 'always' });
    const r = await ex.run(
      script('print(open("/proc/self/cmdline", "rb").read().rstrip(b"\\0").split(b"\\0")[1:])', { args: ['a b', 'c'] }),
    );
    expect(r.notes).toContain(WARM_NOTE);
    expect(r.stdout).toBe("[b'main.py', b'a b', b'c']\n");
    await ex.close();
  });

  it('one server serves many runs without piling up listeners on its pipes (no MaxListenersExceededWarning)', async () => {
    const ex = createLocalExecutor({ workRoot, warmPool: 'always' });
    const warnings: string[] = [];
    const onWarning = (w: Error): void => void warnings.push(w.name);
    process.on('warning', onWarning);
    try {
      for (let i = 0; i < 12; i++) expect((await ex.run(script(`print(${i})`))).stdout).toBe(`${i}\n`);
      await new Promise((r) => setTimeout(r, 50));
      expect(warnings).toEqual([]);
      expect(servers()).toHaveLength(1);
    } finally {
      process.off('warning', onWarning);
      await ex.close();
    }
  });

  it('a workspace whose sitecustomize prints when an interpreter starts still gets forked runs', async () => {
    const ws = mkdtempSync(join(workRoot, 'ws-'));
    chmodSync(ws, 0o755);
    writeFileSync(join(ws, 'sitecustomize.py'), 'print("hello from sitecustomize")\n');
    chmodSync(join(ws, 'sitecustomize.py'), 0o644);
    const ex = createLocalExecutor({ workRoot, warmPool: 'always' });
    const r = await ex.run(script('print("run")', { workspace: { hostPath: ws } }));
    expect(r.notes).toContain(WARM_NOTE);
    expect(r.stdout).toBe('run\n');
    await ex.close();
  });

  it('requests the pool cannot serve run cold and say why', async () => {
    const ex = createLocalExecutor({ workRoot, warmPool: 'always' });
    const r = await ex.run(script('print(1)', { setup: ['true'] }));
    expect(r.notes?.[0]).toBe('cold start: setup commands run before the interpreter');
    expect(r.stdout).toBe('1\n');
  });
});

describe("imports ahead: a server imports a run's leading imports before forking it", () => {
  /** A workspace of small modules, each with one behaviour at import. */
  function workspace(): string {
    const ws = mkdtempSync(join(workRoot, 'ws-ahead-'));
    chmodSync(ws, 0o755);
    const modules: Record<string, string> = {
      // Prints, records the pid that imported it, and leaves a mark on builtins.
      'wsmod.py':
        'import os, builtins, sys\nprint("wsmod imported")\nprint("wsmod warns", file=sys.stderr)\nPID = os.getpid()\nbuiltins.REPGEN_WSMOD = True\n',
      'threaded.py': 'import threading, time\nthreading.Thread(target=time.sleep, args=(30,), daemon=True).start()\nVALUE = 7\n',
      'broken.py': 'print("half")\nraise ValueError("broken at import")\n',
      'killer.py': 'import os\nos._exit(3)\n',
      'helper.py': 'WHO = "workspace"\n',
      // Hangs when a fork server imports it ahead (its command line holds the server's source), not in a cold run.
      'hangs.py': 'import time\nif b"repgen fork server" in open("/proc/self/cmdline", "rb").read():\n    time.sleep(300)\n',
      // A package whose import fails halfway, as a 2019 project on a numpy without np.float: a submodule is in,
      // then the package's own __init__ raises. Imported again over the half-import, it fails differently.
      'halfpkg/__init__.py': 'from .sub import pair\nA, B = pair()\nimport numpy as np\nFLOAT = np.float\n',
      'halfpkg/sub.py': 'CALLS = []\ndef pair():\n    CALLS.append(1)\n    return (1, 2) if len(CALLS) == 1 else None\n',
    };
    mkdirSync(join(ws, 'halfpkg'));
    chmodSync(join(ws, 'halfpkg'), 0o755);
    for (const [name, text] of Object.entries(modules)) {
      writeFileSync(join(ws, name), text);
      chmodSync(join(ws, name), 0o644);
    }
    return ws;
  }
  const AHEAD = "also imported ahead in the warm interpreter, as the script's first lines do";

  it('a run gets its leading imports done in the server, with what they printed, as a cold run sees it', async () => {
    const ws = workspace();
    const ex = createLocalExecutor({ workRoot, warmPool: 'always' });
    try {
      const cold = createLocalExecutor({ workRoot, warmPool: 'off' });
      const body = 'import wsmod\nimport os\nprint(wsmod.PID != os.getpid())\n';
      const reference = await cold.run(script(body, { workspace: { hostPath: ws } }));
      expect(reference.stdout).toBe('wsmod imported\nFalse\n');
      const first = await ex.run(script(body, { workspace: { hostPath: ws } }));
      const second = await ex.run(script(body, { workspace: { hostPath: ws } }));
      for (const r of [first, second]) {
        expect(r.notes).toContain(WARM_NOTE);
        expect(r.notes).toContain(`${AHEAD}: wsmod`);
        // Imported by the server (another pid), its print shown once, at the start, as in the cold run.
        expect(r.stdout).toBe('wsmod imported\nTrue\n');
        expect(r.stderr).toBe(reference.stderr);
        expect(r.stderr).toBe('wsmod warns\n');
      }
      expect(servers()).toHaveLength(1);
      // A run that does not import it is never served by that server: nothing of wsmod reaches it.
      const other = await ex.run(
        script('import builtins, sys\nprint(hasattr(builtins, "REPGEN_WSMOD"), "wsmod" in sys.modules)\n', { workspace: { hostPath: ws } }),
      );
      expect(other.notes).toContain(WARM_NOTE);
      expect(other.notes?.some((n) => n.startsWith(AHEAD))).toBe(false);
      expect(other.stdout).toBe('False False\n');
      expect(servers()).toHaveLength(2);
    } finally {
      await ex.close();
    }
  });

  it('an import that leaves a thread running sends that run cold, and is not imported ahead again', async () => {
    const ws = workspace();
    const ex = createLocalExecutor({ workRoot, warmPool: 'always' });
    try {
      const body = 'import threaded\nprint(threaded.VALUE)\n';
      const first = await ex.run(script(body, { workspace: { hostPath: ws } }));
      expect(first.notes?.[0]).toMatch(/^cold start: importing threaded ahead left 2 threads/);
      expect(first.stdout).toBe('7\n');
      const again = await ex.run(script(body, { workspace: { hostPath: ws } }));
      expect(again.notes).toContain(WARM_NOTE);
      expect(again.notes?.some((n) => n.startsWith(AHEAD))).toBe(false);
      expect(again.stdout).toBe('7\n');
    } finally {
      await ex.close();
    }
  });

  it('an import that fails halfway in the server retires it: the run goes cold and shows the true error, as later runs do', async () => {
    const ws = workspace();
    const ex = createLocalExecutor({ workRoot, warmPool: 'always' });
    const cold = createLocalExecutor({ workRoot, warmPool: 'off' });
    try {
      const body = 'import halfpkg\nprint("after")\n';
      const reference = await cold.run(script(body, { workspace: { hostPath: ws } }));
      expect(reference.stderr).toContain("AttributeError: module 'numpy' has no attribute 'float'");
      const first = await ex.run(script(body, { workspace: { hostPath: ws } }));
      expect(first.notes?.[0]).toMatch(/^cold start: importing halfpkg ahead failed/);
      const again = await ex.run(script(body, { workspace: { hostPath: ws } }));
      expect(again.notes).toContain(WARM_NOTE);
      expect(again.notes?.some((n) => n.startsWith(AHEAD))).toBe(false);
      for (const r of [first, again]) {
        expect(r.exitCode).toBe(1);
        expect(r.stdout).toBe(reference.stdout);
        expect(r.stderr).toContain("AttributeError: module 'numpy' has no attribute 'float'");
        expect(r.stderr).not.toContain('cannot unpack');
      }
      expect(servers()).toHaveLength(1);
    } finally {
      await ex.close();
    }
  });

  it('an import that fails fails the run as it does cold; one that kills the server sends the run cold', async () => {
    const ws = workspace();
    const ex = createLocalExecutor({ workRoot, warmPool: 'always' });
    const cold = createLocalExecutor({ workRoot, warmPool: 'off' });
    try {
      const broken = 'import broken\nprint("after")\n';
      const reference = await cold.run(script(broken, { workspace: { hostPath: ws } }));
      for (let i = 0; i < 2; i++) {
        const r = await ex.run(script(broken, { workspace: { hostPath: ws } }));
        expect(r.notes).toContain(
          i === 0
            ? 'cold start: importing broken ahead failed (ValueError: broken at import): the warm interpreter was retired'
            : WARM_NOTE,
        );
        expect(r.exitCode).toBe(1);
        expect(r.stdout).toBe(reference.stdout);
        expect(r.stdout).toBe('half\n');
        expect(r.stderr.replace(/run-\d+/g, '')).toContain('ValueError: broken at import');
        expect(r.stderr).toMatch(/broken\.py", line 2/);
      }
      const killer = 'import killer\nprint("after")\n';
      const first = await ex.run(script(killer, { workspace: { hostPath: ws } }));
      expect(first.notes?.[0]).toMatch(/^cold start: the warm interpreter died or took over \d+ ms importing killer ahead/);
      expect(first.exitCode).toBe(3);
      const second = await ex.run(script(killer, { workspace: { hostPath: ws } }));
      expect(second.notes).toContain(WARM_NOTE);
      expect(second.exitCode).toBe(3);
    } finally {
      await ex.close();
    }
  });

  it('a server whose own imports fail (a workspace numpy that raises) never forks: runs of its shape go cold', async () => {
    const ws = mkdtempSync(join(workRoot, 'ws-badnumpy-'));
    mkdirSync(join(ws, 'numpy'));
    writeFileSync(join(ws, 'numpy', '__init__.py'), 'import json\nraise ImportError("no numpy here")\n');
    for (const p of [ws, join(ws, 'numpy')]) chmodSync(p, 0o755);
    chmodSync(join(ws, 'numpy', '__init__.py'), 0o644);
    const ex = createLocalExecutor({ workRoot, warmPool: 'always' });
    try {
      for (let i = 0; i < 2; i++) {
        const r = await ex.run(script('import numpy\n', { workspace: { hostPath: ws } }));
        expect(r.notes?.[0]).toBe('cold start: the warm interpreter could not import numpy: ImportError: no numpy here');
        expect(r.stderr).toContain('ImportError: no numpy here');
      }
      expect(servers()).toHaveLength(0);
    } finally {
      await ex.close();
    }
  });

  it('an import ahead that hangs costs the run part of its limit, not more: the cold start gets what is left', async () => {
    const ws = workspace();
    const ex = createLocalExecutor({ workRoot, warmPool: 'auto' });
    try {
      const body = 'import hangs\nimport time\nprint("start", flush=True)\ntime.sleep(20)\nprint("done")\n';
      expect(await ex.warmUp(script(body, { workspace: { hostPath: ws } }))).toBe(true);
      const r = await ex.run(script(body, { workspace: { hostPath: ws }, limits: { timeoutMs: 8000 } }));
      expect(r.notes?.[0]).toMatch(/^cold start: the warm interpreter died or took over \d+ ms importing hangs, time ahead/);
      expect(r.timedOut).toBe(true);
      expect(r.notes).toContain('killed after the 8000 ms wall-clock limit');
      expect(r.durationMs).toBeGreaterThanOrEqual(8000);
      expect(r.stdout).not.toContain('done');
    } finally {
      await ex.close();
    }
  });

  it("a run's own module is its own, never the server's of that name", async () => {
    const ws = workspace();
    const ex = createLocalExecutor({ workRoot, warmPool: 'always' });
    try {
      const files = [
        { path: 'main.py', content: 'import helper\nprint(helper.WHO)\n' },
        { path: 'helper.py', content: 'WHO = "run"\n' },
      ];
      const own = await ex.run({ files, entry: 'main.py', workspace: { hostPath: ws } });
      expect(own.notes).toContain(WARM_NOTE);
      expect(own.stdout).toBe('run\n');
      const viaWs = await ex.run(script('import helper\nprint(helper.WHO)\n', { workspace: { hostPath: ws } }));
      expect(viaWs.stdout).toBe('workspace\n');
      // A run whose own torch.py shadows the server's torch cannot be forked from it.
      const shadow = await ex.run({
        files: [
          { path: 'main.py', content: 'import torch\nprint(torch.WHO)\n' },
          { path: 'torch.py', content: 'WHO = "fake torch"\n' },
        ],
        entry: 'main.py',
      });
      expect(shadow.notes?.[0]).toMatch(/^cold start: the run's own files shadow torch/);
      expect(shadow.stdout).toBe('fake torch\n');
    } finally {
      await ex.close();
    }
  });
});
