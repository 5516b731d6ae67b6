/**
 * Snippet analysis, what tier 0 spends before its first run: completeCode (src/complete/) on a long report snippet,
 * against a baseline measured in the same run on the same code, one tree-sitter parse and scope walk
 * (analyzePython). The ratio, not the milliseconds, is the number to compare between machines and runs: on a shared
 * machine both move with the others' load. This replaces the tests' former "in under a second" bounds
 * (test/complete/complete.test.ts, test/agent/tier0.test.ts), which failed on a busy machine.
 *
 *   npx tsx scripts/bench/snippet-analysis.ts [--lines 360] [--rounds 15]
 *
 * Prints, per snippet size, the median wall and CPU time of each, and their ratios completeCode / baseline.
 */
import { parseArgs } from 'node:util';
import { completeCode } from '../../src/complete/index.js';
import { analyzePython } from '../../src/complete/scope.js';

const { values } = parseArgs({ options: { lines: { type: 'string', default: '360' }, rounds: { type: 'string', default: '15' } } });
const maxLines = Number(values.lines);
const rounds = Number(values.rounds);

/** A report snippet of about `lines` lines: small functions over torch, some names left undefined for tier 0 to infer. */
function snippet(lines: number): string {
  const n = Math.max(1, Math.round(lines / 3));
  const body = Array.from({ length: n }, (_, i) => `def f${i}(x):\n    return F.relu(x) + ${i} * scale\n`).join('\n');
  return `import torch\n${body}\nout = f0(torch.ones(3))\n`;
}

async function measure(fn: () => Promise<unknown>): Promise<{ wall: number[]; cpu: number[] }> {
  await fn(); // warm-up: module loading and the tree-sitter wasm
  const wall: number[] = [];
  const cpu: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    await fn();
    wall.push(performance.now() - t0);
    const c = process.cpuUsage(c0);
    cpu.push((c.user + c.system) / 1000);
  }
  return { wall, cpu };
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
const COLUMNS = ['lines', 'base wall', 'base cpu', 'full wall', 'full cpu', 'ratio wall', 'ratio cpu'];
const row = (cells: string[]): string => cells.map((c) => c.padStart(11)).join('');

console.log(`snippet analysis, ${rounds} rounds each: medians in ms; base = analyzePython, full = completeCode, ratio = full / base`);
console.log(row(COLUMNS));
for (const lines of [maxLines / 4, maxLines / 2, maxLines].map(Math.round)) {
  const code = snippet(lines);
  const base = await measure(async () => (await analyzePython(code)).tree.delete());
  const full = await measure(() => completeCode({ blocks: [code] }));
  const [bw, bc, fw, fc] = [median(base.wall), median(base.cpu), median(full.wall), median(full.cpu)];
  console.log(row([String(lines), ...[bw, bc, fw, fc].map((x) => x.toFixed(1)), (fw / bw).toFixed(2), (fc / bc).toFixed(2)]));
}
