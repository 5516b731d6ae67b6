import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ensureNativeLauncher } from '../../../src/exec/sandbox/launcher-native.js';
import { parseLauncherReport } from '../../../src/exec/sandbox/launcher.js';
import { makeTempDir } from '../../helpers/temp-dir.js';

const root = makeTempDir('repgen-native-launcher-');
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('ensureNativeLauncher', () => {
  it('builds the launcher once into a cache folder only we can write (others read: bwrap runs as another uid)', async () => {
    const first = await ensureNativeLauncher(root);
    expect(first.path).toMatch(/repgen-launcher-\d+\/launcher-[0-9a-f]{16}$/);
    const path = first.path as string;
    expect(statSync(join(path, '..')).mode & 0o777).toBe(0o755);
    expect(await ensureNativeLauncher(root)).toEqual(first);
  });

  it('speaks the launcher protocol: limits, wait4 report on fd 3, exit status passed on', async () => {
    const { path } = await ensureNativeLauncher(root);
    const run = (argv: string[]) =>
      spawnSync(path as string, ['5', String(2 ** 30), String(2 ** 20), '0', '300', '200', ...argv], {
        stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
      });
    const ok = run(['/usr/bin/python3', '-c', 'import sys; print("hi"); sys.exit(4)']);
    expect(ok.status).toBe(4);
    expect(String(ok.stdout)).toBe('hi\n');
    const report = parseLauncherReport(String(ok.output[3]));
    expect(report.started).toBe(true);
    expect(report.exit?.exitCode).toBe(4);
    expect(report.exit?.peakMemoryMb).toBeGreaterThan(1);
    const limits = run([
      '/usr/bin/python3',
      '-c',
      'import resource as r\nfor k in "CPU DATA FSIZE CORE NPROC NOFILE".split(): print(*r.getrlimit(getattr(r, "RLIMIT_" + k)))',
    ]);
    expect(String(limits.stdout).split('\n').slice(0, 6)).toEqual([
      '5 6', // hard limit: 1 s (or 10 %) after the soft one, for scripts that ignore SIGXCPU
      `${2 ** 30} ${2 ** 30}`,
      `${2 ** 20} ${2 ** 20}`,
      '0 0',
      '300 300',
      '200 200',
    ]);
    const missing = run(['/nonexistent/python']);
    expect(missing.status).toBe(127);
    expect(parseLauncherReport(String(missing.output[3])).execError).toBe('/nonexistent/python: No such file or directory');
  });

  it('refuses a cache folder others could write to, rather than run a binary they could swap', async () => {
    const shared = join(root, 'shared');
    mkdirSync(join(shared, `repgen-launcher-${process.getuid?.() ?? -1}`), { recursive: true });
    chmodSync(join(shared, `repgen-launcher-${process.getuid?.() ?? -1}`), 0o777);
    const r = await ensureNativeLauncher(shared);
    expect(r.path).toBeNull();
    expect('reason' in r && r.reason).toMatch(/is not a private directory of this user/);
  });
});
