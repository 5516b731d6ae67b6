// Issue 38 item 4: what copying (UV_LINK_MODE=copy) instead of hard-linking, a uv cache per build scope, and sealing a
// finished env (src/env/build/seal-env.ts) cost. Plain uv on the host (link mode and cache are uv's own costs, the sandbox
// adds the same to each), the wheel from a local folder, no network:
//   npx tsx scripts/bench/env-cache-modes.ts [--wheel /opt/wheels/torch-…whl] [--runs 3]
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { sealBroken, sealEnv } from '../../src/env/build/seal-env.js';
import { PINNED_UV } from '../../src/env/uv-builder.js';

const { values } = parseArgs({
  options: { wheel: { type: 'string' }, runs: { type: 'string', default: '3' }, python: { type: 'string', default: '/usr/bin/python3' } },
});
const wheel = values.wheel ?? join('/opt/wheels', readdirSync('/opt/wheels').find((f) => f.endsWith('.whl')) ?? '');
const runs = Number(values.runs);

function uv(args: string[], cache: string, mode: string): number {
  const started = performance.now();
  execFileSync(PINNED_UV, args, {
    env: { PATH: '/usr/bin:/bin', UV_CACHE_DIR: cache, UV_LINK_MODE: mode, UV_NO_CONFIG: '1', UV_OFFLINE: '1' },
    stdio: 'pipe',
  });
  return performance.now() - started;
}
function install(dir: string, cache: string, mode: string, name: string): number {
  const venv = join(dir, name);
  uv(['venv', '--quiet', '--python', values.python as string, venv], cache, mode);
  return uv(['pip', 'install', '--quiet', '--no-deps', '--python', join(venv, 'bin', 'python'), wheel], cache, mode);
}
function diskMb(paths: string[]): number {
  // du counts a hard-linked file once across all the paths given.
  return Number(
    execFileSync('du', ['-sm', '-c', ...paths], { encoding: 'utf8' })
      .trim()
      .split('\n')
      .pop()
      ?.split('\t')[0],
  );
}
const cpuMs = (u: NodeJS.CpuUsage): number => (u.user + u.system) / 1000;
const med = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

const rows: Record<string, number[]> = {};
const add = (k: string, v: number): void => void (rows[k] ??= []).push(v);
for (let i = 0; i < runs; i++) {
  for (const mode of ['hardlink', 'copy']) {
    const dir = mkdtempSync(join(tmpdir(), 'repgen-cache-modes-'));
    const cache = join(dir, 'cache');
    add(`${mode}: cold (empty cache)`, install(dir, cache, mode, 'v1'));
    add(`${mode}: warm (same cache)`, install(dir, cache, mode, 'v2'));
    add(`${mode}: disk MB, cache + 2 venvs`, diskMb([cache, join(dir, 'v1'), join(dir, 'v2')]));
    if (mode === 'copy') {
      // Another scope: its own cache, so cold again, and the wheel's files once more on disk.
      add('copy, 2 scopes: second scope (its own empty cache)', install(dir, join(dir, 'cache2'), mode, 'v3'));
      add(
        'copy, 2 scopes: disk MB, 2 caches + 3 venvs',
        diskMb([cache, join(dir, 'cache2'), ...['v1', 'v2', 'v3'].map((v) => join(dir, v))]),
      );
      let t = performance.now();
      let cpu = process.cpuUsage();
      await sealEnv(join(dir, 'v1'), { uid: process.geteuid?.() ?? 0, gid: process.getegid?.() ?? 0 });
      add('seal (chown, chmod, manifest)', performance.now() - t);
      add('seal, CPU ms of this process', cpuMs(process.cpuUsage(cpu)));
      t = performance.now();
      cpu = process.cpuUsage();
      const broken = await sealBroken(join(dir, 'v1'), { uid: process.geteuid?.() ?? 0 });
      add('verify before use (stat walk vs manifest)', performance.now() - t);
      add('verify, CPU ms of this process', cpuMs(process.cpuUsage(cpu)));
      if (broken) throw new Error(`sealed env reads as broken: ${broken}`);
      add('files in the venv', Number(execFileSync('sh', ['-c', `find '${join(dir, 'v1')}' | wc -l`], { encoding: 'utf8' })));
    }
    execFileSync('chmod', ['-R', 'u+w', dir]);
    rmSync(dir, { recursive: true, force: true });
  }
}
console.log(`${wheel}, ${runs} runs, load ${execFileSync('cat', ['/proc/loadavg'], { encoding: 'utf8' }).trim()}`);
for (const [k, v] of Object.entries(rows)) console.log(`| ${k} | ${Math.round(med(v))} | ${v.map((x) => Math.round(x)).join(', ')} |`);
