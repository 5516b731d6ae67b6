import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { testPrivateKey } from '../github/webhook-fixtures.js';
import { waitFor } from '../helpers/poll.js';

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
    srv.on('error', reject);
  });
}

/** The real `repgen serve` process: it listens, answers its health check, and exits 0 on SIGTERM. */
describe('repgen serve as a process', () => {
  it('serves /healthz and shuts down cleanly on SIGTERM', async () => {
    const port = await freePort();
    const child = spawn(process.execPath, ['bin/repgen.js', 'serve'], {
      env: {
        PATH: process.env.PATH,
        APP_ID: '1',
        PRIVATE_KEY: testPrivateKey(),
        WEBHOOK_SECRET: 'serve-process-secret',
        REDIS_URL: 'redis://127.0.0.1:6379',
        REPGEN_QUEUE_PREFIX: `serve-process-${process.pid}`,
        HOST: '127.0.0.1',
        PORT: String(port),
        LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      const seen = await waitFor(() => (stderr.includes('listening on') || child.exitCode !== null ? { stderr } : null), {
        what: 'the server listening, or its exit',
        everyMs: 100,
      });
      expect(seen.stderr).toContain('listening on');
      const health = await fetch(`http://127.0.0.1:${port}/healthz`);
      expect(health.status).toBe(200);
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    } finally {
      child.kill('SIGKILL');
    }
  }, 120_000); // a process that loads tsx and Probot: a busy machine slows its start, which must not fail the test
});
