import { chmodSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createLocalExecutor } from '../../src/exec/local.js';
import { parseReady, READY_MARKER } from '../../src/exec/warm-pool.js';
import { waitFor } from './proc-helpers.js';

const workRoot = mkdtempSync(join(tmpdir(), 'repgen-warm-test-'));
chmodSync(workRoot, 0o755);
afterAll(() => rmSync(workRoot, { recursive: true, force: true }));

const WARM = 'warm start: the interpreter had imported torch and numpy in its sandbox before the run';
const script = (content: string, extra = {}) => ({ files: [{ path: 'main.py', content }], entry: 'main.py', ...extra });

/** Host pids of this file's pooled interpreters (their argv carries the warm source; their cwd is under our work root). */
function waitingInterpreters(): number[] {
  const pids: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const cmd = readFileSync(`/proc/${name}/cmdline`, 'utf8');
      if (!cmd.includes('REPGEN-WARM-READY') || cmd.includes('bwrap') || cmd.includes('launcher')) continue;
      if (readlinkSync(`/proc/${name}/cwd`).startsWith(workRoot)) pids.push(Number(name));
    } catch {
      // gone
    }
  }
  return pids;
}

describe('warm pool', () => {
  it('parses the ready line and nothing else', () => {
    expect(parseReady(`noise${READY_MARKER}1234\n`)).toBe(1234);
    expect(parseReady(`${READY_MARKER}12`)).toBeNull();
    expect(parseReady('REPGEN-WARM-READY 5\n')).toBeNull();
  });

  it('nothing carries over: a global, a monkeypatched torch, a file in /tmp or the work dir, an env change, a seedless RNG', async () => {
    const ex = createLocalExecutor({ workRoot, warmPool: 'always' });
    const first = await ex.run(
      script(`
import os, random, torch, builtins
builtins.REPGEN_LEAK = 1
torch.zeros = lambda *a, **k: "patched"
open("/tmp/leftover", "w").write("x")
open("leftover.txt", "w").write("x")
os.environ["REPGEN_LEAK"] = "1"
print(random.random(), torch.rand(1).item())
`),
    );
    expect(first.notes).toContain(WARM);
    expect(first.exitCode).toBe(0);
    const second = await ex.run(
      script(`
import os, random, torch, builtins
print(hasattr(builtins, "REPGEN_LEAK"), torch.zeros(1).tolist(), os.path.exists("/tmp/leftover"), os.path.exists("leftover.txt"), os.environ.get("REPGEN_LEAK"))
print(random.random(), torch.rand(1).item())
`),
    );
    expect(second.notes).toContain(WARM);
    const [line, rng] = second.stdout.split('\n');
    expect(line).toBe('False [0.0] False False None');
    // Fresh random state per run: not the continuation of the first run's generators.
    expect(rng).not.toBe(first.stdout.trim());
  });

  it('threads and OpenMP work in a warm run and do not hang it', async () => {
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
print(len(out) >= 4, torch.get_num_threads())
`,
        { limits: { timeoutMs: 60_000 } },
      ),
    );
    expect(r.notes).toContain(WARM);
    expect(r.timedOut).toBe(false);
    expect(r.stdout).toBe('True 2\n');
  });

  it('auto: the first run is cold and says why, the next one is warm, a killed pool entry is replaced', async () => {
    const ex = createLocalExecutor({ workRoot, warmPool: 'auto' });
    const req = script('import sys; print("ok", sys.argv[1:])', { args: ['x'] });
    const first = await ex.run(req);
    expect(first.notes?.[0]).toMatch(/^cold start: the pool had no interpreter ready/);
    expect(first.stdout).toBe("ok ['x']\n");
    // The pool warms one for the next run of this shape.
    expect(await ex.warmUp(req)).toBe(true);
    expect(waitingInterpreters()).toHaveLength(1);
    const warm = await ex.run(req);
    expect(warm.notes).toContain(WARM);
    expect(warm.stdout).toBe("ok ['x']\n");
    // Kill the replacement while it waits: the next run falls back to cold, and the pool is refilled.
    expect(await ex.warmUp(req)).toBe(true);
    for (const pid of waitingInterpreters()) process.kill(pid, 'SIGKILL');
    expect(await waitFor(() => waitingInterpreters().length === 0, 5000)).toBe(true);
    await new Promise((r) => setTimeout(r, 300));
    const afterKill = await ex.run(req);
    expect(afterKill.notes?.[0]).toMatch(/^cold start: /);
    expect(afterKill.stdout).toBe("ok ['x']\n");
    expect(await ex.warmUp(req)).toBe(true);
    const again = await ex.run(req);
    expect(again.notes).toContain(WARM);
    // close() stops the pool: the entry warming for a next run is gone.
    await ex.warmUp(req);
    await ex.close();
    expect(await waitFor(() => waitingInterpreters().length === 0, 5000)).toBe(true);
  });

  it('auto: a run whose entry is still warming waits for it instead of starting a cold interpreter beside it', async () => {
    const ex = createLocalExecutor({ workRoot, warmPool: 'auto' });
    const req = script('print("ok")', { seed: 7 });
    // Not awaited, as the pipeline does it: the run comes while the entry is still importing.
    const warming = ex.warmUp(req);
    const r = await ex.run(req);
    expect(r.notes, JSON.stringify(r.notes)).toContain(WARM);
    expect(r.stdout).toBe('ok\n');
    expect(await warming).toBe(true);
    // Another seed is another shape: its interpreter was started with another PYTHONHASHSEED.
    const other = await ex.run(script('print("ok")', { seed: 8 }));
    expect(other.notes?.[0]).toMatch(/^cold start: the pool had no interpreter ready/);
    await ex.close();
    expect(await waitFor(() => waitingInterpreters().length === 0, 5000)).toBe(true);
  });

  it('auto: two runs of one shape at once never share the one warm entry (each runs its own script, one of them cold)', async () => {
    const ex = createLocalExecutor({ workRoot, warmPool: 'auto' });
    const a = script('import time\ntime.sleep(0.3)\nprint("A" * 5000)', { seed: 11 });
    const b = script('import time\ntime.sleep(0.3)\nprint("B" * 5000)', { seed: 11 });
    // One entry warming, as the pipeline starts it; two runs of its shape arrive before it is ready (two jobs at once).
    const warming = ex.warmUp(a);
    const [ra, rb] = await Promise.all([ex.run(a), ex.run(b)]);
    expect(ra.stdout).toBe(`${'A'.repeat(5000)}\n`);
    expect(rb.stdout).toBe(`${'B'.repeat(5000)}\n`);
    expect(ra.exitCode).toBe(0);
    expect(rb.exitCode).toBe(0);
    const notes = [...(ra.notes ?? []), ...(rb.notes ?? [])];
    expect(notes.filter((n) => n === WARM)).toHaveLength(1);
    expect(notes.filter((n) => n.startsWith('cold start: '))).toHaveLength(1);
    await warming;
    await ex.close();
    expect(await waitFor(() => waitingInterpreters().length === 0, 15_000)).toBe(true);
  });

  it('requests the pool cannot serve run cold and say why', async () => {
    const ex = createLocalExecutor({ workRoot, warmPool: 'always' });
    const r = await ex.run(script('print(1)', { setup: ['true'] }));
    expect(r.notes?.[0]).toBe('cold start: setup commands run before the interpreter');
    expect(r.stdout).toBe('1\n');
  });
});
