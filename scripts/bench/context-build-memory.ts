/**
 * Where a cold context build holds its memory: walk, index (worker threads), assemble, save, with the process's
 * RSS, this thread's heap and array buffers after each phase, the peak RSS (every thread: the workers' heaps
 * and wasm memories are in it) and the CPU of the indexing and of the whole run.
 *
 *   node --expose-gc --import tsx scripts/bench/context-build-memory.ts --repo /tmp/ctx-tree [--workers 2] [--shard-bytes N]
 *
 * With --expose-gc each phase is also reported after a full collection (what is live, not what V8 left for later).
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { assembleIndex } from '../../src/context/index/build-index.js';
import { saveIndex } from '../../src/context/index/cache.js';
import { indexFiles } from '../../src/context/index/parallel-index.js';
import { listRepoFiles } from '../../src/context/walk-repo.js';

const { values } = parseArgs({
  options: { repo: { type: 'string' }, workers: { type: 'string', default: '2' }, 'shard-bytes': { type: 'string' } },
});
if (!values.repo) throw new Error('--repo DIR is required');

const mb = (n: number): number => Math.round(n / 1048576);
const cpuMs = (from?: NodeJS.CpuUsage): number => {
  const d = process.cpuUsage(from);
  return Math.round((d.user + d.system) / 1000);
};
const gc = (globalThis as { gc?: () => void }).gc;

function show(phase: string): void {
  const m = process.memoryUsage();
  const line = {
    rssMb: mb(m.rss),
    heapMb: mb(m.heapUsed),
    arrayBuffersMb: mb(m.arrayBuffers),
    peakRssMb: mb(process.resourceUsage().maxRSS * 1024),
  };
  console.log(phase.padEnd(10), JSON.stringify(line));
  if (gc) {
    gc();
    const g = process.memoryUsage();
    console.log(`${phase}+gc`.padEnd(10), JSON.stringify({ rssMb: mb(g.rss), heapMb: mb(g.heapUsed), arrayBuffersMb: mb(g.arrayBuffers) }));
  }
}

show('start');
// Listed, not read: the index workers read their shards' files (what buildContext does on a git work tree).
const { listed: files, skipped } = await listRepoFiles(values.repo, { maxFileBytes: 1_000_000 });
show('walked');
const cpu0 = process.cpuUsage();
const built = await indexFiles(files, {
  workers: Number(values.workers),
  bm25: true,
  consume: true,
  ...(values['shard-bytes'] ? { shardBytes: Number(values['shard-bytes']) } : {}),
});
console.log(
  'index    ',
  JSON.stringify({ shards: built.shards, workers: built.workers, mergeMs: Math.round(built.mergeMs), cpuMs: cpuMs(cpu0) }),
);
show('indexed');
for (const [why, n] of Object.entries(built.skipped)) skipped[why] = (skipped[why] ?? 0) + n;
const index = assembleIndex('bench', { chunks: built.chunks, files: built.infos, lexical: built.lexical!, skipped });
show('assembled');
await saveIndex(mkdtempSync(join(tmpdir(), 'repgen-bench-cache-')), index);
show('saved');
console.log('total    ', JSON.stringify({ cpuMs: cpuMs(), peakRssMb: mb(process.resourceUsage().maxRSS * 1024) }));
