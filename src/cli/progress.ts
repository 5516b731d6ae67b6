// Progress on stderr for `repgen reproduce` and `repgen bench`: every line says how long its stage (or case) has
// run, and a stage or a bench that stays quiet gets a heartbeat line saying what it is still doing.
import type { ProgressFn, StageName } from '../pipeline/types.js';

/** Time and a repeating timer, injected so that tests drive both. */
export interface ProgressClock {
  now: () => number;
  /** Calls `fn` every `ms` until the returned function is called. */
  every: (ms: number, fn: () => void) => () => void;
}

export const systemClock: ProgressClock = {
  now: () => Date.now(),
  every: (ms, fn) => {
    const timer = setInterval(fn, ms);
    // A heartbeat never keeps the process alive on its own.
    timer.unref();
    return () => clearInterval(timer);
  },
};

export interface ProgressOptions {
  /** @defaultValue systemClock */
  clock?: ProgressClock;
  /** A quiet stage (or bench) gets a "still …" line after this long without output. @defaultValue 10_000 */
  heartbeatMs?: number;
}

/** A heartbeat after this long without a line. @defaultValue 10 s */
export const HEARTBEAT_MS = 10_000;

/** "0.4 s" under 10 s, "17 s" under a minute, "2 min 05 s" beyond. */
export function formatElapsed(ms: number): string {
  const s = Math.max(0, ms) / 1000;
  // Truncated like the whole seconds below, so 9.99 s never reads "10.0 s".
  if (s < 10) return `${(Math.floor(s * 10) / 10).toFixed(1)} s`;
  if (s < 60) return `${Math.floor(s)} s`;
  const whole = Math.floor(s);
  return `${Math.floor(whole / 60)} min ${String(whole % 60).padStart(2, '0')} s`;
}

/** "probing the environment…" → "still probing the environment…". */
function still(activity: string): string {
  return `still ${activity.replace(/[.…\s]+$/, '')}…`;
}

function firstLine(message: string): string {
  return message.split('\n')[0] ?? '';
}

/**
 * One stderr line per stage, `[stage T] result`, where T is how long the stage took: a stage's last message (its
 * result) is printed when the next stage starts; the agent's attempts get a line each as they finish, since that
 * stage can take minutes. A stage with no line for `heartbeatMs` gets `[stage T] still <what it is doing>…`.
 * `flush` prints the last stage's result and stops the heartbeat.
 */
export function stagePrinter(write: (line: string) => void, opts: ProgressOptions = {}): { progress: ProgressFn; flush: () => void } {
  const clock = opts.clock ?? systemClock;
  const heartbeatMs = opts.heartbeatMs ?? HEARTBEAT_MS;
  let pending: string | null = null;
  let current: StageName | null = null;
  let stageStart = 0;
  let lastLine = 0;
  let activity = '';
  let attemptLines = false;
  let stop: (() => void) | null = null;
  const line = (stage: StageName, text: string): void => {
    write(`[${stage} ${formatElapsed(clock.now() - stageStart)}] ${text}`);
    lastLine = clock.now();
  };
  const beat = (): void => {
    // A stage that said it has nothing to do ("skipped: …") is not doing it still: no heartbeat for it.
    if (current === null || clock.now() - lastLine < heartbeatMs || /^skipped\b/.test(activity)) return;
    line(current, still(activity));
  };
  const writePending = (): void => {
    if (pending !== null && current !== null) line(current, pending);
    pending = null;
  };
  const flush = (): void => {
    writePending();
    stop?.();
    stop = null;
  };
  return {
    flush,
    progress: (stage, message) => {
      const text = firstLine(message);
      if (stage !== current) {
        writePending();
        current = stage;
        attemptLines = false;
        stageStart = clock.now();
        lastLine = stageStart;
      }
      stop ??= clock.every(Math.max(1, Math.min(heartbeatMs, 1000)), beat);
      if (stage === 'agent' && /^attempt \d+/.test(text)) {
        pending = null;
        attemptLines = true;
        line(stage, text);
        return;
      }
      // Once attempts have their lines, what the agent starts next is only for the heartbeat.
      if (!attemptLines) pending = text;
      activity = text;
    },
  };
}

interface RunningCase {
  started: number;
  stage: StageName | null;
  activity: string;
}

/**
 * Progress of a bench: a line when a case starts and when it ends, each saying how many are done and which are
 * running; while cases run with no line for `heartbeatMs`, one line with each running case's time, stage and what
 * it is doing. Cases' own stage lines are not printed (they would interleave); `caseStarted` returns the
 * progress sink that feeds the heartbeat.
 */
export function benchProgress(
  write: (line: string) => void,
  total: number,
  opts: ProgressOptions = {},
): {
  caseStarted: (id: string) => ProgressFn;
  caseFinished: (id: string, result: string) => void;
  stop: () => void;
} {
  const clock = opts.clock ?? systemClock;
  const heartbeatMs = opts.heartbeatMs ?? HEARTBEAT_MS;
  const running = new Map<string, RunningCase>();
  const t0 = clock.now();
  let done = 0;
  let started = 0;
  let lastLine = t0;
  let stopTimer: (() => void) | null = null;
  const emit = (text: string): void => {
    write(`repgen bench: ${text}`);
    lastLine = clock.now();
  };
  const runningList = (): string => (running.size ? `running ${[...running.keys()].join(', ')}` : 'none running');
  const beat = (): void => {
    if (!running.size || clock.now() - lastLine < heartbeatMs) return;
    const each = [...running].map(
      ([id, c]) =>
        `${id} (${formatElapsed(clock.now() - c.started)}${c.stage ? `, ${c.stage}: ${c.activity.replace(/[.…\s]+$/, '')}` : ''})`,
    );
    emit(`${done}/${total} done, ${formatElapsed(clock.now() - t0)} in; still running ${each.join('; ')}`);
  };
  return {
    caseStarted: (id) => {
      started += 1;
      const c: RunningCase = { started: clock.now(), stage: null, activity: '' };
      running.set(id, c);
      stopTimer ??= clock.every(Math.max(1, Math.min(heartbeatMs, 1000)), beat);
      emit(`[${started}/${total}] ${id} started; ${done}/${total} done, ${runningList()}`);
      return (stage, message) => {
        const text = firstLine(message);
        // An attempt's result is not what the case is doing now; keep the stage's latest activity.
        if (stage === 'agent' && /^attempt \d+/.test(text)) {
          if (c.stage !== stage) c.activity = text;
        } else c.activity = text;
        c.stage = stage;
      };
    },
    caseFinished: (id, result) => {
      const c = running.get(id);
      running.delete(id);
      done += 1;
      emit(`${id}${c ? ` (${formatElapsed(clock.now() - c.started)})` : ''}: ${result}; ${done}/${total} done, ${runningList()}`);
    },
    stop: () => {
      stopTimer?.();
      stopTimer = null;
    },
  };
}
