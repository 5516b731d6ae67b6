/**
 * Sandbox overhead: median wall time of `python -c pass` run bare (spawned directly) vs through the local
 * executor (work dir, launcher, sandbox, output capture, cleanup), 20 runs each after a warm-up.
 *
 *   npx tsx scripts/bench/sandbox-overhead.ts [--runs 20] [--sandbox auto|bwrap|none] [--launcher auto|native|python]
 *
 * Reads REPGEN_PYTHON like the executor. Target: ≤ 150 ms of overhead (issue 11: ≤ 50 ms). Every run here starts cold
 * (REPGEN_WARM_POOL=off, whatever the environment says): a run forked from a fork server starts no sandbox at all,
 * and scripts/bench/warm-pool.ts measures that path.
 *
 * A third series spawns the executor's process chain alone (sandbox + launcher + python, same argv, spawnSync),
 * which splits the overhead into what the processes cost and what the executor's bookkeeping around them costs
 * (work dir, files, async spawn, pipes, output files, cleanup).
 *
 * On a shared host wall time includes the wait for a CPU, so the 1-minute load average is printed with the
 * numbers. (Children's CPU time cannot stand in for it: bwrap exits without reaping its namespace's init, so
 * that CPU never reaches this process's cutime.)
 */
import { spawnSync } from 'node:child_process';
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { closeSync, mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { readLocalExecConfig } from '../../src/exec/config.js';
import { LAUNCHER_SOURCE } from '../../src/exec/sandbox/launcher.js';
import { ensureNativeLauncher } from '../../src/exec/sandbox/launcher-native.js';
import { createLocalExecutor } from '../../src/exec/local/executor.js';
import { buildSandboxArgv, handWorkdirToSandbox, probeSandbox } from '../../src/exec/sandbox/sandbox.js';

const { values } = parseArgs({
  options: { runs: { type: 'string', default: '20' }, sandbox: { type: 'string' }, launcher: { type: 'string' } },
});
const runs = Number(values.runs);
const config = readLocalExecConfig({
  ...process.env,
  ...(values.sandbox ? { REPGEN_SANDBOX: values.sandbox } : {}),
  ...(values.launcher ? { REPGEN_LAUNCHER: values.launcher } : {}),
});
const executor = createLocalExecutor({ ...config, warmPool: 'off' });
const request = { files: [{ path: 'main.py', content: 'pass\n' }], entry: 'main.py' };

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
}

// Warm-up: the first executor run also probes the sandbox; neither should count.
spawnSync(config.python, ['-c', 'pass']);
const warm = await executor.run(request);
if (warm.exitCode !== 0) throw new Error(`executor run failed: ${warm.infra?.message ?? warm.stderr}`);

const plan = await probeSandbox(config.sandbox, { workRoot: config.workRoot, sandboxUid: config.sandboxUid });
const chainDir = mkdtempSync(join(config.workRoot, 'repgen-bench-'));
writeFileSync(join(chainDir, 'main.py'), 'pass\n');
const seccompFile = join(chainDir, 'seccomp.bpf');
writeFileSync(seccompFile, plan.seccomp ?? Buffer.alloc(0));
await handWorkdirToSandbox(plan, chainDir);
const native = config.launcher === 'python' ? null : (await ensureNativeLauncher(config.workRoot)).path;
const limitArgs = [
  '600',
  String(4096 * 2 ** 20),
  String(2048 * 2 ** 20),
  plan.kind === 'none' ? '1' : '0',
  String(config.maxProcesses),
  String(config.maxOpenFiles),
];
const launcher = native ? [native, ...limitArgs] : [config.python, '-I', '-S', '-c', LAUNCHER_SOURCE, ...limitArgs];
const chain = buildSandboxArgv({
  plan,
  network: false,
  workdir: chainDir,
  readOnlyPaths: native ? [native] : [],
  tmpBytes: 4096 * 2 ** 20,
  inner: [...launcher, config.python, 'main.py'],
});

const bare: number[] = [];
const chained: number[] = [];
const sandboxed: number[] = [];
const load = loadavg()[0] ?? 0;
// Interleaved so that load from other processes on the host hits both series alike.
for (let i = 0; i < runs; i++) {
  let t = performance.now();
  const r = spawnSync(config.python, ['-c', 'pass']);
  bare.push(performance.now() - t);
  if (r.status !== 0) throw new Error(`bare python failed: ${String(r.stderr)}`);
  t = performance.now();
  // The seccomp program on fd 4, read from the start each time; the same host uid as the executor uses.
  const seccompFd = openSync(seccompFile, 'r');
  const c = spawnSync(chain.file, chain.args, {
    cwd: chainDir,
    stdio: ['ignore', 'pipe', 'pipe', 'pipe', plan.seccomp ? seccompFd : 'ignore'],
    ...(plan.runAs ?? {}),
  });
  closeSync(seccompFd);
  chained.push(performance.now() - t);
  if (c.status !== 0) throw new Error(`process chain failed: ${String(c.stderr)}`);
  t = performance.now();
  const res = await executor.run(request);
  sandboxed.push(performance.now() - t);
  if (res.exitCode !== 0) throw new Error(`executor run failed: ${res.infra?.message ?? res.stderr}`);
}

rmSync(chainDir, { recursive: true, force: true });

const b = median(bare);
const ch = median(chained);
const s = median(sandboxed);
console.log(
  `python: ${config.python}  sandbox: ${warm.isolation.sandbox} (network ${warm.isolation.network})  runs: ${runs}  load average: ${load.toFixed(2)}`,
);
console.log(`bare python -c pass      median ${b.toFixed(1)} ms`);
console.log(`process chain alone     median ${ch.toFixed(1)} ms  (${plan.kind} + ${native ? 'native' : 'Python'} launcher + python)`);
console.log(`through the executor     median ${s.toFixed(1)} ms`);
console.log(
  `overhead ${(s - b).toFixed(1)} ms, ratio ${(s / b).toFixed(2)}x  (targets: ≤ 50 ms, issue 11: ${s - b <= 50 ? 'met' : 'NOT met'}; ≤ 150 ms: ${s - b <= 150 ? 'met' : 'NOT met'})`,
);
