import { spawnSync } from 'node:child_process';
import { mkdirSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { compiledState, newestSource, STAMP } from '../../src/cli/compiled-entry.mjs';
import { makeTempDir } from '../helpers/temp-dir.js';

const root = join(import.meta.dirname, '../..');

/** A package root with one source of each kind dist/ is built from, all written at `atMs`. */
function tree(atMs: number): string {
  const dir = makeTempDir('repgen-compiled-');
  for (const file of ['src/cli.ts', 'src/env/data/names.txt', 'workers/w.ts', 'prompts/system.md', 'package.json']) {
    mkdirSync(join(dir, file, '..'), { recursive: true });
    writeFileSync(join(dir, file), 'x');
    utimesSync(join(dir, file), atMs / 1000, atMs / 1000);
  }
  return dir;
}

const stamp = (dir: string, startedMs: number): void => {
  mkdirSync(join(dir, 'dist'), { recursive: true });
  writeFileSync(join(dir, STAMP), JSON.stringify({ startedMs }));
};

describe('compiledState: whether bin/repgen.js may run dist/', () => {
  it('missing: no stamp (never built, or the build failed)', () => {
    const dir = tree(1_000_000);
    expect(compiledState(dir)).toEqual({ fresh: false, reason: 'dist/.built.json is missing: run npm run build' });
  });

  it('fresh: every source older than the start of the build', () => {
    const dir = tree(1_000_000);
    stamp(dir, 2_000_000);
    expect(compiledState(dir)).toEqual({ fresh: true });
  });

  it.each(['src/env/data/names.txt', 'workers/w.ts', 'prompts/system.md', 'package.json'])(
    'stale: %s changed after the build started, and is named',
    (file) => {
      const dir = tree(1_000_000);
      stamp(dir, 2_000_000);
      utimesSync(join(dir, file), 3_000, 3_000);
      expect(newestSource(dir).path).toBe(file);
      expect(compiledState(dir)).toEqual({ fresh: false, reason: `${file} changed after the build: run npm run build` });
    },
  );
});

describe('the compiled output of this checkout', () => {
  // `npm ci` builds it (prepare); after editing a source, `npm run build`. bin/repgen.js falls back to tsx meanwhile,
  // but a checkout whose dist/ is stale runs every command at the slow start this build exists to avoid.
  it('is there and newer than every source (npm run build)', () => {
    expect(compiledState(root)).toEqual({ fresh: true });
  });

  it('is what bin/repgen.js runs: a command answers from dist/ without loading tsx', () => {
    const hook = "export async function resolve(s, c, next) { process.stderr.write('LOADED ' + s + '\\n'); return next(s, c); }";
    const register = `data:text/javascript,import{register}from'node:module';register('data:text/javascript,'+encodeURIComponent(${JSON.stringify(hook)}))`;
    const r = spawnSync(process.execPath, ['--import', register, join(root, 'bin/repgen.js'), 'help', 'reproduce'], { encoding: 'utf8' });
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('usage: repgen reproduce');
    const loaded = r.stderr.split('\n').filter((l) => l.startsWith('LOADED '));
    expect(loaded).toContain('LOADED ../dist/src/cli.js');
    expect(loaded.filter((l) => /tsx|\.ts$/.test(l))).toEqual([]);
  });
});
