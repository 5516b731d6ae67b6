import { CancelledError } from '../errors.js';
import type { Logger } from '../log.js';
import { LlmConnectionError, LlmError, LlmTimeoutError } from './errors.js';

/**
 * One retry policy for both adapters: exponential backoff with jitter, `retry-after` honoured, a
 * timeout per call, and an AbortSignal that cancels at once — mid-request and mid-backoff. The
 * Anthropic SDK has its own retries; we switch them off (maxRetries: 0) so that both providers behave
 * the same, retries are not multiplied (SDK × ours), waits are cancellable, and every retry is logged.
 */

export interface RetryPolicy {
  provider: 'anthropic' | 'openai';
  /** Retries after the first call. */
  maxRetries: number;
  initialBackoffMs: number;
  maxBackoffMs: number;
  /** Per-call limit. */
  timeoutMs: number;
}

export interface RetryDeps {
  log: Logger;
  /** [0, 1); injectable so tests can pin the jitter. @defaultValue Math.random */
  random?: () => number;
}

/** What one call reports besides its value. */
export interface Attempted<T> {
  value: T;
  /** Calls made, 1 when the first succeeded. */
  attempts: number;
}

/**
 * Runs `call` until it succeeds, fails with a non-retryable error, or retries run out. `call` gets a
 * signal that fires on the caller's abort or on this call's timeout; it must throw {@link LlmError}s
 * for provider failures (anything else is treated as a connection failure when a signal did not fire).
 */
export async function callWithRetries<T>(
  call: (signal: AbortSignal) => Promise<T>,
  policy: RetryPolicy,
  deps: RetryDeps,
  signal?: AbortSignal,
): Promise<Attempted<T>> {
  const random = deps.random ?? Math.random;
  for (let attempt = 1; ; attempt += 1) {
    throwIfCancelled(signal);
    let error: LlmError;
    try {
      return { value: await callOnce(call, policy, signal), attempts: attempt };
    } catch (err) {
      if (err instanceof CancelledError) throw err;
      error =
        err instanceof LlmError
          ? err
          : new LlmConnectionError(`${policy.provider}: ${describe(err)}`, { provider: policy.provider, cause: err });
    }
    error.attempts = attempt;
    if (!(error.serverSaysRetry ?? error.retryable) || attempt > policy.maxRetries) throw error;

    const delay = backoffMs(attempt, error.retryAfterMs, policy, random);
    if (delay > policy.maxBackoffMs) {
      // The server wants a longer pause than we allow: failing now leaves the budget to the caller.
      deps.log.warn(
        { provider: policy.provider, retryAfterMs: error.retryAfterMs, maxBackoffMs: policy.maxBackoffMs },
        'LLM retry-after exceeds the backoff cap; giving up',
      );
      throw error;
    }
    deps.log.warn(
      { provider: policy.provider, error: error.name, status: error.status, attempt, delayMs: delay },
      'LLM call failed; retrying',
    );
    await sleep(delay, signal);
  }
}

/**
 * The wait before retry number `attempt` (1-based): the server's `retry-after` when given, else
 * `initial * 2^(attempt-1)` capped at `maxBackoffMs`, scaled by a random factor in [0.5, 1) — "equal
 * jitter", so that many workers hit by the same 529 do not come back in lock-step.
 */
export function backoffMs(
  attempt: number,
  retryAfterMs: number | undefined,
  policy: Pick<RetryPolicy, 'initialBackoffMs' | 'maxBackoffMs'>,
  random: () => number,
): number {
  if (retryAfterMs !== undefined) return retryAfterMs;
  const base = Math.min(policy.maxBackoffMs, policy.initialBackoffMs * 2 ** (attempt - 1));
  return Math.round(base * (0.5 + random() * 0.5));
}

/** Parses `retry-after-ms` (milliseconds) or `retry-after` (seconds, or an HTTP date). */
export function retryAfterFromHeaders(get: (name: string) => string | null | undefined, now = Date.now()): number | undefined {
  const ms = get('retry-after-ms');
  if (ms && /^\d+(\.\d+)?$/.test(ms.trim())) return Math.round(Number(ms));
  const value = get('retry-after')?.trim();
  if (!value) return undefined;
  if (/^\d+(\.\d+)?$/.test(value)) return Math.round(Number(value) * 1000);
  const date = Date.parse(value);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}

async function callOnce<T>(call: (signal: AbortSignal) => Promise<T>, policy: RetryPolicy, signal?: AbortSignal): Promise<T> {
  const timeout = new AbortController();
  const timer = setTimeout(() => timeout.abort(new Error('timeout')), policy.timeoutMs);
  const combined = signal ? AbortSignal.any([signal, timeout.signal]) : timeout.signal;
  try {
    return await call(combined);
  } catch (err) {
    // Which signal fired decides what the failure means, whatever shape the SDK or fetch gave it.
    if (signal?.aborted) throw cancelled(signal);
    if (timeout.signal.aborted) {
      throw new LlmTimeoutError(`${policy.provider}: no answer within ${policy.timeoutMs} ms`, { provider: policy.provider, cause: err });
    }
    throw err;
  } finally {
    clearTimeout(timer);
  }
}

function throwIfCancelled(signal?: AbortSignal): void {
  if (signal?.aborted) throw cancelled(signal);
}

function cancelled(signal: AbortSignal): CancelledError {
  const reason: unknown = signal.reason;
  if (reason instanceof CancelledError) return reason;
  return new CancelledError(`LLM call cancelled${reason instanceof Error && reason.message ? `: ${reason.message}` : ''}`, {
    cause: reason,
  });
}

/** Waits `ms`, or rejects with CancelledError as soon as `signal` fires. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(cancelled(signal));
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(cancelled(signal as AbortSignal));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

function describe(err: unknown): string {
  if (err instanceof Error) {
    const cause = err.cause instanceof Error ? ` (${err.cause.message})` : '';
    return `${err.message}${cause}`;
  }
  return String(err);
}
