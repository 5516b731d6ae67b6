import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { testPrivateKey } from '../github/webhook-fixtures.js';
import { makeTempDir } from '../helpers/temp-dir.js';

/** One start of the real `repgen worker` against the local Redis, stopped by SIGTERM once it says it started. */
async function startAndStop(
  i: number,
  { redisUrl = 'redis://127.0.0.1:6379', until = 'repro worker started' } = {},
): Promise<{ stderr: string }> {
  const dir = makeTempDir('repgen-worker-process-');
  const child = spawn(process.execPath, ['bin/repgen.js', 'worker'], {
    env: {
      PATH: process.env.PATH,
      APP_ID: '1',
      PRIVATE_KEY: testPrivateKey(),
      REDIS_URL: redisUrl,
      REPGEN_QUEUE_PREFIX: `worker-process-${process.pid}-${i}`,
      // Nothing on GitHub's side: the lost-run sweep fails at once on a closed local port.
      GHE_HOST: '127.0.0.1:9',
      GHE_PROTOCOL: 'http',
      REPGEN_WORKDIR: dir,
      REPGEN_WORK_ROOT: join(dir, 'runs'),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  const started = new Promise<void>((resolve) =>
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
      if (until.split('|').every((line) => stderr.includes(line))) resolve();
    }),
  );
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  try {
    await Promise.race([started, exited]);
    // (Its exit status is not checked: a SIGTERM right after the start line can come before the signal handlers.)
    child.kill('SIGTERM');
    await exited;
    return { stderr };
  } finally {
    child.kill('SIGKILL');
  }
}

describe('repgen worker as a process', { timeout: 180_000 }, () => {
  it('starts and stops three times with no unhandled Redis error on stderr', async () => {
    for (let i = 0; i < 3; i++) {
      const { stderr } = await startAndStop(i);
      expect(stderr).toContain('repro worker started');
      expect(stderr).not.toMatch(/Unhandled error event|subscriber mode|\n\s+at /);
    }
  });

  it('with Redis unreachable: one warning line per failed connection, no unhandled error, no stack', async () => {
    const { stderr } = await startAndStop(9, {
      redisUrl: 'redis://127.0.0.1:1',
      until: '"connection":"commands"|"connection":"cancel subscriber"|queue error|queue events error',
    });
    expect(stderr).toMatch(
      /^warn Redis connection error \{"connection":"cancel subscriber","err":"connect ECONNREFUSED 127\.0\.0\.1:1"\}$/m,
    );
    expect(stderr).not.toMatch(/Unhandled error event|\n\s+at /);
  });
});
