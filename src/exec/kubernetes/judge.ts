import type { InfraFailure, RunResult } from '../types.js';
import type { RunnerLog } from './runner.js';

/**
 * What a Job and its pod say about a run, as pure functions of the API's JSON: `judgeRun` decides whether the
 * run is over and how, `toRunResult` turns the decision and the decoded log into the executor's RunResult.
 * The adapter (executor.ts) only feeds them watch events and the clock.
 */

interface Condition {
  type?: string;
  status?: string;
  reason?: string;
  message?: string;
}
export interface Terminated {
  exitCode?: number;
  signal?: number;
  reason?: string;
  message?: string;
}
interface ContainerStatus {
  name?: string;
  state?: { waiting?: { reason?: string; message?: string }; running?: unknown; terminated?: Terminated };
}
export interface PodView {
  metadata?: { name?: string };
  spec?: { nodeName?: string };
  status?: { phase?: string; reason?: string; message?: string; conditions?: Condition[]; containerStatuses?: ContainerStatus[] };
}
export interface JobView {
  status?: { conditions?: Condition[]; failed?: number; succeeded?: number };
}

export type Verdict =
  | { kind: 'wait' }
  /** The Job ended but the pod's final state has not been seen yet: read the pod again before deciding. */
  | { kind: 'settle'; fallback: Verdict }
  | { kind: 'finished'; terminated: Terminated }
  | { kind: 'deadline' }
  | { kind: 'infra'; infra: InfraFailure };

export interface JudgeInput {
  job: JobView | null;
  pod: PodView | null;
  now: number;
  /** When the Job was created (scheduling wait counts from here). */
  createdAt: number;
  /** When the container first showed its current failing waiting reason; null when it shows none. */
  waitingSince: number | null;
  scheduleTimeoutMs: number;
  imagePullGraceMs: number;
  image: string;
  /** Pod reads already spent settling a finished Job. @defaultValue 0 */
  settleAttempts?: number;
}

const PULL_FATAL = new Set(['InvalidImageName', 'ErrImageNeverPull']);
const PULL_RETRYING = new Set(['ErrImagePull', 'ImagePullBackOff']);
const START_FAILED = new Set(['CreateContainerConfigError', 'CreateContainerError', 'RunContainerError']);
/** Pod reads before a finished Job without a container verdict is judged on the Job alone. */
export const MAX_SETTLE_ATTEMPTS = 5;

function condition(conds: Condition[] | undefined, type: string): Condition | undefined {
  return conds?.find((c) => c.type === type && c.status === 'True');
}

export function containerStatus(pod: PodView | null): ContainerStatus | undefined {
  return pod?.status?.containerStatuses?.[0];
}

/** The reason a container waits with, when it is one that may end the run. */
export function failingWaitReason(pod: PodView | null): string | null {
  const reason = containerStatus(pod)?.state?.waiting?.reason;
  if (!reason) return null;
  return PULL_FATAL.has(reason) || PULL_RETRYING.has(reason) || START_FAILED.has(reason) ? reason : null;
}

function evicted(pod: PodView | null): InfraFailure | null {
  const status = pod?.status;
  if (!status) return null;
  if (status.reason === 'Evicted') return { kind: 'evicted', message: `pod evicted: ${status.message ?? 'no reason given'}` };
  const disrupted = condition(status.conditions, 'DisruptionTarget');
  if (disrupted && status.phase === 'Failed') {
    return { kind: 'evicted', message: `pod disrupted (${disrupted.reason ?? 'unknown'}): ${disrupted.message ?? ''}`.trim() };
  }
  return null;
}

/** Decides whether the run is over. Pure. */
export function judgeRun(input: JudgeInput): Verdict {
  const { job, pod, now } = input;
  const ev = evicted(pod);
  if (ev) return { kind: 'infra', infra: ev };

  const terminated = containerStatus(pod)?.state?.terminated;
  if (terminated) return { kind: 'finished', terminated };

  const failed = condition(job?.status?.conditions, 'Failed');
  if (failed?.reason === 'DeadlineExceeded') return { kind: 'deadline' };
  const complete = condition(job?.status?.conditions, 'Complete');
  if (failed || complete) {
    const fallback: Verdict = {
      kind: 'infra',
      infra: {
        kind: 'evicted',
        message:
          `the pod ended without a container result (Job ${failed ? `failed: ${failed.reason ?? ''} ${failed.message ?? ''}` : 'complete'})`.trim(),
      },
    };
    return (input.settleAttempts ?? 0) >= MAX_SETTLE_ATTEMPTS ? fallback : { kind: 'settle', fallback };
  }

  const waiting = containerStatus(pod)?.state?.waiting;
  const reason = failingWaitReason(pod);
  if (reason && waiting) {
    const waited = input.waitingSince === null ? 0 : now - input.waitingSince;
    const detail = waiting.message ? `: ${waiting.message}` : '';
    if (PULL_FATAL.has(reason) || (PULL_RETRYING.has(reason) && waited >= input.imagePullGraceMs)) {
      return { kind: 'infra', infra: { kind: 'image_pull', message: `image '${input.image}' could not be pulled (${reason})${detail}` } };
    }
    if (START_FAILED.has(reason) && waited >= input.imagePullGraceMs) {
      return { kind: 'infra', infra: { kind: 'spawn_failed', message: `the container could not start (${reason})${detail}` } };
    }
  }

  const scheduled = Boolean(pod?.spec?.nodeName) || pod?.status?.conditions?.some((c) => c.type === 'PodScheduled' && c.status === 'True');
  if (!scheduled && now - input.createdAt >= input.scheduleTimeoutMs) {
    const seconds = Math.round(input.scheduleTimeoutMs / 1000);
    const why = pod?.status?.conditions?.find((c) => c.type === 'PodScheduled')?.message;
    const message = pod
      ? `no node could take the pod within ${seconds}s${why ? `: ${why}` : ''}`
      : `no pod was created within ${seconds}s (quota full or the Job not admitted)`;
    return { kind: 'infra', infra: { kind: 'unschedulable', message } };
  }
  return { kind: 'wait' };
}

