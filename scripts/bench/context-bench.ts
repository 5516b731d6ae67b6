/**
 * Benchmarks the context builder on a large repository checkout (never committed: fetch it and
 * `git --git-dir=… archive HEAD | tar -x -C /tmp/…`).
 *
 *   npx tsx scripts/bench/context-bench.ts --repo /tmp/ctx/diffusers [--lexical bm25|minisearch|lunr] [--queries N] [--workers N]
 *       [--embed-model DIR --embed-sample N] [--code src|dist] [--baseline DIR --rounds N]
 *
 * Each phase runs in its own process so that its peak RSS is its own:
 *   floor   read every indexed file and parse every Python file with tree-sitter once, on one thread; run before
 *           and after the cold build, and the two averaged, so that a machine whose load moves during the run
 *           still gives a fair ratio
 *   cold    buildContext with empty caches (embeddings excluded), then N queries on the in-memory index (p50/p95)
 *   cached  buildContext in a fresh process whose disk cache holds the index (what a second run pays)
 *   embed   chunks/s of the embedding model over a sample of chunks (reported apart from cold)
 * `--code dist` loads the compiled JavaScript (`npm run build`), which the CLI and the workers run; `--baseline DIR`
 * runs the cold and cached phases here and on DIR's checkout in turn and prints the medians and their ratios.
 * Each phase also reports its CPU time (every thread of the process): on a shared machine the wall times move
 * with the others' load, the CPU times much less. The cold build runs on REPGEN_CONTEXT_WORKERS threads (default:
 * the cores); `--workers 1` measures the single-thread build.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { createRequire } from 'node:module';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    repo: { type: 'string' },
    lexical: { type: 'string', default: 'bm25' },
    queries: { type: 'string', default: '30' },
    phase: { type: 'string' },
    cache: { type: 'string' },
    'embed-model': { type: 'string' },
    'embed-sample': { type: 'string', default: '500' },
    workers: { type: 'string' },
    code: { type: 'string', default: 'src' },
    root: { type: 'string' },
    baseline: { type: 'string' },
    rounds: { type: 'string', default: '3' },
  },
});

/**
 * Which build of the context code the phases load: `src` (the TypeScript through tsx, as in development) or `dist`
 * (the compiled JavaScript `npm run build` makes, which the CLI, the worker and the index workers run).
 */
if (values.code !== 'src' && values.code !== 'dist') throw new Error('--code is src or dist');
const here = resolve(fileURLToPath(new URL('../..', import.meta.url)));
/** The checkout whose code a phase loads: this one, or `--baseline`'s in the interleaved comparison. */
const CODE = join(resolve(values.root ?? here), values.code === 'dist' ? 'dist/src' : 'src');
if (values.code === 'dist' && !existsSync(join(CODE, 'context/index.js')))
  throw new Error(`${CODE} has no compiled context code: run npm run build there first`);
/** A context module of the chosen build and checkout. */
function ctx<T>(path: string): Promise<T> {
  return import(pathToFileURL(join(CODE, 'context', path)).href) as Promise<T>;
}

const REPORTS_DIR = '/work/shared/bench/repo-bugs';

function reports(n: number): Array<{ title?: string; body: string }> {
  const out: Array<{ title?: string; body: string }> = [];
  for (const name of ['timm-807', 'timm-2139', 'timm-2594', 'keras-19689', 'keras-21831', 'keras-22586']) {
    try {
      out.push({ body: readFileSync(join(REPORTS_DIR, name, 'issue.md'), 'utf8') });
    } catch {
      // The bench still runs without the shared reports.
    }
  }
  const prose = [
    'Loss becomes NaN after a few steps when training with fp16 and gradient accumulation',
    'UNet2DConditionModel forward fails with a shape mismatch when the sample size is not divisible by 8',
    'scheduler.step returns the wrong timestep when set_timesteps is called twice',
    'Attention processor ignores the attention mask when using scaled dot product attention',
    'LoRA weights fail to load: KeyError on unet.down_blocks.0.attentions.0',
    'RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!',
    'VAE decode produces black images with float16',
    'Training script crashes when resuming from checkpoint with EMA enabled',
  ];
  while (out.length < n)
    out.push({ title: prose[out.length % prose.length]!, body: `${prose[(out.length * 3) % prose.length]!} (case ${out.length})` });
  return out.slice(0, n);
}

