import { describe, expect, it } from 'vitest';
import { command as serve } from '../../src/commands/serve.js';
import { command as worker } from '../../src/commands/worker.js';
import { SetupError } from '../../src/errors.js';
import type { CliIo } from '../../src/cli/io.js';
import { testPrivateKey } from '../github/webhook-fixtures.js';

/** `repgen serve` / `repgen worker` refuse bad settings with a SetupError naming the variable (the CLI prints its one line, exit 2). */
function io(env: NodeJS.ProcessEnv): CliIo & { err: () => string; out: () => string } {
  const out: string[] = [];
  const err: string[] = [];
  return {
    stdout: (t) => void out.push(t),
    stderr: (t) => void err.push(t),
    env,
    cwd: process.cwd(),
    err: () => err.join(''),
    out: () => out.join(''),
  };
}

describe('repgen serve / worker settings', () => {
  it.each([
    ['worker', {}, /APP_ID is not set/],
    ['worker', { APP_ID: 'abc' }, /APP_ID: must be the numeric GitHub App id/],
    ['worker', { APP_ID: '1' }, /PRIVATE_KEY \(or PRIVATE_KEY_PATH\) is not set/],
    ['worker', { APP_ID: '1', PRIVATE_KEY: 'not a key' }, /PRIVATE_KEY is not a PEM private key/],
    ['worker', { APP_ID: '1', PRIVATE_KEY_PATH: '/nonexistent/key.pem' }, /^PRIVATE_KEY_PATH: '\/nonexistent\/key.pem' does not exist$/],
    [
      'worker',
      { APP_ID: '1', PRIVATE_KEY_PATH: '/dev/zero' },
      /^PRIVATE_KEY_PATH: '\/dev\/zero' is a character device, not a regular file$/,
    ],
    ['worker', { REPGEN_WORKER_CONCURRENCY: '0' }, /REPGEN_WORKER_CONCURRENCY: Too small/],
    ['worker', { APP_ID: '1', PRIVATE_KEY: 'KEY', REPGEN_PYTHON: '/bin/true' }, /^REPGEN_PYTHON '\/bin\/true' is not a Python interpreter/],
    ['serve', { APP_ID: '1', PRIVATE_KEY: 'KEY' }, /WEBHOOK_SECRET is not set/],
    ['serve', { PORT: 'eighty' }, /PORT: /],
    ['serve', { GHE_PROTOCOL: 'ftp' }, /GHE_PROTOCOL: /],
  ])('%s with %j', async (cmd, env, message) => {
    const resolved = Object.fromEntries(Object.entries(env).map(([k, v]) => [k, v === 'KEY' ? testPrivateKey() : v]));
    const run = (cmd === 'serve' ? serve : worker).run([], io(resolved));
    await expect(run).rejects.toBeInstanceOf(SetupError);
    await expect(run).rejects.toThrow(message);
  });

  it('prints help', async () => {
    const c = io({});
    expect(await worker.run(['--help'], c)).toBe(0);
    expect(c.out()).toContain('usage: repgen worker');
  });
});
