import { randomUUID } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SetupError } from '../../../src/errors.js';
import { InterpreterNotFoundError, InvalidRunRequestError } from '../../../src/exec/errors.js';
import { createLocalExecutor } from '../../../src/exec/local/executor.js';
import { WARM_NOTE } from '../../../src/exec/warm/pool.js';
import type { ScriptExecutor } from '../../../src/exec/types.js';
import { fixtureFile } from '../executor-conformance.js';
import { isAlive, killAllWith, livePidsWith } from '../proc-helpers.js';
import { waitFor, type WaitOptions } from '../../helpers/poll.js';
import { makeTempDir } from '../../helpers/temp-dir.js';

const workRoot = makeTempDir('repgen-local-test-');
// The sandbox runs as an unprivileged uid when the tests run as root: it must be able to reach its work dirs.
chmodSync(workRoot, 0o755);
afterAll(() => rmSync(workRoot, { recursive: true, force: true }));

/**
 * Runs the fork-and-sleep fixture until its timeout while watching /proc from outside: every process it started
 * (found by a unique marker in their command lines) must be alive during the run and dead afterwards.
 */
async function expectTreeKilled(executor: ScriptExecutor, stopWith: 'timeout' | 'abort', test: WaitOptions['test']): Promise<void> {
  const marker = `repgen-fork-${randomUUID()}`;
  const controller = new AbortController();
  const run = executor.run(
    {
      files: [fixtureFile('sandbox-fork-and-sleep.py')],
      entry: 'sandbox-fork-and-sleep.py',
      args: [marker],
      // Room for a busy machine to start the four processes before the time limit ends the run.
      limits: { timeoutMs: stopWith === 'timeout' ? 10_000 : 60_000 },
    },
    controller.signal,
  );
  // Every live process with the marker (bwrap and the launcher carry the script's argv too), read once: the wait
  // returns this very list once it holds the script, its two children and the orphaned grandchild. A second look
  // after the wait would read other moments' processes (on a busy machine, a different set).
  const treeOnceStarted = (): number[] | null => {
    const all = livePidsWith(marker);
    const script = all.filter((pid) => readCmdline(pid).startsWith('/usr/bin/python3 sandbox-fork-and-sleep.py'));
    // Exactly 4 once the short-lived middle process of the double fork has exited.
    return script.length === 4 ? all : null;
  };
  try {
    const seen = await waitFor(treeOnceStarted, { what: 'the four processes of the script', test });
    if (stopWith === 'abort') controller.abort();
    const r = await run;
    if (stopWith === 'timeout') expect(r.timedOut).toBe(true);
    else expect(r.infra?.kind).toBe('aborted');
    // What the wait saw, and whatever else carries the marker, dead: in one probe.
    await waitFor(() => seen.every((pid) => !isAlive(pid)) && livePidsWith(marker).length === 0, {
      what: 'every process of the tree dead',
      test,
    });
  } finally {
    killAllWith(marker);
  }
}

/** A script that starts a daemon (setsid, double fork) and exits at once: the daemon must not outlive the run. */
async function expectLeftoversKilled(executor: ScriptExecutor, test: WaitOptions['test']): Promise<void> {
  const marker = `repgen-daemon-${randomUUID()}`;
  const content = [
    'import os, sys, time',
    'if os.fork() == 0:',
    '    os.setsid()',
    '    if os.fork() == 0:',
    '        time.sleep(600)',
    '    os._exit(0)',
    'time.sleep(0.3)',
    'print("parent done", sys.argv[1])',
  ].join('\n');
  try {
    const r = await executor.run({ files: [{ path: 'daemon.py', content }], entry: 'daemon.py', args: [marker] });
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toBe(`parent done ${marker}\n`);
    await waitFor(() => livePidsWith(marker).length === 0, { what: 'no process left with the marker', test });
  } finally {
    killAllWith(marker);
  }
}

function readCmdline(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
  } catch {
    return '';
  }
}