function rssMb(): number {
  return Math.round(process.resourceUsage().maxRSS / 1024);
}

/** CPU milliseconds (user + system, all threads of this process) since `from`. */
function cpuMs(from: NodeJS.CpuUsage): number {
  const d = process.cpuUsage(from);
  return Math.round((d.user + d.system) / 1000);
}

async function phaseFloor(repo: string): Promise<Record<string, number>> {
  const { walkRepo } = await ctx<typeof import('../../src/context/walk-repo.js')>('walk-repo.js');
  const { loadPythonParser } = await ctx<typeof import('../../src/context/python-parser.js')>('python-parser.js');
  const py = await loadPythonParser();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const { files } = await walkRepo(repo, { maxFileBytes: 1_000_000 });
  const t1 = performance.now();
  let bytes = 0;
  for (const f of files) {
    bytes += f.text.length;
    if (f.language === 'python') py.parser.parse(f.text)?.delete();
  }
  const t2 = performance.now();
  return {
    files: files.length,
    megabytes: Math.round(bytes / 1e5) / 10,
    readMs: Math.round(t1 - t0),
    parseMs: Math.round(t2 - t1),
    floorMs: Math.round(t2 - t0),
    floorCpuMs: cpuMs(cpu0),
    peakRssMb: rssMb(),
  };
}

async function phaseCold(repo: string, cache: string, lexical: string, n: number): Promise<Record<string, number>> {
  const { buildContext } = await ctx<typeof import('../../src/context/index.js')>('index.js');
  const { IndexLru } = await ctx<typeof import('../../src/context/index/cache.js')>('index/cache.js');
  const memory = new IndexLru(2);
  const env = { REPGEN_LEXICAL: lexical, ...(values.workers ? { REPGEN_CONTEXT_WORKERS: values.workers } : {}) };
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const first = await buildContext(
    { repoDir: repo, report: reports(1)[0]! },
    { embedder: null, crossEncoder: null, cacheDir: cache, env, memory },
  );
  const coldMs = performance.now() - t0;
  const coldCpuMs = cpuMs(cpu0);
  const afterBuildRss = rssMb();
  const times: number[] = [];
  const queryOnly: number[] = [];
  for (const report of reports(n)) {
    const t = performance.now();
    const r = await buildContext({ repoDir: repo, report }, { embedder: null, crossEncoder: null, cacheDir: cache, env, memory });
    if (r.cache !== 'memory') throw new Error('expected a memory hit');
    times.push(performance.now() - t);
    // The query itself: everything after the commit identity check (search, fusion, re-rank, closure, bundles).
    queryOnly.push((r.timings.totalMs ?? 0) - (r.timings.identifyMs ?? 0));
  }
  times.sort((a, b) => a - b);
  queryOnly.sort((a, b) => a - b);
  const pctOf = (xs: number[], p: number): number => Math.round(xs[Math.min(xs.length - 1, Math.floor(p * xs.length))]! * 10) / 10;
  const pct = (p: number): number => pctOf(times, p);
  return {
    coldMs: Math.round(coldMs),
    coldCpuMs,
    ...Object.fromEntries(Object.entries(first.timings).map(([k, v]) => [`cold.${k}`, v])),
    queries: n,
    queryP50Ms: pct(0.5),
    queryP95Ms: pct(0.95),
    queryOnlyP50Ms: pctOf(queryOnly, 0.5),
    queryOnlyP95Ms: pctOf(queryOnly, 0.95),
    queryMaxMs: Math.round(times[times.length - 1]!),
    rssAfterBuildMb: afterBuildRss,
    peakRssMb: rssMb(),
  };
}

