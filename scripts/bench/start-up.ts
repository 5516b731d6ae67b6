/**
 * Start-up, measured from outside the process (issue 42): how long `repgen` takes before it says anything, and what a
 * no-model reproduction costs against a cold `import torch`. Every measure runs interleaved with the same measure on a
 * baseline checkout (`--baseline DIR`, e.g. a `git worktree add` of the previous main with this node_modules linked
 * in), so a ratio compares two runs taken moments apart on the same machine under the same load; the milliseconds
 * move with the load, the ratios much less.
 *
 *   npx tsx scripts/bench/start-up.ts --baseline /tmp/base [--rounds 5] [--case fixtures/bench/dl-bugs/so-046] [--context-repo DIR]
 *
 * Prints, per measure, the medians for this checkout and the baseline and their ratio:
 * - first line: process start to the first byte on stderr of `reproduce --llm none` (the first progress line), wall,
 *   and the CPU time the process had used by then (read from /proc, which load does not stretch);
 * - reproduce: the whole run of that command, and its ratio to a cold `import torch` run between the pairs, by the
 *   interpreter the reproduction runs on (REPGEN_PYTHON, else /usr/bin/python3);
 * - --help via `node bin/repgen.js` and via `npx repgen`;
 * - with `--context-repo DIR` (a 5,000-file tree), the context build cold and cached and its peak RSS, on the
 *   compiled code of both checkouts, interleaved the same way (scripts/bench/context-bench.ts --baseline).
 */
import { spawn } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    baseline: { type: 'string' },
    rounds: { type: 'string', default: '5' },
    case: { type: 'string', default: 'fixtures/bench/dl-bugs/so-046' },
    'context-repo': { type: 'string' },
  },
});
if (!values.baseline) throw new Error('--baseline DIR is required: a checkout of the code to compare with');
const here = resolve('.');
const base = resolve(values.baseline);
const rounds = Number(values.rounds);
const issue = join(values.case, 'issue.md');
const TICK_MS = 1000 / 100; // USER_HZ: /proc/<pid>/stat counts CPU time in ticks of 10 ms

interface Sample {
  wallMs: number;
  firstLineMs: number | null;
  firstLineCpuMs: number | null;
  code: number | null;
}

/** CPU time (user + system) the process has used so far, from /proc/<pid>/stat; null once it is gone. */
function cpuMsOf(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * TICK_MS;
  } catch {
    return null;
  }
}

/** Runs `cmd` in `cwd`: its whole wall time, and when its first stderr byte came and how much CPU it had used then. */
function sample(cmd: string, args: string[], cwd: string): Promise<Sample> {
  return new Promise((done, fail) => {
    const t0 = performance.now();
    const child = spawn(cmd, args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
    let firstLineMs: number | null = null;
    let firstLineCpuMs: number | null = null;
    child.stderr.on('data', () => {
      if (firstLineMs !== null) return;
      firstLineMs = performance.now() - t0;
      firstLineCpuMs = child.pid === undefined ? null : cpuMsOf(child.pid);
    });
    child.on('error', fail);
    child.on('close', (code) => done({ wallMs: performance.now() - t0, firstLineMs, firstLineCpuMs, code }));
  });
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

/** `rounds` pairs, this checkout then the baseline, after one warm-up pair (tsx's compile cache, the page cache). */
async function pairs(
  args: (dir: string) => [string, string[]],
  between?: () => Promise<void>,
): Promise<{ here: Sample[]; base: Sample[] }> {
  const out = { here: [] as Sample[], base: [] as Sample[] };
  for (let i = -1; i < rounds; i++) {
    const a = await sample(...args(here), here);
    const b = await sample(...args(base), base);
    if (i < 0) continue;
    await between?.();
    out.here.push(a);
    out.base.push(b);
  }
  return out;
}

const row = (cells: string[]): string => cells.map((c, i) => (i === 0 ? c.padEnd(34) : c.padStart(12))).join('');
const ms = (x: number): string => `${Math.round(x)} ms`;
console.log(`start-up, ${rounds} interleaved pairs each (after one warm-up pair): medians; this = ${here}, base = ${base}`);
console.log(row(['measure', 'this', 'base', 'this / base']));

const out = join(tmpdir(), `repgen-start-up-${process.pid}`);
const reproduce = (dir: string): [string, string[]] => [
  process.execPath,
  [join(dir, 'bin/repgen.js'), 'reproduce', '--issue', resolve(issue), '--llm', 'none', '--out', join(out, dir === here ? 'this' : 'base')],
];
// The yardstick of issue 42's "≤ 2× a cold import torch": the interpreter RepGen runs the report with (REPGEN_PYTHON,
// else Debian's /usr/bin/python3, the default base), sampled between the pairs so that it sees the same load. A
// `python3` from PATH may have no torch at all and fail in 0.1 s: an import that fails stops the bench.
const python = process.env.REPGEN_PYTHON ?? '/usr/bin/python3';
const torch: number[] = [];
const repro = await pairs(reproduce, async () => {
  const s = await sample(python, ['-c', 'import torch'], here);
  if (s.code !== 0) throw new Error(`${python} -c "import torch" exited ${s.code}: set REPGEN_PYTHON to an interpreter with torch`);
  torch.push(s.wallMs);
});
for (const s of [...repro.here, ...repro.base]) if (s.code !== 0) console.log(`note: a reproduce run exited ${s.code}`);
const m = (xs: Sample[], key: keyof Sample): number => median(xs.map((s) => Number(s[key] ?? NaN)));
for (const [label, key] of [
  ['first progress line, wall', 'firstLineMs'],
  ['first progress line, CPU used', 'firstLineCpuMs'],
  ['reproduce --llm none, wall', 'wallMs'],
] as const) {
  const [a, b] = [m(repro.here, key), m(repro.base, key)];
  console.log(row([label, ms(a), ms(b), (a / b).toFixed(2)]));
}

const t = median(torch);
console.log(row([`${python} -c "import torch"`.slice(-34), ms(t), '', '']));
console.log(row(['reproduce / import torch', (m(repro.here, 'wallMs') / t).toFixed(2), (m(repro.base, 'wallMs') / t).toFixed(2), '']));

for (const [label, args] of [
  ['--help via node bin/repgen.js', (dir: string): [string, string[]] => [process.execPath, [join(dir, 'bin/repgen.js'), '--help']]],
  ['--help via npx repgen', (): [string, string[]] => ['npx', ['--no-install', 'repgen', '--help']]],
] as const) {
  const r = await pairs(args);
  const [a, b] = [m(r.here, 'wallMs'), m(r.base, 'wallMs')];
  console.log(row([label, ms(a), ms(b), (a / b).toFixed(2)]));
}
rmSync(out, { recursive: true, force: true });

if (values['context-repo']) {
  // Its own script, its own processes per phase (each peak RSS its own); its lines come through as they are.
  const bench = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      join(here, 'scripts/bench/context-bench.ts'),
      ...['--repo', values['context-repo'], '--code', 'dist', '--baseline', base, '--rounds', String(rounds), '--queries', '30'],
    ],
    { cwd: here, stdio: ['ignore', 'inherit', 'inherit'] },
  );
  const code = await new Promise<number | null>((done) => bench.on('close', done));
  if (code !== 0) throw new Error(`the context bench exited ${code}`);
}
