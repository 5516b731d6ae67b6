import { describe, expect, it } from 'vitest';
import { appCommand } from '../../src/cli/app-command.js';
import type { CliIo } from '../../src/cli/io.js';

function io(env: NodeJS.ProcessEnv = {}): CliIo & { out: string } {
  const o: CliIo & { out: string } = { out: '', cwd: '/', env, stdout: (t) => void (o.out += t), stderr: () => undefined };
  return o;
}

describe('appCommand', () => {
  it('prints its help and starts nothing on --help', async () => {
    let started = false;
    const cmd = appCommand('x', 'usage: repgen x\n', async () => {
      started = true;
      return async () => undefined;
    });
    const t = io();
    expect(await cmd.run(['--help'], t)).toBe(0);
    expect(t.out).toBe('usage: repgen x\n');
    expect(started).toBe(false);
  });

  it('refuses a bad App setting before starting anything', async () => {
    let started = false;
    const cmd = appCommand('x', 'help', async () => {
      started = true;
      return async () => undefined;
    });
    await expect(cmd.run([], io({ REPGEN_WORKER_CONCURRENCY: 'lots' }))).rejects.toThrow(/REPGEN_WORKER_CONCURRENCY/);
    expect(started).toBe(false);
  });

  it('runs until SIGTERM, then awaits the close it was given', async () => {
    let closed = false;
    const cmd = appCommand('x', 'help', async () => async () => {
      closed = true;
    });
    const running = cmd.run([], io({}));
    await new Promise((r) => setTimeout(r, 20));
    expect(closed).toBe(false);
    process.emit('SIGTERM');
    expect(await running).toBe(0);
    expect(closed).toBe(true);
  });
});