async function phaseCached(repo: string, cache: string, lexical: string): Promise<Record<string, number>> {
  const { buildContext } = await ctx<typeof import('../../src/context/index.js')>('index.js');
  // Since the process started: Node's start, tsx and the transpile of src/context. A user pays it too, but
  // it is not the cache's to cut, so it is reported beside cachedMs, not in it.
  const startupMs = performance.now();
  const cpuAtStart = process.cpuUsage();
  const t0 = performance.now();
  const r = await buildContext(
    { repoDir: repo, report: reports(1)[0]! },
    { embedder: null, crossEncoder: null, cacheDir: cache, env: { REPGEN_LEXICAL: lexical } },
  );
  const ms = performance.now() - t0;
  if (r.cache !== 'disk') throw new Error(`expected a disk hit, got ${r.cache}`);
  return {
    cachedMs: Math.round(ms),
    cachedCpuMs: cpuMs(cpuAtStart),
    startupMs: Math.round(startupMs),
    startupCpuMs: cpuMs({ user: 0, system: 0 }) - cpuMs(cpuAtStart),
    ...Object.fromEntries(Object.entries(r.timings).map(([k, v]) => [`cached.${k}`, v])),
    peakRssMb: rssMb(),
  };
}

async function phaseEmbed(repo: string, model: string, sample: number): Promise<Record<string, number>> {
  const { walkRepo } = await ctx<typeof import('../../src/context/walk-repo.js')>('walk-repo.js');
  const { chunkRepo, embedChunks } = await ctx<typeof import('../../src/context/index/build-index.js')>('index/build-index.js');
  const { createTransformersEmbedder } = await ctx<typeof import('../../src/context/transformers-embedder.js')>('transformers-embedder.js');
  const { files } = await walkRepo(repo, { maxFileBytes: 1_000_000 });
  const { chunks } = await chunkRepo(files);
  const step = Math.max(1, Math.floor(chunks.length / sample));
  const picked = chunks.filter((_, i) => i % step === 0).slice(0, sample);
  const embedder = await createTransformersEmbedder({ model });
  const t0 = performance.now();
  await embedChunks(picked, embedder, { batch: 32, maxTokens: 256 });
  const s = (performance.now() - t0) / 1000;
  return {
    embeddedChunks: picked.length,
    embedSeconds: Math.round(s * 10) / 10,
    chunksPerSecond: Math.round(picked.length / s),
    repoChunks: chunks.length,
    peakRssMb: rssMb(),
  };
}

