import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunRequestInput, ScriptExecutor } from '../../src/exec/types.js';

/**
 * The contract every ScriptExecutor adapter must meet: the same request gives the same result shape and the
 * same meaning whether it ran in the local sandbox or a Kubernetes Job. Scripts here use only the standard
 * library, so the suite is fast and needs no torch.
 *
 * Usage: `describeExecutorConformance('kubernetes', () => createKubernetesExecutor(cfg, { fetch: fakeApi }))`.
 */
export interface ConformanceOptions {
  /** Wall-clock limit given to the timeout case. @defaultValue 1500 */
  timeoutMs?: number;
}

const FIXTURES = fileURLToPath(new URL('../../fixtures/scripts/', import.meta.url));

/** A fixture script as a request file. */
export function fixtureFile(name: string): { path: string; content: string } {
  return { path: name, content: readFileSync(FIXTURES + name, 'utf8') };
}

function script(content: string, extra: Partial<RunRequestInput> = {}): RunRequestInput {
  return { files: [{ path: 'main.py', content }], entry: 'main.py', ...extra };
}

export function describeExecutorConformance(
  name: string,
  makeExecutor: () => ScriptExecutor | Promise<ScriptExecutor>,
  options: ConformanceOptions = {},
): void {
  const timeoutMs = options.timeoutMs ?? 1500;

  describe(`ScriptExecutor conformance: ${name}`, () => {
    let executor: ScriptExecutor;
    const saved: Record<string, string | undefined> = {};
    const planted = {
      GITHUB_TOKEN: 'ghp_conformanceSecret0123456789',
      ANTHROPIC_API_KEY: 'sk-ant-conformance-secret',
      REPGEN_CONFORMANCE_ALLOWED: 'allowed-value',
      REPGEN_CONFORMANCE_NOT_ALLOWED: 'not-allowed-value',
    };

    beforeAll(async () => {
      // Secrets in the parent's own environment, where a careless adapter would copy them from.
      for (const [k, v] of Object.entries(planted)) {
        saved[k] = process.env[k];
        process.env[k] = v;
      }
      executor = await makeExecutor();
    });
    afterAll(async () => {
      // Its warm servers keep their run folders until it is closed.
      await executor?.close?.();
      for (const [k, v] of Object.entries(saved)) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    });

    it('runs a script: exit 0, stdout captured, stderr empty', async () => {
      const r = await executor.run(script('print("hello from the script")\n'));
      expect(r.executor).toBe(executor.name);
      expect(r.infra).toBeNull();
      expect(r.exitCode).toBe(0);
      expect(r.signal).toBeNull();
      expect(r.timedOut).toBe(false);
      expect(r.stdout).toBe('hello from the script\n');
      expect(r.stderr).toBe('');
      expect(r.output).toBe('hello from the script\n');
      expect(r.stdoutBytes).toBe(22);
      expect(r.stdoutTruncated).toBe(false);
      expect(r.durationMs).toBeGreaterThan(0);
    });

    it('reports a non-zero exit code as it is', async () => {
      const r = await executor.run(script('import sys\nprint("bye")\nsys.exit(3)\n'));
      expect(r.exitCode).toBe(3);
      expect(r.infra).toBeNull();
      expect(r.stdout).toBe('bye\n');
    });

    it('keeps an uncaught exception: exit 1, traceback on stderr, stdout before it in output', async () => {
      const r = await executor.run(script('import sys\nprint("before", flush=True)\nraise ValueError("shape (3, 4) is bad")\n'));
      expect(r.exitCode).toBe(1);
      expect(r.stderr).toContain('Traceback (most recent call last)');
      expect(r.stderr).toContain('ValueError: shape (3, 4) is bad');
      expect(r.stdout).toBe('before\n');
      expect(r.output.indexOf('before')).toBeLessThan(r.output.indexOf('ValueError'));
    });

    it('writes every file, runs the entry with its args, imports a sibling module', async () => {
      const r = await executor.run({
        files: [
          { path: 'pkg/helper.py', content: 'def twice(x):\n    return 2 * x\n' },
          { path: 'pkg/__init__.py', content: '' },
          { path: 'run.py', content: 'import sys\nfrom pkg.helper import twice\nprint(twice(int(sys.argv[1])), sys.argv[2])\n' },
        ],
        entry: 'run.py',
        args: ['21', 'second arg'],
      });
      expect(r.exitCode).toBe(0);
      expect(r.stdout).toBe('42 second arg\n');
    });

    it('gives the script a clean environment: request env and allowlist only, never the parent secrets', async () => {
      const r = await executor.run({
        files: [fixtureFile('sandbox-printenv.py')],
        entry: 'sandbox-printenv.py',
        env: { REPGEN_CONFORMANCE_SET: 'set-by-request' },
        envAllowlist: ['REPGEN_CONFORMANCE_ALLOWED'],
        seed: 1234,
      });
      expect(r.exitCode).toBe(0);
      const env = JSON.parse(r.stdout) as Record<string, string>;
      expect(env.REPGEN_CONFORMANCE_SET).toBe('set-by-request');
      expect(env.REPGEN_CONFORMANCE_ALLOWED).toBe('allowed-value');
      expect(env.REPGEN_SEED).toBe('1234');
      expect(env.PYTHONHASHSEED).toBe('1234');
      expect(env.PYTHONUNBUFFERED).toBe('1');
      expect(env.REPGEN_OUT).toBeTruthy();
      expect(env).not.toHaveProperty('GITHUB_TOKEN');
      expect(env).not.toHaveProperty('ANTHROPIC_API_KEY');
      expect(env).not.toHaveProperty('REPGEN_CONFORMANCE_NOT_ALLOWED');
      for (const secret of Object.values(planted).filter((v) => v !== 'allowed-value')) expect(r.output).not.toContain(secret);
    });

    // The fixture sleeps an hour: a run that comes back within the test's own timeout was killed. How fast the kill
    // lands is not asserted; a busy machine slows it.
    it('kills a script at its wall-clock limit and keeps what it printed', async () => {
      const r = await executor.run({
        files: [fixtureFile('sandbox-timeout.py')],
        entry: 'sandbox-timeout.py',
        limits: { timeoutMs },
      });
      expect(r.timedOut).toBe(true);
      expect(r.exitCode).toBeNull();
      expect(r.infra).toBeNull();
      expect(r.stdout).toContain('started');
      expect(r.stdout).not.toContain('never reached');
      expect(r.durationMs).toBeGreaterThanOrEqual(timeoutMs - 50);
    });

    it('returns the files written under $REPGEN_OUT: small text inline, sizes always', async () => {
      const r = await executor.run({ files: [fixtureFile('sandbox-writes-output-file.py')], entry: 'sandbox-writes-output-file.py' });
      expect(r.exitCode).toBe(0);
      const byPath = new Map(r.files.map((f) => [f.path, f]));
      expect(JSON.parse(byPath.get('result.json')?.content ?? 'null')).toEqual({ loss: [1.0, 0.5], ok: true });
      expect(byPath.get('sub/notes.txt')?.content).toBe('nested ✓\n');
      expect(byPath.get('weights.bin')).toEqual({ path: 'weights.bin', size: 1024 });
      expect(byPath.get('big.log')).toEqual({ path: 'big.log', size: 200_000 });
    });

    it('caps each stream, counts every byte, flags the truncation and keeps the end', async () => {
      const r = await executor.run({
        files: [fixtureFile('sandbox-big-output.py')],
        entry: 'sandbox-big-output.py',
        args: ['0.5'],
        limits: { maxOutputBytes: 100_000 },
      });
      expect(r.exitCode).toBe(1);
      expect(r.outputCapBytes).toBe(100_000);
      expect(r.stdoutTruncated).toBe(true);
      expect(r.stdoutBytes).toBe(Math.floor((0.5 * 1024 * 1024) / 100) * 100 + 'LAST STDOUT LINE\n'.length);
      expect(Buffer.byteLength(r.stdout)).toBeLessThanOrEqual(100_000 + 200);
      expect(Buffer.byteLength(r.output)).toBeLessThanOrEqual(100_000 + 200);
      expect(r.stdout).toContain('LAST STDOUT LINE');
      expect(r.stderrTruncated).toBe(false);
      expect(r.stderr).toContain('RuntimeError: crashed after the flood');
      expect(r.output).toContain('RuntimeError: crashed after the flood');
    });

    it('says how the script was isolated, and never is silent about missing network isolation', async () => {
      const r = await executor.run(script('pass\n'));
      expect(['none', 'host']).toContain(r.isolation.network);
      expect(r.isolation.sandbox).toBeTruthy();
      if (r.isolation.network === 'host') expect(r.isolation.notes.join(' ')).toMatch(/network/i);
    });

    it('stops a run when its AbortSignal fires and says it was aborted', async () => {
      const controller = new AbortController();
      setTimeout(() => controller.abort(), 700);
      const r = await executor.run({ files: [fixtureFile('sandbox-timeout.py')], entry: 'sandbox-timeout.py' }, controller.signal);
      expect(r.infra?.kind).toBe('aborted');
      expect(r.exitCode).toBeNull();
    });

    it('rejects a request whose entry is not among its files, running nothing', async () => {
      await expect(executor.run({ files: [{ path: 'a.py', content: 'pass' }], entry: 'b.py' })).rejects.toThrow(/entry/);
      await expect(executor.run({ files: [{ path: '../escape.py', content: 'pass' }], entry: '../escape.py' })).rejects.toThrow(
        /relative path/,
      );
    });
  });
}
