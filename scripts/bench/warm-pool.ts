/**
 * Warm pool vs cold start: median fixed cost of a run that imports torch and exits, through the local executor,
 * both series interleaved in one process (so load from other processes hits both alike).
 *
 *   npx tsx scripts/bench/warm-pool.ts [--runs 10] [--imports torchvision,pandas]
 *
 * Cold: REPGEN_WARM_POOL=off, every run starts a sandbox and an interpreter that imports torch. Warm: each run is
 * forked from the pool's fork server, which imported torch once (warmUp() before each timed run, not timed: it
 * only waits for that one server's imports). Target (issue 11): warm ≤ 100 ms and ≥ 10× faster than cold.
 *
 * --imports: the script imports these modules too, after torch. A third series then runs the same imports behind
 * a first statement (`pass`), which keeps the server from importing them ahead (src/exec/warm/leading-imports.ts): the
 * forked run imports them itself, as every warm run did before imports ahead.
 */
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { readLocalExecConfig } from '../../src/exec/config.js';
import { createLocalExecutor } from '../../src/exec/local/executor.js';

const { values } = parseArgs({ options: { runs: { type: 'string', default: '10' }, imports: { type: 'string', default: '' } } });
const runs = Number(values.runs);
const extra = values.imports
  .split(',')
  .map((m) => m.trim())
  .filter(Boolean);
const imports = ['torch', ...extra].map((m) => `import ${m}\n`).join('');
const config = readLocalExecConfig(process.env);
const cold = createLocalExecutor({ ...config, warmPool: 'off' });
const warm = createLocalExecutor({ ...config, warmPool: 'auto' });
const request = { files: [{ path: 'main.py', content: imports }], entry: 'main.py' };
const inRun = { files: [{ path: 'main.py', content: `pass\n${imports}` }], entry: 'main.py' };

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
}

async function timed(
  run: () => Promise<{ exitCode: number | null; notes?: string[]; stderr: string }>,
): Promise<{ ms: number; notes: string[] }> {
  const t = performance.now();
  const r = await run();
  const ms = performance.now() - t;
  if (r.exitCode !== 0) throw new Error(`run failed: ${r.stderr}`);
  return { ms, notes: r.notes ?? [] };
}

// Warm-up of both paths (sandbox probe, launcher build, page cache); not counted.
await cold.run(request);
await warm.warmUp(request);
await warm.run(request);
const coldMs: number[] = [];
const warmMs: number[] = [];
const inRunMs: number[] = [];
let warmServed = 0;
const load = loadavg()[0] ?? 0;
for (let i = 0; i < runs; i++) {
  coldMs.push((await timed(() => cold.run(request))).ms);
  if (!(await warm.warmUp(request))) throw new Error('the warm pool could not get an interpreter ready');
  const w = await timed(() => warm.run(request));
  warmMs.push(w.ms);
  if (w.notes.some((n) => n.startsWith('warm start'))) warmServed++;
  if (extra.length) inRunMs.push((await timed(() => warm.run(inRun))).ms);
}
await warm.close();
const c = median(coldMs);
const w = median(warmMs);
console.log(
  `python: ${config.python}  runs: ${runs}  load average: ${load.toFixed(2)}  warm runs served by the pool: ${warmServed}/${runs}`,
);
const what = ['torch', ...extra].join(', ');
console.log(`cold (sandbox + interpreter + import ${what})  median ${c.toFixed(1)} ms`);
console.log(`warm (forked; ${what} imported in the server)  median ${w.toFixed(1)} ms`);
if (extra.length) {
  const r = median(inRunMs);
  console.log(`warm, ${extra.join(', ')} imported by the run itself  median ${r.toFixed(1)} ms  (imports ahead: ${(r / w).toFixed(1)}x)`);
}
console.log(
  `speed-up ${(c / w).toFixed(1)}x  (target warm ≤ 100 ms: ${w <= 100 ? 'met' : 'NOT met'}; ≥ 10x: ${c / w >= 10 ? 'met' : 'NOT met'})`,
);