const SIGNALS: Record<number, string> = {
  1: 'SIGHUP',
  2: 'SIGINT',
  6: 'SIGABRT',
  9: 'SIGKILL',
  11: 'SIGSEGV',
  15: 'SIGTERM',
  24: 'SIGXCPU',
};

export interface ResultContext {
  executor: string;
  cap: number;
  /** Wall time from Job creation to the verdict. */
  wallMs: number;
  network: boolean;
  notes: string[];
  memoryMb: number;
  timeoutMs: number;
  cpuSeconds: number;
}

/** The RunResult for a verdict. Pure. */
export function toRunResult(verdict: Verdict, log: RunnerLog | null, ctx: ResultContext): RunResult {
  const streams = {
    stdout: log?.stdout ?? '',
    stderr: log?.stderr ?? '',
    output: log?.output ?? '',
    stdoutBytes: log?.stdoutBytes ?? 0,
    stderrBytes: log?.stderrBytes ?? 0,
    stdoutTruncated: log?.stdoutTruncated ?? false,
    stderrTruncated: log?.stderrTruncated ?? false,
  };
  const exit = log?.exit ?? null;
  const base = {
    executor: ctx.executor,
    ...streams,
    outputCapBytes: ctx.cap,
    files: log?.files ?? [],
    cpuMs: exit ? exit.cpuMs : null,
    peakMemoryMb: exit ? Math.round((exit.maxrssKb / 1024) * 10) / 10 : null,
    durationMs: exit ? exit.durationMs : ctx.wallMs,
    isolation: {
      network: ctx.network ? ('host' as const) : ('none' as const),
      sandbox: 'kubernetes',
      notes: [
        ctx.network
          ? 'network allowed: egress limited to the NetworkPolicy allowlist of the repro namespace'
          : 'no network: deny-all egress NetworkPolicy of the repro namespace (needs a CNI that enforces NetworkPolicy)',
        ...ctx.notes,
      ],
    },
  };
  if (verdict.kind === 'finished') {
    const t = verdict.terminated;
    const oomKilled = t.reason === 'OOMKilled';
    const notes = oomKilled ? [`the container passed its ${ctx.memoryMb} MiB memory limit and was OOM-killed`] : [];
    if (t.reason === 'StartError' || t.reason === 'ContainerCannotRun') {
      return {
        ...base,
        exitCode: null,
        signal: null,
        timedOut: false,
        oomKilled: false,
        infra: { kind: 'spawn_failed', message: `the container could not start: ${t.message ?? t.reason}` },
      };
    }
    if (log?.spawnFailed) {
      return {
        ...base,
        exitCode: null,
        signal: null,
        timedOut: false,
        oomKilled,
        infra: { kind: 'spawn_failed', message: `cannot execute the script: ${log.spawnFailed}` },
      };
    }
    if (exit) {
      if (exit.timedOut) notes.push(`killed after the ${ctx.timeoutMs} ms wall-clock limit`);
      if (exit.signal === 'SIGXCPU' || (exit.signal === 'SIGKILL' && !exit.timedOut && exit.cpuMs >= ctx.cpuSeconds * 1000)) {
        notes.push(`stopped by the ${ctx.cpuSeconds} s CPU-time limit`);
      }
      return {
        ...base,
        exitCode: exit.code,
        signal: exit.signal,
        timedOut: exit.timedOut,
        oomKilled,
        infra: null,
        ...(notes.length ? { notes } : {}),
      };
    }
    // No exit frame: the runner itself was killed (OOM kill of the container, a node problem).
    const code = t.exitCode ?? null;
    const sigNum = t.signal ?? (code !== null && code > 128 ? code - 128 : undefined);
    if (sigNum !== undefined) {
      return {
        ...base,
        exitCode: null,
        signal: SIGNALS[sigNum] ?? `SIG${sigNum}`,
        timedOut: false,
        oomKilled,
        infra: null,
        ...(notes.length ? { notes } : {}),
      };
    }
    return { ...base, exitCode: code, signal: null, timedOut: false, oomKilled, infra: null, ...(notes.length ? { notes } : {}) };
  }
  if (verdict.kind === 'deadline') {
    // The Job's activeDeadlineSeconds killed the pod: the run is a timeout like a local one killed at its limit.
    const notes = [
      `the Job passed its activeDeadlineSeconds (${ctx.timeoutMs} ms script limit plus the scheduling and setup slack) and was killed`,
    ];
    return { ...base, exitCode: null, signal: 'SIGKILL', timedOut: true, oomKilled: false, infra: null, notes };
  }
  if (verdict.kind === 'infra') {
    return { ...base, exitCode: null, signal: null, timedOut: false, oomKilled: false, infra: verdict.infra };
  }
  throw new Error(`toRunResult: the run is not over (${verdict.kind})`);
}
