/**
 * Env build: what RepGen's uv builder (src/env/uv-builder.ts) costs against uv itself, in one run.
 *
 *   npx tsx scripts/bench/env-build.ts [--packages numpy,torch] [--runs 5] [--find-links /opt/wheels] [--python /usr/bin/python3]
 *
 * 1. cold: a fresh cache, the spec built once (resolve in the sandbox through the index proxy, download, venv);
 *    its time and the venv's size (du of the venv alone: its files are hard links into uv's cache).
 * 2. cached reuse: the same spec again, `--runs` times (the lock and the venv are found; no network).
 * 3. cold, interleaved, up to 3 pairs: RepGen with an empty cache against plain `uv pip compile` (same flags:
 *    wheels only, the same local pin and find-links) + `uv venv` + `uv pip install` on the host with an empty cache.
 * 4. interleaved, `--runs` pairs: a new venv of the same lock from a warm uv cache, RepGen's way (sandbox with no network,
 *    lock file, `uv venv` + `uv pip sync --offline`, `.pth`, atomic rename; a new project layout each time so the
 *    venv is really made) against plain `uv venv` + `uv pip install -r lock --offline` on the host with its own
 *    warm cache. Medians and their ratio. Both link from the cache (hardlink mode).
 * Needs the network for the cold step (PyPI); prints the load average beside the numbers (2 shared cores).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { EnvSpec } from '../../src/env/types.js';
import { UvEnvBuilder } from '../../src/env/uv-builder.js';
import { findBinary, probeSandbox } from '../../src/exec/sandbox/sandbox.js';

const { values } = parseArgs({
  options: {
    packages: { type: 'string', default: 'numpy,torch' },
    runs: { type: 'string', default: '5' },
    'find-links': { type: 'string', default: '/opt/wheels' },
    python: { type: 'string', default: process.env.REPGEN_PYTHON ?? '/usr/bin/python3' },
  },
});
const runs = Number(values.runs);
const python = values.python as string;
const uv = findBinary('uv');
if (!uv) throw new Error('uv not found: run scripts/ensure-system.sh');
const root = mkdtempSync(join(tmpdir(), 'repgen-bench-env-'));
chmodSync(root, 0o711);
const plan = await probeSandbox('bwrap', { workRoot: tmpdir() });
const newBuilder = (name: string): UvEnvBuilder => new UvEnvBuilder({ cacheRoot: join(root, name), uv, basePython: python, plan });
const builder = newBuilder('cache');
const signal = new AbortController().signal;
const spec: EnvSpec = {
  python: null,
  pythonWhy: null,
  requirements: (values.packages as string).split(',').map((name) => ({ name, specifier: '', extras: [], source: 'config', why: 'bench' })),
  project: null,
  indexUrl: null,
  extraIndexUrls: [],
  findLinks: values['find-links'] ? [values['find-links']] : [],
  excludeNewer: null,
  buildCommands: [],
  notes: [],
};

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
const du = (path: string): string => execFileSync('du', ['-sh', path], { encoding: 'utf8' }).split('\t')[0] as string;

async function timed(s: EnvSpec, b = builder): Promise<{ ms: number; dir: string; lock: string; cached: boolean }> {
  const t = performance.now();
  const r = await b.build(s, { checkout: null, signal });
  const ms = performance.now() - t;
  if (!r.ok) throw new Error(`build failed: ${JSON.stringify(r.failure)}`);
  return { ms, dir: r.env.readOnlyPaths[0] as string, lock: r.env.lock, cached: r.env.cached };
}

const cold = await timed(spec);
console.log(`packages: ${values.packages} → ${cold.lock.trim().split('\n').length} pinned (${cold.lock.trim().split('\n').join(' ')})`);
console.log(`cold build: ${(cold.ms / 1000).toFixed(2)} s, venv ${du(cold.dir)} (load ${loadavg()[0]?.toFixed(2)})`);

const reuse: number[] = [];
for (let i = 0; i < runs; i++) reuse.push((await timed(spec)).ms);
console.log(`cached reuse: median ${median(reuse).toFixed(1)} ms over ${runs} (${reuse.map((x) => x.toFixed(0)).join(', ')})`);

// Plain uv on the host: the same steps (compile, venv, install) with its own cache.
const plainRoot = join(root, 'plain');
mkdirSync(plainRoot);
const lockFile = join(root, 'lock.txt');
const inFile = join(root, 'requirements.in');
writeFileSync(lockFile, cold.lock);
writeFileSync(inFile, spec.requirements.map((r) => `${r.name}\n`).join(''));
const torchPin = /^torch==(\S+)$/m.exec(cold.lock)?.[1];
const constraintFile = join(root, 'constraints.txt');
writeFileSync(constraintFile, torchPin?.includes('+') ? `torch==${torchPin}\n` : '');
const fl = spec.findLinks.flatMap((d) => ['--find-links', d]);
function plainInstall(dir: string, cache: string, compile: boolean): number {
  const env = {
    PATH: process.env.PATH ?? '',
    HOME: root,
    UV_CACHE_DIR: cache,
    UV_NO_CONFIG: '1',
    UV_PYTHON_DOWNLOADS: 'never',
    UV_LINK_MODE: 'hardlink',
  };
  const t = performance.now();
  const steps = [
    ...(compile
      ? [
          [
            'pip',
            'compile',
            '--quiet',
            inFile,
            '--constraint',
            constraintFile,
            '--python',
            python,
            '--only-binary',
            ':all:',
            ...fl,
            '-o',
            join(dir + '.lock'),
          ],
        ]
      : []),
    ['venv', '--quiet', '--python', python, dir],
    [
      'pip',
      'install',
      '--quiet',
      '-r',
      compile ? join(dir + '.lock') : lockFile,
      '--python',
      join(dir, 'bin', 'python'),
      ...fl,
      ...(compile ? [] : ['--offline']),
    ],
  ];
  for (const args of steps) {
    const r = spawnSync(uv as string, args, { env: { ...env, SSL_CERT_FILE: '/etc/ssl/certs/ca-certificates.crt' }, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`plain uv ${args.join(' ')} failed: ${r.stderr}`);
  }
  return performance.now() - t;
}

const coldOurs: number[] = [];
const coldTheirs: number[] = [];
for (let i = 0; i < Math.min(runs, 3); i++) {
  coldOurs.push((await timed(spec, newBuilder(`cold-${i}`))).ms);
  coldTheirs.push(plainInstall(join(plainRoot, `cold-${i}`), join(plainRoot, `cache-${i}`), true));
}
console.log(`cold (empty caches: resolve, download, venv), interleaved ×${coldOurs.length}:`);
console.log(`  RepGen: median ${(median(coldOurs) / 1000).toFixed(2)} s (${coldOurs.map((x) => (x / 1000).toFixed(2)).join(', ')})`);
console.log(
  `  plain uv compile + venv + install: median ${(median(coldTheirs) / 1000).toFixed(2)} s (${coldTheirs.map((x) => (x / 1000).toFixed(2)).join(', ')})`,
);
console.log(`  ratio RepGen / uv: ${(median(coldOurs) / median(coldTheirs)).toFixed(3)}`);
const warmCache = join(plainRoot, 'cache-0');

const ours: number[] = [];
const theirs: number[] = [];
for (let i = 0; i < runs; i++) {
  const layout = { root: '', importRoots: [`variant-${i}`], mode: 'pth' as const, distribution: null, extensions: [] };
  const o = await timed({ ...spec, project: layout });
  if (o.cached) throw new Error('expected a new venv');
  ours.push(o.ms);
  theirs.push(plainInstall(join(plainRoot, `v${i}`), warmCache, false));
}
const mo = median(ours);
const mt = median(theirs);
console.log(`new venv of a seen lock, warm cache, interleaved ×${runs}:`);
console.log(`  RepGen (sandbox, venv + sync --offline):    median ${mo.toFixed(0)} ms (${ours.map((x) => x.toFixed(0)).join(', ')})`);
console.log(`  plain uv venv + pip install --offline:     median ${mt.toFixed(0)} ms (${theirs.map((x) => x.toFixed(0)).join(', ')})`);
console.log(`  ratio RepGen / uv: ${(mo / mt).toFixed(3)} (load ${loadavg()[0]?.toFixed(2)})`);
rmSync(root, { recursive: true, force: true });