async function child(): Promise<void> {
  const repo = values.repo!;
  const phase = values.phase!;
  const lexical = values.lexical!;
  const result =
    phase === 'floor'
      ? await phaseFloor(repo)
      : phase === 'cold'
        ? await phaseCold(repo, values.cache!, lexical, Number(values.queries))
        : phase === 'cached'
          ? await phaseCached(repo, values.cache!, lexical)
          : await phaseEmbed(repo, values['embed-model']!, Number(values['embed-sample']));
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

/**
 * With `--code dist` a phase runs on plain node, as the CLI does: tsx in the phase's process would add its loader
 * thread (about 40 MB of RSS) to what is measured. This script, transpiled once by esbuild (tsx's own), runs there;
 * it has no static import beyond node's, so it runs from any folder. The folder goes when the run ends.
 */
let transpiled: string | null = null;
function phaseEntry(): string[] {
  if (values.code !== 'dist') return ['--import', 'tsx', fileURLToPath(import.meta.url)];
  if (!transpiled) {
    const dir = mkdtempSync(join(tmpdir(), 'repgen-bench-js-'));
    process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
    transpiled = join(dir, 'context-bench.mjs');
    const source = readFileSync(fileURLToPath(import.meta.url), 'utf8');
    // Required here, not imported above: the transpiled copy runs from a folder that has no node_modules.
    const { transformSync } = createRequire(import.meta.url)('esbuild') as typeof import('esbuild');
    writeFileSync(transpiled, transformSync(source, { loader: 'ts', format: 'esm', target: 'node20' }).code);
  }
  return [transpiled];
}

function runPhase(phase: string, extra: string[] = [], root = here): Record<string, number> {
  const args = [
    ...phaseEntry(),
    '--repo',
    values.repo!,
    '--lexical',
    values.lexical!,
    '--phase',
    phase,
    '--code',
    values.code!,
    '--root',
    root,
    ...(values.workers ? ['--workers', values.workers] : []),
    ...extra,
  ];
  const out = execFileSync(process.execPath, args, { encoding: 'utf8', maxBuffer: 1 << 24, stdio: ['ignore', 'pipe', 'inherit'] });
  return JSON.parse(out.trim().split('\n').pop()!) as Record<string, number>;
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]!;

/**
 * `--baseline DIR`: the cold and cached phases of this checkout and of DIR (the previous main, its node_modules
 * linked in), taken in turn for `--rounds` rounds, each with a new cache; prints each side's medians and their
 * ratios, which move much less with the machine's load than the milliseconds do.
 */
function compare(baseline: string): void {
  const rows: Record<'here' | 'base', Array<Record<string, number>>> = { here: [], base: [] };
  for (let r = 0; r < Number(values.rounds); r++) {
    for (const [side, root] of [
      ['here', here],
      ['base', resolve(baseline)],
    ] as const) {
      const cache = mkdtempSync(join(tmpdir(), 'repgen-bench-cache-'));
      try {
        const cold = runPhase('cold', ['--cache', cache, '--queries', values.queries!], root);
        const cached = runPhase('cached', ['--cache', cache], root);
        const row = {
          coldMs: cold.coldMs!,
          coldCpuMs: cold.coldCpuMs!,
          coldRssMb: cold.peakRssMb!,
          cachedMs: cached.cachedMs!,
          cachedRssMb: cached.peakRssMb!,
        };
        rows[side].push(row);
        console.log(`round ${r + 1} ${side.padEnd(4)} ${JSON.stringify(row)} load ${loadavg()[0]!.toFixed(1)}`);
      } finally {
        rmSync(cache, { recursive: true, force: true });
      }
    }
  }
  const line = (key: string): string => {
    const h = median(rows.here.map((x) => x[key]!));
    const b = median(rows.base.map((x) => x[key]!));
    return `${key} ${h} vs ${b} (${(h / b).toFixed(2)}x)`;
  };
  console.log(
    `\nmedians over ${values.rounds} interleaved rounds (${values.code}; here vs baseline ${baseline}): ` +
      ['coldMs', 'coldCpuMs', 'coldRssMb', 'cachedMs', 'cachedRssMb'].map(line).join('; ') +
      '. Targets: cold ≤ 15000 ms, peak RSS ≤ 600 MB, cached ≤ 1000 ms.',
  );
}

async function driver(): Promise<void> {
  if (!values.repo) throw new Error('--repo DIR is required');
  if (values.baseline) return compare(values.baseline);
  const cache = mkdtempSync(join(tmpdir(), 'repgen-bench-cache-'));
  const floorBefore = runPhase('floor');
  console.log('floor ', JSON.stringify(floorBefore));
  const cold = runPhase('cold', ['--cache', cache, '--queries', values.queries!]);
  console.log('cold  ', JSON.stringify(cold));
  const cached = runPhase('cached', ['--cache', cache]);
  console.log('cached', JSON.stringify(cached));
  const floorAfter = runPhase('floor');
  console.log('floor ', JSON.stringify(floorAfter));
  const floorMs = Math.round((floorBefore.floorMs! + floorAfter.floorMs!) / 2);
  const floorCpuMs = Math.round((floorBefore.floorCpuMs! + floorAfter.floorCpuMs!) / 2);
  const ratio = Math.round((cold.coldMs! / floorMs) * 100) / 100;
  const cpuRatio = Math.round((cold.coldCpuMs! / floorCpuMs) * 100) / 100;
  const peak = Math.max(cold.peakRssMb!, cached.peakRssMb!);
  console.log(
    `\nsummary (${values.lexical}, ${values.code} code, ${cold['cold.indexWorkers'] ?? 0} index workers): files ${floorBefore.files}, ${floorBefore.megabytes} MB; ` +
      `floor ${floorMs} ms (mean of ${floorBefore.floorMs} before and ${floorAfter.floorMs} after), CPU ${floorCpuMs} ms; ` +
      `cold ${cold.coldMs} ms (${ratio}x floor; target ≤ 15000 ms and ≤ 2x), CPU ${cold.coldCpuMs} ms (${cpuRatio}x the floor's CPU); ` +
      `cached ${cached.cachedMs} ms (target ≤ 1000); query p95 ${cold.queryOnlyP95Ms} ms (whole call with the identity check: ${cold.queryP95Ms} ms) over ${cold.queries} (target ≤ 100); peak RSS ${peak} MB (target ≤ 600)`,
  );
  if (values['embed-model']) {
    const embed = runPhase('embed', ['--embed-model', values['embed-model'], '--embed-sample', values['embed-sample']!]);
    console.log('embed ', JSON.stringify(embed));
  }
}

await (values.phase ? child() : driver());
