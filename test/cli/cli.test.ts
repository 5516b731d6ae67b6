import { describe, expect, it } from 'vitest';
import { main } from '../../src/cli.js';
import type { CliIo } from '../../src/cli/io.js';

function captureIo(): CliIo & { out: string[]; err: string[] } {
  const out: string[] = [];
  const err: string[] = [];
  return { out, err, stdout: (t) => void out.push(t), stderr: (t) => void err.push(t), env: {}, cwd: process.cwd() };
}

describe('repgen cli', () => {
  it('prints usage and exits 2 without a command', async () => {
    const io = captureIo();
    expect(await main([], io)).toBe(2);
    expect(io.out.join('')).toContain('usage: repgen <command>');
  });

  it('exits 0 for --help', async () => {
    const io = captureIo();
    expect(await main(['--help'], io)).toBe(0);
  });

  it('rejects an unknown command with one line and exit 2', async () => {
    const io = captureIo();
    expect(await main(['frobnicate'], io)).toBe(2);
    expect(io.err.join('')).toMatch(/^repgen: unknown command 'frobnicate'.*\n$/);
  });
});

describe('repgen cli dispatch', () => {
  it('lists every subcommand in the help', async () => {
    const io = captureIo();
    await main(['--help'], io);
    for (const name of ['run', 'context', 'reproduce', 'bench', 'serve', 'worker', 'k8s']) {
      expect(io.out.join('')).toMatch(new RegExp(`^  ${name} `, 'm'));
    }
  });

  it("loads a subcommand in-process and prints its help", async () => {
    const io = captureIo();
    expect(await main(['run', '--help'], io)).toBe(0);
    expect(io.out.join('')).toContain('repgen run');
  });

  it('maps a usage error to one line and exit 2', async () => {
    const io = captureIo();
    expect(await main(['run', '--no-such-flag'], io)).toBe(2);
    expect(io.err.join('')).toMatch(/^repgen run: .*\n$/);
  });
});
