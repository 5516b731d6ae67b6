import { chmodSync, rmSync } from 'node:fs';
import { createConnection } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalExecutor } from '../../../src/exec/local/executor.js';
import { fixtureFile } from '../executor-conformance.js';
import { makeTempDir } from '../../helpers/temp-dir.js';

/** A real Redis answers on 127.0.0.1:6379 here: the network namespace must hide it, and only it decides. */
const workRoot = makeTempDir('repgen-net-test-');
// Searchable by the sandbox's unprivileged uid (bwrap runs as it when the tests run as root).
chmodSync(workRoot, 0o755);
afterAll(() => rmSync(workRoot, { recursive: true, force: true }));

function redisAnswers(): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port: 6379 });
    socket.setTimeout(2000);
    socket.once('connect', () => {
      socket.end();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
  });
}

const request = { files: [fixtureFile('sandbox-network.py')], entry: 'sandbox-network.py', args: ['127.0.0.1', '6379'] };

describe.each([['bwrap', 'auto']] as const)('network isolation with %s', (sandbox, mode) => {
  const executor = createLocalExecutor({ workRoot, sandbox: mode });

  beforeAll(async () => {
    // The test means nothing unless the host itself reaches Redis.
    expect(await redisAnswers()).toBe(true);
  });

  it('network=false (the default): Redis on the host loopback is unreachable', async () => {
    const r = await executor.run(request);
    expect(r.isolation).toEqual({ network: 'none', sandbox, notes: [] });
    const line = JSON.parse(r.stdout) as { reached: boolean; error?: string };
    expect(line.reached).toBe(false);
    expect(line.error).toMatch(/ConnectionRefusedError|OSError|TimeoutError/);
    expect(r.exitCode).toBe(3);
  });

  it('network=true: the same script reaches Redis and gets PONG', async () => {
    const r = await executor.run({ ...request, network: true });
    expect(r.isolation).toEqual({ network: 'host', sandbox, notes: [] });
    expect(JSON.parse(r.stdout)).toEqual({ reached: true, reply: '+PONG' });
    expect(r.exitCode).toBe(0);
  });
});

describe('without a sandbox', () => {
  it('network=false cannot be honoured: the script reaches Redis and the result says so', async () => {
    const r = await createLocalExecutor({ workRoot, sandbox: 'none' }).run(request);
    expect(r.isolation.network).toBe('host');
    expect(r.isolation.notes.join('\n')).toContain('no sandbox (REPGEN_SANDBOX=none)');
    expect(JSON.parse(r.stdout)).toEqual({ reached: true, reply: '+PONG' });
  });
});
