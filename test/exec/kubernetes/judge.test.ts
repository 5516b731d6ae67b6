import { execFileSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { judgeRun, MAX_SETTLE_ATTEMPTS, toRunResult, type JudgeInput, type PodView } from '../../../src/exec/kubernetes/judge.js';
import { FRAME_PREFIX, parseRunnerLog, RUNNER_PY, type RunnerRequest } from '../../../src/exec/kubernetes/runner.js';
import { makeTempDir } from '../../helpers/temp-dir.js';

const base: JudgeInput = {
  job: null,
  pod: null,
  now: 10_000,
  createdAt: 0,
  waitingSince: null,
  scheduleTimeoutMs: 60_000,
  imagePullGraceMs: 5_000,
  image: 'img:1',
};
const waiting = (reason: string, message = ''): PodView => ({
  metadata: { name: 'p' },
  spec: { nodeName: 'n1' },
  status: {
    phase: 'Pending',
    conditions: [{ type: 'PodScheduled', status: 'True' }],
    containerStatuses: [{ name: 'repro', state: { waiting: { reason, message } } }],
  },
});
const frame = (o: unknown) => `${FRAME_PREFIX}${JSON.stringify(o)}\n`;

describe('judgeRun', () => {
  it('waits while the pod is pending, running, or pulling within its grace', () => {
    expect(judgeRun(base).kind).toBe('wait');
    expect(judgeRun({ ...base, pod: waiting('ContainerCreating') }).kind).toBe('wait');
    expect(judgeRun({ ...base, pod: waiting('ErrImagePull'), waitingSince: 9_000 }).kind).toBe('wait');
  });

  it('ends on image pull errors past the grace, and at once on an invalid image name', () => {
    const v = judgeRun({ ...base, pod: waiting('ImagePullBackOff', 'Back-off pulling image'), waitingSince: 4_000 });
    expect(v).toEqual({
      kind: 'infra',
      infra: { kind: 'image_pull', message: "image 'img:1' could not be pulled (ImagePullBackOff): Back-off pulling image" },
    });
    expect(judgeRun({ ...base, pod: waiting('InvalidImageName'), waitingSince: 10_000 })).toMatchObject({ infra: { kind: 'image_pull' } });
    expect(judgeRun({ ...base, pod: waiting('CreateContainerConfigError', 'configmap "x" not found'), waitingSince: 0 })).toMatchObject({
      infra: { kind: 'spawn_failed' },
    });
  });

  it('ends unschedulable only after the wait limit, with the scheduler message or the missing pod', () => {
    const pending: PodView = {
      metadata: { name: 'p' },
      status: {
        phase: 'Pending',
        conditions: [
          {
            type: 'PodScheduled',
            status: 'False',
            reason: 'Unschedulable',
            message: '0/3 nodes are available: 3 Insufficient nvidia.com/gpu.',
          },
        ],
      },
    };
    expect(judgeRun({ ...base, pod: pending, now: 59_999 }).kind).toBe('wait');
    expect(judgeRun({ ...base, pod: pending, now: 60_000 })).toMatchObject({
      infra: { kind: 'unschedulable', message: expect.stringContaining('Insufficient nvidia.com/gpu') },
    });
    expect(judgeRun({ ...base, now: 60_000 })).toMatchObject({
      infra: { kind: 'unschedulable', message: expect.stringContaining('no pod was created') },
    });
    // A scheduled pod pulling a big CUDA image is not unschedulable, however long it takes.
    expect(judgeRun({ ...base, pod: waiting('ContainerCreating'), now: 600_000 }).kind).toBe('wait');
  });

  it('prefers eviction over the container state, and the deadline over a missing pod', () => {
    const evicted: PodView = {
      metadata: { name: 'p' },
      status: {
        phase: 'Failed',
        reason: 'Evicted',
        message: 'low on memory',
        containerStatuses: [{ state: { terminated: { exitCode: 137, reason: 'Error' } } }],
      },
    };
    expect(judgeRun({ ...base, pod: evicted })).toEqual({
      kind: 'infra',
      infra: { kind: 'evicted', message: 'pod evicted: low on memory' },
    });
    const job = { status: { conditions: [{ type: 'Failed', status: 'True', reason: 'DeadlineExceeded' }] } };
    expect(judgeRun({ ...base, job })).toEqual({ kind: 'deadline' });
  });

  it('asks to settle when the Job ended before its pod was seen, then falls back', () => {
    const job = { status: { conditions: [{ type: 'Complete', status: 'True' }] } };
    expect(judgeRun({ ...base, job }).kind).toBe('settle');
    expect(judgeRun({ ...base, job, settleAttempts: MAX_SETTLE_ATTEMPTS })).toMatchObject({ kind: 'infra', infra: { kind: 'evicted' } });
  });
});

const ctx = { executor: 'kubernetes', cap: 1000, wallMs: 5000, network: false, notes: [], memoryMb: 512, timeoutMs: 2000, cpuSeconds: 60 };

describe('toRunResult and the runner log', () => {
  it('takes the exit code from the runner and OOMKilled from the container state', () => {
    const log = parseRunnerLog(
      frame({ s: 'o', d: 'hi\n' }) +
        frame({ t: 'text', s: 'o', d: 'hi\n', n: 3 }) +
        frame({ t: 'text', s: 'e', d: '', n: 0 }) +
        frame({ t: 'text', s: 'a', d: 'hi\n', n: 3 }) +
        frame({
          t: 'exit',
          code: 4,
          signal: null,
          timedOut: false,
          cpuMs: 12,
          maxrssKb: 2048,
          durationMs: 30,
          bytes: { o: 3, e: 0 },
          files: [{ p: 'r.txt', n: 2, c: 'ok' }],
        }),
      1000,
    );
    const r = toRunResult({ kind: 'finished', terminated: { exitCode: 4, reason: 'Error' } }, log, ctx);
    expect(r).toMatchObject({
      exitCode: 4,
      signal: null,
      stdout: 'hi\n',
      cpuMs: 12,
      peakMemoryMb: 2,
      durationMs: 30,
      oomKilled: false,
      files: [{ path: 'r.txt', size: 2, content: 'ok' }],
    });
    const oom = toRunResult(
      { kind: 'finished', terminated: { exitCode: 137, reason: 'OOMKilled' } },
      parseRunnerLog(frame({ s: 'o', d: 'alloc\n' }), 1000),
      ctx,
    );
    expect(oom).toMatchObject({ exitCode: null, signal: 'SIGKILL', oomKilled: true, stdout: 'alloc\n', cpuMs: null });
    expect(oom.notes).toEqual(['the container passed its 512 MiB memory limit and was OOM-killed']);
  });

  it('keeps foreign lines as stderr and drops a line the log limit cut', () => {
    const log = parseRunnerLog(
      `exec: "python": executable file not found in $PATH\n${frame({ s: 'o', d: 'a' })}${FRAME_PREFIX}{"s":"o","d":"cut`,
      1000,
    );
    expect(log.stderr).toBe('exec: "python": executable file not found in $PATH\n');
    expect(log.stdout).toBe('a');
    expect(log.exit).toBeNull();
  });

  it('reports a container that could not start as spawn_failed', () => {
    const r = toRunResult(
      { kind: 'finished', terminated: { exitCode: 128, reason: 'StartError', message: 'exec: "python": not found' } },
      null,
      ctx,
    );
    expect(r.infra).toEqual({ kind: 'spawn_failed', message: 'the container could not start: exec: "python": not found' });
  });
});

function runRunner(request: Partial<RunnerRequest>, files: Record<string, string>): string {
  const dir = makeTempDir('runner-test-');
  try {
    const conf = join(dir, 'conf');
    execFileSync('mkdir', ['-p', conf, join(dir, 'work')]);
    writeFileSync(join(conf, 'runner.py'), RUNNER_PY);
    const entries = Object.entries(files);
    entries.forEach(([, content], i) => writeFileSync(join(conf, `file-${i}`), content));
    const full: RunnerRequest = {
      entry: 'main.py',
      args: [],
      interpreter: '/usr/bin/python3',
      setup: [],
      timeoutMs: 10_000,
      cpuSeconds: 60,
      maxOutputBytes: 1000,
      inlineFileBytes: 100,
      maxOutputFiles: 10,
      files: entries.map(([path], i) => ({ key: `file-${i}`, path })),
      ...request,
    };
    writeFileSync(join(conf, 'request.json'), JSON.stringify(full));
    try {
      return execFileSync('/usr/bin/python3', [join(conf, 'runner.py'), conf], {
        env: { PATH: '/usr/bin:/bin', REPGEN_WORKDIR: join(dir, 'work'), REPGEN_OUT: join(dir, 'work', 'out') },
        encoding: 'utf8',
      });
    } catch (err) {
      return (err as { stdout: string }).stdout;
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('the runner (real python)', () => {
  it('stops at the first failing setup command, as the local executor does', () => {
    const log = parseRunnerLog(runRunner({ setup: ['echo one', 'false', 'echo never'] }, { 'main.py': 'print("script")' }), 1000);
    expect(log.exit?.code).toBe(1);
    expect(log.stdout).toBe('one\n');
  });

  it('reports an interpreter that does not exist', () => {
    const log = parseRunnerLog(runRunner({ interpreter: '/nonexistent/python' }, { 'main.py': 'print(1)' }), 1000);
    expect(log.spawnFailed).toMatch(/nonexistent\/python/);
    const r = toRunResult({ kind: 'finished', terminated: { exitCode: 127, reason: 'Error' } }, log, ctx);
    expect(r.infra?.kind).toBe('spawn_failed');
  });

  it('keeps the head and the tail of a flood, counts every byte, and keeps multi-byte characters whole', () => {
    const log = parseRunnerLog(runRunner({}, { 'main.py': 'import sys\nsys.stdout.write("é" * 3000)\nprint("END")' }), 1000);
    expect(log.stdoutBytes).toBe(6004);
    expect(log.stdoutTruncated).toBe(true);
    expect(log.stdout).toMatch(/^é+\n… \[repgen: \d+ bytes of output omitted\] …\né+END\n$/);
    expect(log.output).toContain('END');
  });
});
