import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SLOW_SUITES } from '../../vitest.quick.config.js';
import { globRegExp } from '../../vitest.slow-suites.js';

const root = resolve(import.meta.dirname, '../..');

function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return testFiles(path);
    return e.name.endsWith('.test.ts') ? [relative(root, path)] : [];
  });
}

describe('npm run test:quick (vitest.quick.config.ts)', () => {
  const files = testFiles(join(root, 'test'));

  it('leaves out only suites that exist: a moved or renamed slow file would otherwise slip into the quick run', () => {
    expect(SLOW_SUITES.filter((glob) => !files.some((f) => globRegExp(glob).test(f)))).toEqual([]);
  });

  it('still runs most suites, and docs/development.md names each one it leaves out', () => {
    const left = files.filter((f) => SLOW_SUITES.some((glob) => globRegExp(glob).test(f)));
    expect(left.length).toBeGreaterThan(0);
    expect(left.length).toBeLessThan(files.length / 3);
    const doc = readFileSync(join(root, 'docs/development.md'), 'utf8');
    expect(SLOW_SUITES.filter((glob) => !doc.includes(`\`${glob}\``))).toEqual([]);
  });

  it('reads the glob forms the list uses', () => {
    expect(globRegExp('test/**/*.redis.test.ts').test('test/workers/repro-worker.redis.test.ts')).toBe(true);
    expect(globRegExp('test/**/*.redis.test.ts').test('test/workers/commands.test.ts')).toBe(false);
    expect(globRegExp('test/exec/warm/**').test('test/exec/warm/pool.test.ts')).toBe(true);
    expect(globRegExp('test/exec/warm/**').test('test/exec/warmth.test.ts')).toBe(false);
  });
});
