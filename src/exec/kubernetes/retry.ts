import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '../../log.js';

/**
 * Retrying Kubernetes API calls. The API server answers 409 (a write raced another), 429 (priority and
 * fairness throttling, with Retry-After) and 5xx (etcd leader change, webhook timeouts) in normal operation;
 * none of them says anything about the script, so they are retried with backoff before a run is given up.
 */

export interface RetryOptions {
  /** Attempts after the first. @defaultValue 5 */
  retries?: number;
  /** First backoff; doubles each attempt. @defaultValue 200 */
  baseDelayMs?: number;
  /** Longest single wait, also for a server's Retry-After. @defaultValue 5000 */
  maxDelayMs?: number;
}

/** The HTTP status of a client-node error (ApiException.code, or Watch's statusCode), if any. */
export function httpStatus(err: unknown): number | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const e = err as { code?: unknown; statusCode?: unknown };
  if (typeof e.code === 'number') return e.code;
  if (typeof e.statusCode === 'number') return e.statusCode;
  return undefined;
}

/** A connection that failed or broke (undici's "fetch failed" and its socket error codes), not a config error. */
function isConnectionError(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e && depth < 4; e = (e as { cause?: unknown }).cause, depth += 1) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && /^(E[A-Z]+|UND_ERR_)/.test(code)) return true;
    if (e instanceof TypeError && e.message === 'fetch failed') return true;
  }
  return false;
}

/** True for answers worth another try: 409, 429, 5xx, and broken connections. */
export function isRetryable(err: unknown): boolean {
  const status = httpStatus(err);
  if (status === undefined) return isConnectionError(err);
  return status === 409 || status === 429 || status >= 500;
}

function retryAfterMs(err: unknown): number | undefined {
  const headers = (err as { headers?: Record<string, string> } | null)?.headers;
  const raw = headers?.['retry-after'];
  if (raw === undefined) return undefined;
  const seconds = Number(raw);
  return Number.isFinite(seconds) && seconds >= 0 ? seconds * 1000 : undefined;
}

/** One line of what an API error said (the Status message when the body is a Status object). */
export function describeApiError(err: unknown): string {
  const status = httpStatus(err);
  const body = (err as { body?: unknown } | null)?.body;
  let message: string | undefined;
  if (typeof body === 'string') {
    try {
      message = (JSON.parse(body) as { message?: string }).message;
    } catch {
      message = body.slice(0, 200) || undefined;
    }
  } else if (body && typeof body === 'object') {
    message = (body as { message?: string }).message;
  }
  message ??= err instanceof Error ? err.message.split('\n')[0] : String(err);
  return status === undefined ? (message ?? 'connection failed') : `HTTP ${status}: ${message ?? ''}`.trim();
}

/**
 * Runs `call` until it succeeds, fails with a non-retryable error, or runs out of attempts. `onConflict` lets
 * a caller turn a 409 into a result (an earlier create that did land) instead of another attempt.
 */
export async function withRetry<T>(
  what: string,
  call: () => Promise<T>,
  { retries = 5, baseDelayMs = 200, maxDelayMs = 5000 }: RetryOptions = {},
  { log, signal, onConflict }: { log?: Logger; signal?: AbortSignal; onConflict?: () => Promise<T> } = {},
): Promise<T> {
  for (let attempt = 0; ; attempt += 1) {
    try {
      return await call();
    } catch (err) {
      if (httpStatus(err) === 409 && onConflict) return onConflict();
      if (attempt >= retries || !isRetryable(err) || signal?.aborted) throw err;
      const delay = Math.min(maxDelayMs, retryAfterMs(err) ?? baseDelayMs * 2 ** attempt);
      log?.warn({ what, attempt: attempt + 1, status: httpStatus(err), delayMs: delay }, 'kubernetes API call failed, retrying');
      await sleep(delay, undefined, signal ? { signal } : undefined).catch(() => undefined);
    }
  }
}