describe('local executor (auto sandbox)', () => {
  const executor = createLocalExecutor({ workRoot });

  it('prepare() does the host checks every run waits on (sandbox probe, launcher) before any run is asked for', async () => {
    const root = mkdtempSync(join(workRoot, 'prepare-'));
    chmodSync(root, 0o755);
    const ex = createLocalExecutor({ workRoot: root, launcher: 'native' });
    try {
      expect(readdirSync(root)).toEqual([]);
      await ex.prepare();
      // The native launcher is built under the work root by the checks; the sandbox probe's dir came and went.
      expect(readdirSync(root).some((n) => n.startsWith('repgen-launcher-'))).toBe(true);
      expect(readdirSync(root).some((n) => n.startsWith('repgen-probe-'))).toBe(false);
    } finally {
      await ex.close();
    }
  });

  it('close() waits for the host checks prepare() started, so their probe leaves no dir behind', async () => {
    const root = mkdtempSync(join(workRoot, 'prepare-close-'));
    chmodSync(root, 0o755);
    const ex = createLocalExecutor({ workRoot: root, launcher: 'native' });
    // As a run that ends before it needs the executor: the checks are started, never awaited, then the run closes.
    void ex.prepare();
    await ex.close();
    // The checks ran to their end before close() returned (the launcher they build is there), the probe's dir gone.
    expect(readdirSync(root).some((n) => n.startsWith('repgen-launcher-'))).toBe(true);
    expect(readdirSync(root).filter((n) => n.startsWith('repgen-probe-'))).toEqual([]);
  });

  it('isolates with bubblewrap on this host and says so', async () => {
    const r = await executor.run({ files: [{ path: 'a.py', content: 'print(1)' }], entry: 'a.py' });
    expect(r.isolation).toEqual({ network: 'none', sandbox: 'bwrap', notes: [] });
  });

  it.concurrent('a wall-clock timeout kills the whole tree, also children that called setsid() or were orphaned', async (test) => {
    await expectTreeKilled(executor, 'timeout', test);
  });

  it.concurrent('an abort kills the whole tree too', async (test) => {
    await expectTreeKilled(executor, 'abort', test);
  });

  it.concurrent('a daemon the script leaves behind dies with the run', async (test) => {
    await expectLeftoversKilled(executor, test);
  });

  it('no secret of the parent reaches the script, even when allowlisted by mistake', async () => {
    const hostEnv = { GITHUB_TOKEN: 'ghp_parentSecret', ANTHROPIC_API_KEY: 'sk-ant-parent', LANG: 'de_DE.UTF-8', PATH: '/evil/bin' };
    const ex = createLocalExecutor({ workRoot }, { hostEnv });
    const r = await ex.run({
      files: [fixtureFile('sandbox-printenv.py')],
      entry: 'sandbox-printenv.py',
      envAllowlist: ['GITHUB_TOKEN', 'ANTHROPIC_API_KEY', 'LANG'],
    });
    const env = JSON.parse(r.stdout) as Record<string, string>;
    expect(env.LANG).toBe('de_DE.UTF-8');
    expect(env).not.toHaveProperty('GITHUB_TOKEN');
    expect(env).not.toHaveProperty('ANTHROPIC_API_KEY');
    expect(env.PATH).not.toContain('/evil');
    expect(env.HOME).toBe(env.PWD);
    expect(env.MPLBACKEND).toBe('Agg');
    expect(r.output).not.toMatch(/ghp_parentSecret|sk-ant-parent/);
    expect(r.isolation.notes).toEqual([
      'env GITHUB_TOKEN not passed: allowlisted names must not be credentials',
      'env ANTHROPIC_API_KEY not passed: allowlisted names must not be credentials',
    ]);
  });

  // RSS grows by about half of what streams through (read chunks the GC has not collected yet; 41-43 MB for 50 MB
  // under CI load, 73 MB for 150 MB), so a fixed bound flakes. A run that kept its output would grow by at least
  // all of it: the bound is 90 % of a 100 MB flood.
  it('100 MB of output: capped, counted, flagged, the final traceback kept, no memory blow-up', async () => {
    const mb = 100;
    const before = process.memoryUsage().rss;
    const r = await executor.run({ files: [fixtureFile('sandbox-big-output.py')], entry: 'sandbox-big-output.py', args: [String(mb)] });
    const grew = process.memoryUsage().rss - before;
    expect(r.stdoutBytes).toBe(mb * 1024 * 1024 - ((mb * 1024 * 1024) % 100) + 'LAST STDOUT LINE\n'.length);
    expect(r.stdoutTruncated).toBe(true);
    expect(Buffer.byteLength(r.stdout)).toBeLessThanOrEqual(1_000_000 + 200);
    expect(r.stdout).toMatch(/\[repgen: \d+ bytes of output omitted\]/);
    expect(r.stdout.endsWith('LAST STDOUT LINE\n')).toBe(true);
    expect(r.stderr).toContain('RuntimeError: crashed after the flood');
    expect(r.output).toContain('RuntimeError: crashed after the flood');
    expect(grew).toBeLessThan(0.9 * mb * 1024 * 1024);
  });

  it('returns output files but never follows a symlink the script planted', async () => {
    const r = await executor.run({ files: [fixtureFile('sandbox-writes-output-file.py')], entry: 'sandbox-writes-output-file.py' });
    expect(r.files.map((f) => f.path)).toEqual(['big.log', 'result.json', 'sub/notes.txt', 'weights.bin']);
    // Past the note of a forked run (the default pool), the only note is the link that was not followed.
    expect(r.notes?.filter((n) => n !== WARM_NOTE)).toEqual(['1 symlink(s) under $REPGEN_OUT not followed']);
  });

  it('removes the work dir and its owner marker afterwards (the marker sits outside the script’s reach)', async () => {
    const r = await executor.run({
      files: [{ path: 'a.py', content: 'import os\nprint(os.getcwd(), os.path.exists(os.getcwd() + ".owner"))' }],
      entry: 'a.py',
    });
    const [cwd = '', seen] = r.stdout.trim().split(' ');
    expect(cwd.startsWith(join(workRoot, 'repgen-run-'))).toBe(true);
    expect(seen).toBe('False');
    expect(existsSync(cwd)).toBe(false);
    expect(existsSync(`${cwd}.owner`)).toBe(false);
  });

  it('reports CPU time and peak memory of the script, measured by wait4', async () => {
    const r = await executor.run({
      files: [
        {
          path: 'a.py',
          content: 'import time\nb = bytearray(200 * 1024 * 1024)\nt = time.process_time()\nwhile time.process_time() - t < 0.6: pass\n',
        },
      ],
      entry: 'a.py',
    });
    expect(r.exitCode).toBe(0);
    expect(r.peakMemoryMb).toBeGreaterThanOrEqual(200);
    expect(r.peakMemoryMb).toBeLessThan(400);
    expect(r.cpuMs).toBeGreaterThanOrEqual(600);
    expect(r.durationMs).toBeGreaterThanOrEqual(r.cpuMs! * 0.5);
  });

  it('a script killed by a signal reports the signal, not an exit code', async () => {
    const r = await executor.run({
      files: [{ path: 'a.py', content: 'import os, signal\nprint("about to crash", flush=True)\nos.kill(os.getpid(), signal.SIGSEGV)\n' }],
      entry: 'a.py',
    });
    expect(r.exitCode).toBeNull();
    expect(r.signal).toBe('SIGSEGV');
    expect(r.timedOut).toBe(false);
    expect(r.infra).toBeNull();
    expect(r.stdout).toBe('about to crash\n');
  });

  it('stops a script at its CPU-time limit and says so', async () => {
    const r = await executor.run({
      files: [fixtureFile('sandbox-cpu-burn.py')],
      entry: 'sandbox-cpu-burn.py',
      limits: { cpuSeconds: 1, timeoutMs: 30_000 },
    });
    expect(r.timedOut).toBe(false);
    expect(r.exitCode).toBeNull();
    expect(r.signal).toBe('SIGXCPU');
    // RLIMIT_CPU is checked on scheduler ticks; rusage may read a little under the second.
    expect(r.cpuMs).toBeGreaterThanOrEqual(500);
    expect(r.notes).toContain('stopped by the 1 s CPU-time limit');
  });

  it('memory limit (RLIMIT_DATA) lets torch import and makes a too-big tensor fail inside the script', async () => {
    const r = await executor.run({
      files: [fixtureFile('sandbox-memory.py')],
      entry: 'sandbox-memory.py',
      args: ['2048'],
      limits: { memoryMb: 1024 },
    });
    expect(r.stdout).toContain('imported');
    expect(r.stdout).not.toContain('allocated');
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toMatch(/can't allocate memory|MemoryError/);
  });

  it('a script cannot write a file past REPGEN_MAX_FILE_MB (RLIMIT_FSIZE)', async () => {
    const ex = createLocalExecutor({ workRoot, maxFileMb: 1 });
    const r = await ex.run({
      files: [
        {
          path: 'a.py',
          content: 'import os\nwith open(os.environ["REPGEN_OUT"] + "/huge.bin", "wb") as f:\n    f.write(b"x" * (3 * 1024 * 1024))\n',
        },
      ],
      entry: 'a.py',
    });
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain('File too large');
    expect(r.files[0]?.size).toBeLessThanOrEqual(1024 * 1024);
  });

  it('runs setup commands in the work dir before the script', async () => {
    const r = await executor.run({
      files: [{ path: 'a.py', content: 'print(open("made-by-setup.txt").read().strip())' }],
      entry: 'a.py',
      setup: ['echo setup-ran > made-by-setup.txt', 'yes | head -n 2 >/dev/null'],
    });
    expect(r.stderr).toBe('');
    expect(r.stdout).toBe('setup-ran\n');
  });

  it('a missing interpreter is a SetupError with a clear message, before anything runs', async () => {
    const ex = createLocalExecutor({ workRoot, python: '/nonexistent/bin/python3' });
    const run = ex.run({ files: [{ path: 'a.py', content: 'pass' }], entry: 'a.py' });
    await expect(run).rejects.toBeInstanceOf(InterpreterNotFoundError);
    await expect(run).rejects.toBeInstanceOf(SetupError);
    await expect(run).rejects.toThrow('Python interpreter not found: /nonexistent/bin/python3 (set REPGEN_PYTHON or pass --python');
  });

  it('bad requests and an unusable work root are typed errors with a clear message', async () => {
    const collide = executor.run({
      files: [
        { path: 'a', content: 'x' },
        { path: 'a/b.py', content: 'pass' },
      ],
      entry: 'a/b.py',
    });
    await expect(collide).rejects.toBeInstanceOf(InvalidRunRequestError);
    await expect(collide).rejects.toThrow("cannot write a/b.py: it collides with another file's path");
    // A work root below a regular file can never be created (ENOTDIR).
    const aFile = join(workRoot, 'a-regular-file');
    writeFileSync(aFile, '');
    const badRoot = createLocalExecutor({ workRoot: join(aFile, 'runs'), sandbox: 'none' });
    const run = badRoot.run({ files: [{ path: 'a.py', content: 'pass' }], entry: 'a.py' });
    await expect(run).rejects.toBeInstanceOf(SetupError);
    await expect(run).rejects.toThrow(`cannot create a work dir under ${join(aFile, 'runs')} (REPGEN_WORK_ROOT): ENOTDIR`);
  });

  it('an already-aborted signal runs nothing', async () => {
    const r = await executor.run({ files: [{ path: 'a.py', content: 'open("/tmp/x","w")' }], entry: 'a.py' }, AbortSignal.abort());
    expect(r.infra).toEqual({ kind: 'aborted', message: 'run cancelled before it started' });
    expect(r.exitCode).toBeNull();
  });

  it('the sandbox shows the script no host secrets in /etc, no /root and a private /tmp', async () => {
    const hostTmpFile = join(tmpdir(), `repgen-host-only-${randomUUID()}`);
    writeFileSync(hostTmpFile, 'host');
    try {
      const r = await executor.run({
        files: [
          {
            path: 'a.py',
            content: `import os\nprint(os.path.exists("/etc/shadow"), os.path.exists(${JSON.stringify(hostTmpFile)}), os.path.exists("/root"))`,
          },
        ],
        entry: 'a.py',
      });
      expect(r.stdout).toBe('False False False\n');
    } finally {
      rmSync(hostTmpFile);
    }
  });
});

describe.concurrent('local executor with the Python launcher (REPGEN_LAUNCHER=python, used where no C compiler is)', () => {
  const executor = createLocalExecutor({ workRoot, launcher: 'python' });

  it('measures CPU time and peak memory the same way', async () => {
    const r = await executor.run({
      files: [
        {
          path: 'a.py',
          content: 'import time\nb = bytearray(150 * 1024 * 1024)\nt = time.process_time()\nwhile time.process_time() - t < 0.5: pass\n',
        },
      ],
      entry: 'a.py',
    });
    expect(r.exitCode).toBe(0);
    expect(r.peakMemoryMb).toBeGreaterThanOrEqual(150);
    expect(r.peakMemoryMb).toBeLessThan(350);
    expect(r.cpuMs).toBeGreaterThanOrEqual(500);
  });

  it('reports a signal death, the CPU limit and the file-size limit the same way', async () => {
    const seg = await executor.run({
      files: [{ path: 'a.py', content: 'import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)\n' }],
      entry: 'a.py',
    });
    expect([seg.exitCode, seg.signal]).toEqual([null, 'SIGSEGV']);
    const cpu = await executor.run({
      files: [fixtureFile('sandbox-cpu-burn.py')],
      entry: 'sandbox-cpu-burn.py',
      limits: { cpuSeconds: 1, timeoutMs: 30_000 },
    });
    expect(cpu.signal).toBe('SIGXCPU');
    expect(cpu.notes).toContain('stopped by the 1 s CPU-time limit');
    const big = await createLocalExecutor({ workRoot, launcher: 'python', maxFileMb: 1 }).run({
      files: [{ path: 'a.py', content: 'open("huge.bin", "wb").write(b"x" * (3 * 1024 * 1024))\n' }],
      entry: 'a.py',
    });
    expect(big.stderr).toContain('File too large');
  });

  it('without a sandbox, still kills the tree at the timeout and daemons at the end (subreaper)', async (test) => {
    const bare = createLocalExecutor({ workRoot, launcher: 'python', sandbox: 'none' });
    await expectTreeKilled(bare, 'timeout', test);
    await expectLeftoversKilled(bare, test);
  });
});

describe.concurrent('local executor without a sandbox (REPGEN_SANDBOX=none)', () => {
  const executor = createLocalExecutor({ workRoot, sandbox: 'none' });

  it('says plainly that nothing was isolated', async () => {
    const r = await executor.run({ files: [{ path: 'a.py', content: 'pass' }], entry: 'a.py' });
    expect(r.isolation.network).toBe('host');
    expect(r.isolation.sandbox).toBe('none');
    expect(r.isolation.notes[0]).toBe(
      'no sandbox (REPGEN_SANDBOX=none): the script could read and write every file this process can, and use its network',
    );
  });

  it('still kills the whole tree at the timeout through the process group and /proc', async (test) => {
    await expectTreeKilled(executor, 'timeout', test);
  });

  it('a daemon the script leaves behind dies with the run (the launcher is a subreaper)', async (test) => {
    await expectLeftoversKilled(executor, test);
  });
});

describe('local executor: the workspace (the project checkout, read-only)', () => {
  const executor = createLocalExecutor({ workRoot });

  function makeCheckout(): string {
    const dir = mkdtempSync(join(workRoot, 'checkout-'));
    chmodSync(dir, 0o755);
    mkdirSync(join(dir, 'pkg'));
    writeFileSync(join(dir, 'pkg', '__init__.py'), 'VALUE = "from-the-workspace"\n');
    writeFileSync(join(dir, 'data.txt'), 'checkout data\n');
    return dir;
  }
  const probe = [
    'import os, sys, pkg',
    'ws = os.environ["REPGEN_WORKSPACE"]',
    'print(pkg.VALUE, pkg.__file__)',
    'print(open(os.path.join(ws, "data.txt")).read().strip())',
    'for path, mode in [(os.path.join(ws, "new.txt"), "w"), (os.path.join(ws, "data.txt"), "a"), (os.path.join(ws, "pkg", "__init__.py"), "w")]:',
    '    try:',
    '        open(path, mode).write("tampered")',
    '        print("WROTE", path)',
    '    except OSError as e:',
    '        print("refused", e.errno in (13, 30))',
    'try:',
    '    os.mkdir(os.path.join(ws, "d"))',
    '    print("WROTE dir")',
    'except OSError as e:',
    '    print("refused", e.errno in (13, 30))',
    'open("scratch.txt", "w").write("ok")',
    'print("cwd writable", os.getcwd() != ws, os.environ["PYTHONPATH"])',
  ].join('\n');

  it('the script imports and reads the checkout at /workspace, cannot write to it, and its cwd stays writable', async () => {
    const checkout = makeCheckout();
    const r = await executor.run({ files: [{ path: 'main.py', content: probe }], entry: 'main.py', workspace: { hostPath: checkout } });
    expect(r.stderr).toBe('');
    expect(r.stdout.split('\n')).toEqual([
      'from-the-workspace /workspace/pkg/__init__.py',
      'checkout data',
      'refused True',
      'refused True',
      'refused True',
      'refused True',
      'cwd writable True /workspace',
      '',
    ]);
    expect(readdirSync(checkout).sort()).toEqual(['data.txt', 'pkg']);
    expect(readFileSync(join(checkout, 'data.txt'), 'utf8')).toBe('checkout data\n');
    expect(readFileSync(join(checkout, 'pkg', '__init__.py'), 'utf8')).toBe('VALUE = "from-the-workspace"\n');
  });

  it('honours a mount path and keeps the request PYTHONPATH after the workspace', async () => {
    const checkout = makeCheckout();
    const r = await executor.run({
      files: [{ path: 'main.py', content: 'import os, pkg\nprint(pkg.__file__, os.environ["PYTHONPATH"])' }],
      entry: 'main.py',
      env: { PYTHONPATH: '/opt/extra' },
      workspace: { hostPath: checkout, mountPath: '/src/project' },
    });
    expect(r.stdout).toBe('/src/project/pkg/__init__.py /src/project:/opt/extra\n');
  });

  it('refuses a workspace that is not a directory and mount paths on system folders, running nothing', async () => {
    const run = (workspace: { hostPath: string; mountPath?: string }) =>
      executor.run({ files: [{ path: 'a.py', content: 'pass' }], entry: 'a.py', workspace });
    await expect(run({ hostPath: join(workRoot, 'no-such-checkout') })).rejects.toThrow(/workspace .*no-such-checkout is not a directory/);
    await expect(run({ hostPath: 'relative/dir' })).rejects.toThrow(/workspace\.hostPath: must be an absolute path/);
    for (const mountPath of ['/usr/lib/x', '/tmp', '/proc/self', '/', '/work/../etc', 'workspace']) {
      await expect(run({ hostPath: workRoot, mountPath })).rejects.toBeInstanceOf(InvalidRunRequestError);
    }
  });

  it('without bubblewrap the script sees the host path, and the isolation notes say it is not read-only', async () => {
    const checkout = makeCheckout();
    const bare = createLocalExecutor({ workRoot, sandbox: 'none' });
    const r = await bare.run({
      files: [{ path: 'a.py', content: 'import pkg\nprint(pkg.VALUE)' }],
      entry: 'a.py',
      workspace: { hostPath: checkout },
    });
    expect(r.stdout).toBe('from-the-workspace\n');
    expect(r.isolation.notes).toContain(`workspace ${checkout} is not read-only: the none sandbox cannot mount it`);
  });
});
