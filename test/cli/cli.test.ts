import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { COMMANDS, main } from '../../src/cli.js';
import { SUMMARIES } from '../../src/cli/top-help.mjs';
import type { CliIo } from '../../src/cli/io.js';

function captureIo(): CliIo & { out: string[]; err: string[] } {
  const out: string[] = [];
  const err: string[] = [];
  return { out, err, stdout: (t) => void out.push(t), stderr: (t) => void err.push(t), env: {}, cwd: process.cwd() };
}

describe('repgen cli', () => {
  it('prints usage and exits 0 without a command (asking for nothing is not an error)', async () => {
    const io = captureIo();
    expect(await main([], io)).toBe(0);
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

  it('loads a subcommand in-process and prints its help', async () => {
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

describe('repgen --version, help CMD, fast --help', () => {
  it('--version prints the package version', async () => {
    const io = captureIo();
    expect(await main(['--version'], io)).toBe(0);
    const pkg = JSON.parse(readFileSync(join(import.meta.dirname, '../../package.json'), 'utf8')) as { version: string };
    expect(io.out.join('')).toBe(`repgen ${pkg.version}\n`);
  });

  it("help CMD prints that command's help, the same as CMD --help; help of an unknown command is one line and exit 2", async () => {
    const a = captureIo();
    const b = captureIo();
    expect(await main(['help', 'run'], a)).toBe(0);
    expect(await main(['run', '--help'], b)).toBe(0);
    expect(a.out.join('')).toBe(b.out.join(''));
    expect(a.out.join('')).toContain('repgen run');
    const c = captureIo();
    expect(await main(['help', 'nope'], c)).toBe(2);
    expect(c.err.join('')).toMatch(/^repgen: unknown command 'nope'.*\n$/);
  });

  it("the top help's summaries are each command module's own (the help itself loads no command)", async () => {
    for (const [name, load] of Object.entries(COMMANDS)) {
      const { command } = await load();
      expect(SUMMARIES[name as keyof typeof SUMMARIES], name).toBe(command.summary);
    }
    const src = readFileSync(join(import.meta.dirname, '../../src/cli.ts'), 'utf8');
    expect(src).not.toMatch(/^import .*\/commands\//m);
  });

  it('`repgen --help`, bare `repgen` and `--version` as processes: answered without tsx, well under the time of one that loads it', () => {
    const bin = join(import.meta.dirname, '../../bin/repgen.js');
    const time = (args: string[]) => {
      const t = performance.now();
      const r = spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8', timeout: 30_000 });
      return { ms: performance.now() - t, ...r };
    };
    const help = time(['--help']);
    expect(help.status).toBe(0);
    expect(help.stdout).toContain('usage: repgen <command>');
    expect(time([]).status).toBe(0);
    expect(time(['--version']).stdout).toMatch(/^repgen \d+\.\d+\.\d+\n$/);
    // Same-machine ratio, not an absolute number: the test machine is shared. A run that loads tsx and a command.
    const full = time(['help', 'k8s']);
    expect(full.status).toBe(0);
    expect(help.ms).toBeLessThan(full.ms);
  });
});
