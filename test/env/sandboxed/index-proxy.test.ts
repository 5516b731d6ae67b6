import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startIndexProxy } from '../../../src/env/sandboxed/index-proxy.js';
import { makeTempDir } from '../../helpers/temp-dir.js';

describe('the index proxy socket', () => {
  it('listens at the path it is given and removes it on close', async () => {
    const socket = join(makeTempDir('repgen-proxy-'), 'proxy.sock');
    const proxy = await startIndexProxy(socket, ['127.0.0.1']);
    expect(proxy.socketPath).toBe(socket);
    expect(existsSync(socket)).toBe(true);
    await proxy.close();
    expect(existsSync(socket)).toBe(false);
  });

  it('refuses a path past a Unix socket’s 107 bytes, naming the setting to shorten, instead of listening at a cut path', async () => {
    const dir = makeTempDir('repgen-proxy-');
    const socket = join(dir, 'x'.repeat(Math.max(1, 108 - dir.length)), 'proxy.sock');
    await expect(startIndexProxy(socket, ['127.0.0.1'])).rejects.toThrow(/longer than 107 bytes.*REPGEN_ENV_CACHE/);
  });
});
