import { randomUUID } from 'node:crypto';
import { chmodSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalExecutor } from '../../../src/exec/local/executor.js';
import { WARM_NOTE } from '../../../src/exec/warm/pool.js';
import { SAFE_PATH } from '../../../src/exec/sandbox/script-env.js';
import type { ScriptExecutor } from '../../../src/exec/types.js';
import { makeTempDir } from '../../helpers/temp-dir.js';

/**
 * The environment of every process of a run (issue 12): the worker holds secrets and may carry loader variables.
 * Planted in the parent (process.env and the executor's hostEnv), none may reach the script, nor sit in any process
 * of the sandboxed tree — checked from inside (its env, /proc/* /environ it can read) and from the host (the
 * environ of bwrap and of what runs in it). A request's own loader variable is the script's, never bwrap's.
 */

const tag = randomUUID().slice(0, 8);
const PLANTED: Record<string, string> = {
  PRIVATE_KEY: `-----BEGIN RSA PRIVATE KEY----- planted-${tag}`,
  WEBHOOK_SECRET: `planted-webhook-${tag}`,
  ANTHROPIC_API_KEY: `sk-ant-planted-${tag}`,
  GITHUB_TOKEN: `ghp_planted${tag}`,
  LD_PRELOAD: `/nonexistent-${tag}/preload.so`,
  LD_LIBRARY_PATH: `/nonexistent-${tag}/lib`,
  LD_AUDIT: `/nonexistent-${tag}/audit.so`,
  PYTHONSTARTUP: `/nonexistent-${tag}/startup.py`,
  PYTHONPATH: `/nonexistent-${tag}/site`,
  PYTHONHOME: `/nonexistent-${tag}/home`,
  BASH_ENV: `/nonexistent-${tag}/bashrc`,
  ENV: `/nonexistent-${tag}/shrc`,
};
const REQUEST_LIB = `/nonexistent-request-${tag}`;

const root = makeTempDir('repgen-outer-env-');
chmodSync(root, 0o755);
const workRoot = join(root, 'runs');
mkdirSync(workRoot, { mode: 0o755 });
const saved: Record<string, string | undefined> = {};

beforeAll(() => {
  for (const [k, v] of Object.entries(PLANTED)) {
    saved[k] = process.env[k];
    process.env[k] = v;
  }
});
afterAll(() => {
  for (const [k, v] of Object.entries(saved)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  rmSync(root, { recursive: true, force: true });
});

const SCRIPT = `
import json, os, sys, time
procs = {}
for pid in os.listdir('/proc'):
    if pid.isdigit():
        try:
            procs[pid] = open('/proc/%s/environ' % pid, 'rb').read().decode('latin-1')
        except OSError:
            pass
print("REPORT " + json.dumps({"own": dict(os.environ), "procs": procs}), flush=True)
time.sleep(2.5)
`;

/** Every host process whose command line names `token`, with its environment (read as root, from outside). */
function hostProcessesWith(token: string): { pid: string; cmd: string; env: Record<string, string> }[] {
  const out = [];
  for (const pid of readdirSync('/proc').filter((n) => /^\d+$/.test(n))) {
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, 'latin1');
      if (!cmd.includes(token)) continue;
      const raw = readFileSync(`/proc/${pid}/environ`, 'latin1');
      const env = Object.fromEntries(
        raw
          .split('\0')
          .filter(Boolean)
          .map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
      );
      out.push({ pid, cmd: cmd.split('\0')[0] ?? '', env });
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

// Cold with each launcher, and forked from a fork server (whose bwrap's command line does not name the entry).
describe.each(['native', 'python', 'warm'] as const)('the environment of a run (%s)', (path) => {
  let executor: ScriptExecutor;
  const launcher = path === 'python' ? 'python' : 'native';
  beforeAll(() => {
    const warmPool = path === 'warm' ? 'always' : 'off';
    executor = createLocalExecutor({ workRoot, launcher, warmPool }, { hostEnv: { ...process.env } });
  });
  afterAll(async () => {
    await executor.close?.();
  });

  it('no planted variable reaches the script or any process of the run; bwrap itself runs with PATH only', async () => {
    const entry = `outer-env-${tag}-${path}.py`;
    const seen = new Map<string, { cmd: string; env: Record<string, string> }>();
    let done = false;
    const run = executor
      .run({ files: [{ path: entry, content: SCRIPT }], entry, env: { LD_LIBRARY_PATH: REQUEST_LIB }, limits: { timeoutMs: 30_000 } })
      .finally(() => {
        done = true;
      });
    while (!done) {
      for (const p of hostProcessesWith(entry)) seen.set(p.pid, p);
      await new Promise((r) => setTimeout(r, 40));
    }
    const r = await run;
    expect(r.exitCode, r.stderr).toBe(0);
    const line = r.stdout.split('\n').find((l) => l.startsWith('REPORT ')) ?? '';
    const found = JSON.parse(line.slice('REPORT '.length)) as { own: Record<string, string>; procs: Record<string, string> };
    const everything = JSON.stringify(found) + r.stdout + r.stderr + JSON.stringify([...seen.values()]);
    for (const [name, value] of Object.entries(PLANTED)) expect(everything, name).not.toContain(value);
    // No loader error either: nothing tried to preload the planted library.
    expect(r.stderr).not.toMatch(/ld\.so|cannot be preloaded/);
    // The script saw its own env and could read some process's environ (its own at least).
    expect(found.own.LD_LIBRARY_PATH).toBe(REQUEST_LIB);
    expect(Object.keys(found.procs).length).toBeGreaterThan(0);
    // From the host: bwrap (outside the sandbox) has PATH and nothing else (but PWD); the request's loader path is only in
    // the processes inside (those with REPGEN_OUT: the launcher and the script).
    const procs = [...seen.values()];
    const outer = procs.filter((p) => p.env.REPGEN_OUT === undefined);
    const inner = procs.filter((p) => p.env.REPGEN_OUT !== undefined);
    if (path === 'warm') expect(r.notes).toContain(WARM_NOTE);
    else expect(outer.map((p) => p.cmd)).toContain('/usr/bin/bwrap');
    for (const p of outer) {
      // The root shell that joins the cgroup exports PWD (the work dir) to setpriv and bwrap: not ours, harmless.
      const { PWD, ...rest } = p.env;
      expect(rest, p.cmd).toEqual({ PATH: SAFE_PATH });
      if (PWD !== undefined) expect(PWD.startsWith(join(workRoot, 'repgen-run-'))).toBe(true);
    }
    expect(inner.length).toBeGreaterThan(0);
    for (const p of inner) expect(p.env.LD_LIBRARY_PATH).toBe(REQUEST_LIB);
  });
});
