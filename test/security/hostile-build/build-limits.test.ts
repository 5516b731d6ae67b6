import { chmodSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runSandboxed, type SandboxedCommand } from '../../../src/env/sandboxed/sandboxed-command.js';
import { probeSandbox, type SandboxPlan } from '../../../src/exec/sandbox/sandbox.js';

// Issue 38 item 6: with no usable cgroup, a build step forked 600 processes, allocated 3 GiB and wrote 800 MB into the
// host's cache folder. Every build step now runs under rlimits and a disk watch on the folder it writes; each hostile
// step below is stopped, and the outcome says which limit. The plan is the real bwrap sandbox with its cgroup taken
// away, as on a host that has none.

const PYTHON = '/usr/bin/python3';

describe('hostile builds: a build step is bounded without a cgroup, and says which limit stopped it', () => {
  let root: string;
  let plan: SandboxPlan;
  const signal = new AbortController().signal;
  const step = async (script: string, over: Partial<SandboxedCommand> = {}) => {
    const writable = mkdtempSync(join(root, 'step-'));
    chmodSync(writable, 0o777);
    return runSandboxed({
      plan,
      argv: ['/bin/sh', '-c', script],
      env: { PATH: '/usr/bin:/bin', HOME: writable, TMPDIR: writable },
      writable,
      readOnlyPaths: [],
      proxySocket: null,
      offline: true,
      forwarderPython: PYTHON,
      // Far past what any limit below needs: the limits, not the clock, stop each step.
      timeoutMs: 300_000,
      signal,
      ...over,
    });
  };

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'repgen-hostile-limits-'));
    chmodSync(root, 0o711);
    mkdirSync(join(root, 'x'));
    plan = { ...(await probeSandbox('bwrap', { workRoot: tmpdir() })), cgroups: null };
  }, 60_000);

  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('a fork bomb stops at the process limit', async () => {
    const out = await step('i=0; while [ $i -lt 400 ]; do sleep 120 & i=$((i+1)); done; echo all-forked', { rlimits: { processes: 40 } });
    expect(out.stdout).not.toContain('all-forked');
    expect(out.code).not.toBe(0);
    expect(out.stderr).toContain('limit of 40 processes and threads');
  });

  it('a big allocation stops at the memory limit', async () => {
    const out = await step(`${PYTHON} -c "b = bytearray(1024 ** 3); print('allocated')"`, { memoryBytes: 256 * 1024 ** 2 });
    expect(out.stdout).not.toContain('allocated');
    expect(out.stderr).toContain('MemoryError');
    expect(out.stderr).toContain('0.3 GiB memory limit');
  });

  it('a big file stops at the file-size limit', async () => {
    const out = await step('head -c 50000000 /dev/zero > big && echo wrote', { rlimits: { fileBytes: 10 * 1024 ** 2 } });
    expect(out.stdout).not.toContain('wrote');
    expect(out.code).not.toBe(0);
    expect(out.stderr).toContain('file-size limit');
  });

  it('many files under the file-size limit stop at the folder’s disk ceiling', async () => {
    // Each file is under the file limit; together they pass the 30 MB ceiling, and the step then waits to be stopped.
    const out = await step('i=0; while [ $i -lt 20 ]; do head -c 5000000 /dev/zero > f$i; i=$((i+1)); done; sleep 300', {
      diskMb: 30,
      rlimits: { fileBytes: 8 * 1024 ** 2 },
    });
    expect(out.code).not.toBe(0);
    expect(out.timedOut).toBe(false);
    expect(out.stderr).toContain("the build's folder passed its 30 MB limit (REPGEN_ENV_BUILD_MAX_MB)");
  });

  it('a spinning process stops at the CPU-time limit', async () => {
    const out = await step(`${PYTHON} -c "while True: pass"`, { rlimits: { cpuSeconds: 1 } });
    expect(out.code).not.toBe(0);
    expect(out.timedOut).toBe(false);
    expect(out.stderr).toContain('1 s CPU-time limit');
  });

  it('a step within its limits runs as before', async () => {
    const out = await step('echo fine; head -c 1000 /dev/zero > small');
    expect(out).toMatchObject({ code: 0, stdout: 'fine\n', timedOut: false, aborted: false });
  });
});
