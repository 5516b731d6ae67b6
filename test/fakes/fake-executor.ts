import type { RunRequest, RunRequestInput, RunResult, ScriptExecutor } from '../../src/exec/types.js';
import { RunRequest as RunRequestSchema } from '../../src/exec/types.js';

/** What a scripted run printed; everything else of the RunResult gets a plausible default. */
export interface FakeRun {
  stdout?: string;
  stderr?: string;
  exitCode?: number | null;
  timedOut?: boolean;
  infra?: RunResult['infra'];
  /** Milliseconds the fake waits before answering (so that cancellation can land mid-run). */
  delayMs?: number;
  /**
   * The fake answers once this settles (after `delayMs`, if both are given), or when the run is aborted: a run that
   * ends on an event of the test rather than on a timer, so that a busy machine sees the same order as a quiet one.
   */
  until?: Promise<unknown>;
}

/** Builds a complete RunResult from a few fields, the way the local executor would report it. */
export function fakeRunResult(run: FakeRun, executor = 'fake'): RunResult {
  const stdout = run.stdout ?? '';
  const stderr = run.stderr ?? '';
  return {
    executor,
    exitCode: run.exitCode === undefined ? (stderr.includes('Traceback') ? 1 : 0) : run.exitCode,
    signal: null,
    timedOut: run.timedOut ?? false,
    oomKilled: false,
    durationMs: 5,
    cpuMs: 5,
    peakMemoryMb: 10,
    stdout,
    stderr,
    output: stdout + stderr,
    stdoutBytes: Buffer.byteLength(stdout),
    stderrBytes: Buffer.byteLength(stderr),
    stdoutTruncated: false,
    stderrTruncated: false,
    outputCapBytes: 1_000_000,
    files: [],
    isolation: { network: 'none', sandbox: 'fake', notes: [] },
    infra: run.infra ?? null,
  };
}

/** Decides a run from the request (its script text, seed…). */
export type FakeResponder = (request: RunRequest, script: string) => FakeRun;

/**
 * A ScriptExecutor that never runs anything: a responder decides what each run printed. It records
 * every request so that tests can check what the pipeline asked for.
 */
export class FakeExecutor implements ScriptExecutor {
  readonly name = 'fake';
  readonly requests: RunRequest[] = [];

  constructor(private readonly respond: FakeResponder) {}

  async run(input: RunRequestInput, signal?: AbortSignal): Promise<RunResult> {
    const request = RunRequestSchema.parse(input);
    this.requests.push(request);
    const script = request.files.find((f) => f.path === request.entry)?.content ?? '';
    const run = this.respond(request, script);
    if (run.until) await settledOrAborted(run.until, signal);
    if (run.delayMs) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, run.delayMs);
        signal?.addEventListener(
          'abort',
          () => {
            clearTimeout(timer);
            resolve();
          },
          { once: true },
        );
      });
    }
    if (signal?.aborted) return fakeRunResult({ exitCode: null, infra: { kind: 'aborted', message: 'aborted' } });
    return fakeRunResult(run);
  }

  /** Scripts of the runs so far (entry file content), in order. */
  scripts(): string[] {
    return this.requests.map((r) => r.files.find((f) => f.path === r.entry)?.content ?? '');
  }
}

function settledOrAborted(until: Promise<unknown>, signal: AbortSignal | undefined): Promise<void> {
  return new Promise<void>((resolve) => {
    if (signal?.aborted) return resolve();
    signal?.addEventListener('abort', () => resolve(), { once: true });
    until.then(
      () => resolve(),
      () => resolve(),
    );
  });
}
