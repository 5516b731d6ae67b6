import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { COMMANDS, main } from '../../src/cli.js';
import { SUMMARIES } from '../../src/cli/top-help.mjs';
import type { CliIo } from '../../src/cli/io.js';
import { makeTempDir } from '../helpers/temp-dir.js';
import { compiledState } from '../../src/cli/compiled-entry.mjs';

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

  it('`repgen --help`, bare `repgen` and `--version` as processes: answered without loading tsx, which a command loads', () => {
    const bin = join(import.meta.dirname, '../../bin/repgen.js');
    // A module hook records every import the process resolves: what is loaded, not how long it took, so that a
    // busy machine gives the same answer (the time itself: `time repgen --help` against `time repgen help k8s`).
    const dir = makeTempDir('repgen-cli-imports-');
    const hooks = join(dir, 'hooks.mjs');
    writeFileSync(
      hooks,
      `import { appendFileSync } from 'node:fs';\n` +
        `export async function resolve(specifier, context, next) {\n` +
        `  appendFileSync(process.env.REPGEN_TEST_IMPORTS, specifier + '\\n');\n  return next(specifier, context);\n}\n`,
    );
    const register = `data:text/javascript,import{register}from'node:module';register(${JSON.stringify(pathToFileURL(hooks).href)})`;
    const run = (args: string[]) => {
      const log = join(dir, `${args.join('_') || 'bare'}.log`);
      writeFileSync(log, '');
      const r = spawnSync(process.execPath, ['--import', register, bin, ...args], {
        encoding: 'utf8',
        env: { ...process.env, REPGEN_TEST_IMPORTS: log },
      });
      return { ...r, imports: readFileSync(log, 'utf8').split('\n').filter(Boolean) };
    };
    try {
      const help = run(['--help']);
      expect(help.status).toBe(0);
      expect(help.stdout).toContain('usage: repgen <command>');
      const bare = run([]);
      expect(bare.status).toBe(0);
      const version = run(['--version']);
      expect(version.stdout).toMatch(/^repgen \d+\.\d+\.\d+\n$/);
      for (const r of [help, bare, version]) {
        expect(r.imports).toContain('../src/cli/top-help.mjs');
        expect(r.imports.filter((i) => /tsx|\.ts$/.test(i))).toEqual([]);
      }
      // The same hook sees a command load the compiled CLI when dist/ is fresh, else tsx and the TypeScript sources.
      const full = run(['help', 'k8s']);
      expect(full.status).toBe(0);
      if (compiledState(join(import.meta.dirname, '../..')).fresh) {
        expect(full.imports).toContain('../dist/src/cli.js');
        expect(full.imports.filter((i) => /tsx|\.ts$/.test(i))).toEqual([]);
      } else {
        expect(full.imports).toContain('tsx/esm/api');
        expect(full.imports).toContain('../src/cli.ts');
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
