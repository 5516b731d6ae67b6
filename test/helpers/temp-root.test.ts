import { existsSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { makeTempDir, removeTempDirs } from './temp-dir.js';
import setupTempRoot from './temp-root.js';

// The run's own TMPDIR and exit code: each test sets up a temp root inside the run's and must leave both as they were.
const runTmp = process.env.TMPDIR;
const runExitCode = process.exitCode;
afterEach(() => {
  process.env.TMPDIR = runTmp;
  process.exitCode = runExitCode;
});

describe('the test run temp root (vitest globalSetup)', () => {
  it('points TMPDIR at a fresh root of its own, writable by every uid like /tmp, and removes it at the end', () => {
    const teardown = setupTempRoot();
    // TMPDIR as the run's processes read it (os.tmpdir() reads the C environment, which an earlier file in this
    // worker may have cut off from process.env by assigning it a copy).
    const root = process.env.TMPDIR ?? '';
    expect(root).toBe(join(runTmp ?? '', `repgen-test-${process.pid}`));
    expect(statSync(root).mode & 0o7777).toBe(0o1777);
    // A test that removes what it makes, and the caches kept on purpose.
    expectRemovedAtFileEnd(makeTempDir('repgen-clean-'));
    mkdirSync(join(root, 'repgen-probe-cache'));
    mkdirSync(join(root, 'tsx-0'));
    expect(() => teardown()).not.toThrow();
    expect(process.exitCode).toBe(runExitCode);
    expect(process.env.TMPDIR).toBe(runTmp);
    expect(existsSync(root)).toBe(false);
  });

  it('fails the run and names what a test left behind, and still removes it', () => {
    const teardown = setupTempRoot();
    const root = process.env.TMPDIR ?? '';
    mkdirSync(join(root, 'repgen-judge-abc123'));
    writeFileSync(join(root, 'repgen-judge-abc123', 'out.txt'), 'x');
    writeFileSync(join(root, 'stray.txt'), 'x');
    expect(() => teardown()).toThrow(
      /left 2 folder\(s\) or file\(s\) in their temp root \(now removed\): repgen-judge-abc123, stray\.txt\./,
    );
    expect(process.exitCode).toBe(1);
    expect(existsSync(root)).toBe(false);
  });
});

function expectRemovedAtFileEnd(dir: string): void {
  expect(existsSync(dir)).toBe(true);
  removeTempDirs();
  expect(existsSync(dir)).toBe(false);
}
