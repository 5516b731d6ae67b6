import { spawn } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeOwnedDir, processStart, reapWorkDirs, removeOwnedDir, selfIdentity } from '../../../src/exec/sandbox/reap-work-dirs.js';
import { silentLogger } from '../../../src/log.js';
import { makeTempDir } from '../../helpers/temp-dir.js';

let root: string;
let host: string;
beforeEach(() => {
  root = makeTempDir('reap-root-');
  host = makeTempDir('reap-host-');
});
afterEach(() => {
  rmSync(root, { recursive: true, force: true });
  rmSync(host, { recursive: true, force: true });
});

/** A folder as a process that has since died left it: its marker names a pid that no longer exists. */
async function deadOwnersDir(prefix: string): Promise<string> {
  const child = spawn(process.execPath, ['-e', '0']);
  await new Promise((r) => child.once('exit', r));
  const dir = mkdtempSync(join(root, prefix));
  const self = selfIdentity();
  writeFileSync(`${dir}.owner`, JSON.stringify({ pid: child.pid, start: '1', host: self.host, boot: self.boot, at: Date.now() - 120_000 }));
  return dir;
}

describe('reaping stale work folders', () => {
  it('reaps a dead owner’s folder and keeps a live one’s (this process’s), and logs what went', async () => {
    const live = await makeOwnedDir(root, 'repgen-run-');
    const dead = await deadOwnersDir('repgen-job-');
    const lines: string[] = [];
    const log = { ...silentLogger, info: (o: Record<string, unknown>, m: string) => lines.push(`${m} ${JSON.stringify(o)}`) };
    const reaped = await reapWorkDirs([root], log, { minAgeMs: 0 });
    expect(reaped.map((r) => r.path)).toEqual([dead]);
    expect(existsSync(dead)).toBe(false);
    expect(existsSync(`${dead}.owner`)).toBe(false);
    expect(existsSync(live)).toBe(true);
    expect(lines.join('\n')).toContain(dead);
    await removeOwnedDir(live);
    expect(existsSync(`${live}.owner`)).toBe(false);
  });

  it('a symlink to a host folder inside a stale folder: the link goes, its target and contents stay', async () => {
    writeFileSync(join(host, 'precious'), 'keep me');
    const dead = await deadOwnersDir('repgen-run-');
    mkdirSync(join(dead, 'deep'));
    symlinkSync(host, join(dead, 'deep', 'escape'));
    symlinkSync(join(host, 'precious'), join(dead, 'file-link'));
    await reapWorkDirs([root], silentLogger, { minAgeMs: 0 });
    expect(existsSync(dead)).toBe(false);
    expect(existsSync(join(host, 'precious'))).toBe(true);
  });

  it('a symlink planted under a RepGen name in the root is not followed', async () => {
    writeFileSync(join(host, 'precious'), 'keep me');
    symlinkSync(host, join(root, 'repgen-run-planted'));
    const old = new Date(Date.now() - 72 * 3_600_000);
    utimesSync(host, old, old);
    await reapWorkDirs([root], silentLogger, { minAgeMs: 0 });
    expect(lstatSync(join(root, 'repgen-run-planted')).isSymbolicLink()).toBe(true);
    expect(existsSync(join(host, 'precious'))).toBe(true);
  });

  it('a forged marker pointing at a live pid of another start time does not protect a folder', async () => {
    const dir = mkdtempSync(join(root, 'repgen-run-'));
    const self = selfIdentity();
    writeFileSync(
      `${dir}.owner`,
      JSON.stringify({ pid: process.pid, start: 'not-mine', host: self.host, boot: self.boot, at: Date.now() - 120_000 }),
    );
    expect(processStart(process.pid)).not.toBe('not-mine');
    await reapWorkDirs([root], silentLogger, { minAgeMs: 0 });
    expect(existsSync(dir)).toBe(false);
  });

  it('leaves an unmarked folder alone until the max age (it may be another version’s, or mid-creation)', async () => {
    const dead = await deadOwnersDir('repgen-run-');
    const young = mkdtempSync(join(root, 'repgen-run-'));
    await reapWorkDirs([root], silentLogger, { minAgeMs: 0 });
    expect(existsSync(dead)).toBe(false);
    expect(existsSync(young)).toBe(true);
  });
});
