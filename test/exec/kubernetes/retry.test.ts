// First: client-node's undici needs the Node 20 shims before it loads.
import { ApiException } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { describeApiError, isRetryable, withRetry } from '../../../src/exec/kubernetes/retry.js';

const api = (code: number, headers: Record<string, string> = {}) =>
  new ApiException(code, `HTTP-Code: ${code}`, JSON.stringify({ kind: 'Status', code, message: `status ${code}` }), headers);

/** A call that fails with the given errors in turn, then answers 'ok'; it records how often it was called. */
function scripted(errors: unknown[]) {
  const calls: number[] = [];
  const fn = async () => {
    calls.push(Date.now());
    const next = errors.shift();
    if (next !== undefined) throw next;
    return 'ok';
  };
  return { fn, calls };
}

describe('withRetry', () => {
  it('retries 409, 429, 5xx and broken connections, then succeeds', async () => {
    const refused = Object.assign(new TypeError('fetch failed'), { cause: Object.assign(new Error('connect'), { code: 'ECONNREFUSED' }) });
    const s = scripted([api(500), api(429), api(503), refused, api(409)]);
    await expect(withRetry('x', s.fn, { retries: 5, baseDelayMs: 1 })).resolves.toBe('ok');
    expect(s.calls).toHaveLength(6);
  });

  it('gives up at once on 4xx answers that retrying cannot fix, and on configuration errors', async () => {
    for (const err of [api(403), api(404), api(422), new Error('HTTP protocol is not allowed when skipTLSVerify is not set or false')]) {
      const s = scripted([err]);
      await expect(withRetry('x', s.fn, { baseDelayMs: 1 })).rejects.toBe(err);
      expect(s.calls).toHaveLength(1);
    }
    expect(isRetryable(new DOMException('aborted', 'AbortError'))).toBe(false);
  });

  it('stops after the last attempt with the last error', async () => {
    const s = scripted([api(500), api(500), api(502)]);
    await expect(withRetry('x', s.fn, { retries: 2, baseDelayMs: 1 })).rejects.toMatchObject({ code: 502 });
    expect(s.calls).toHaveLength(3);
  });

  it("waits as long as the server's Retry-After says (capped)", async () => {
    const s = scripted([api(429, { 'retry-after': '1' })]);
    await withRetry('x', s.fn, { baseDelayMs: 1, maxDelayMs: 300 });
    expect(s.calls[1]! - s.calls[0]!).toBeGreaterThanOrEqual(290);
  });

  it('turns a 409 into a result when the caller can adopt what already exists', async () => {
    const s = scripted([api(409)]);
    await expect(withRetry('x', s.fn, {}, { onConflict: async () => 'adopted' })).resolves.toBe('adopted');
  });

  it('describes errors by status and the Status message', () => {
    expect(describeApiError(api(403))).toBe('HTTP 403: status 403');
    expect(describeApiError(new Error('boom\nstack'))).toBe('boom');
  });
});
