import { onTestFailed, onTestFinished, type TestContext } from 'vitest';

export interface WaitOptions {
  /** What the wait is for, in words: the failure message names it when the test's timeout ends the wait. */
  what: string;
  /** Milliseconds between two probes. @defaultValue 50 */
  everyMs?: number;
  /**
   * The test's own context: required in a concurrent test (`it.concurrent`, `describe.concurrent`), where the imported
   * hooks cannot tell which of the running tests they belong to. @defaultValue the current test
   */
  test?: Pick<TestContext, 'onTestFailed' | 'onTestFinished'>;
}

/**
 * Polls `probe` until it returns a truthy value, and returns that value. It has no deadline of its own: on a busy
 * machine a slow wait is not a failure, so the only bound is the test's own timeout (vitest's `testTimeout`, or the
 * one the test passes to `it`). When that timeout fails the test, the failure says what was still awaited and what
 * the probe last returned, instead of vitest's bare "Test timed out". Once the test has finished, the polling stops.
 */
export async function waitFor<T>(probe: () => T | Promise<T>, opts: WaitOptions): Promise<NonNullable<T>> {
  let returned = false;
  let finished = false;
  let last: unknown = undefined;
  let probes = 0;
  // Outside a running test (a beforeAll, a helper process) there is no test to annotate or stop with.
  try {
    (opts.test?.onTestFailed ?? onTestFailed)(({ task }) => {
      if (returned) return;
      for (const error of task.result?.errors ?? []) {
        error.message = `${error.message}\n  while waiting for ${opts.what} (${probes} probes, last returned ${shown(last)})`;
      }
    });
    // onTestFinished runs before onTestFailed: this flag only stops the polling.
    (opts.test?.onTestFinished ?? onTestFinished)(() => {
      finished = true;
    });
  } catch {
    // not inside a test: nothing to hook
  }
  for (;;) {
    if (finished) throw new Error(`stopped waiting for ${opts.what}: the test has finished`);
    last = await probe();
    probes += 1;
    if (last) {
      returned = true;
      return last as NonNullable<T>;
    }
    await new Promise((r) => setTimeout(r, opts.everyMs ?? 50));
  }
}

function shown(v: unknown): string {
  const text = typeof v === 'string' ? JSON.stringify(v) : String(v);
  return text.length > 120 ? `${text.slice(0, 120)}…` : text;
}
