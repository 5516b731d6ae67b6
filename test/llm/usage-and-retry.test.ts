import { afterEach, describe, expect, it } from 'vitest';
import { CancelledError } from '../../src/errors.js';
import { addUsage, createLlmClient, createUsageAccumulator, meterClient, NO_USAGE } from '../../src/llm/index.js';
import { backoffMs, retryAfterFromHeaders, sleep } from '../../src/llm/retry.js';
import { silentLogger } from '../../src/log.js';
import { startScriptedAnthropicServer, type ScriptedServer } from '../helpers/anthropic-wire-server.js';

let server: ScriptedServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('usage accumulator', () => {
  it('sums usage and reports when a token or $ budget is reached', () => {
    const acc = createUsageAccumulator({ maxTokens: 1000, maxCostUsd: 0.01 });
    acc.add({ inputTokens: 400, outputTokens: 100, costUsd: 0.002 });
    expect(acc.exhausted()).toBe(false);
    expect(acc.tokensLeft()).toBe(500);
    acc.add({ inputTokens: 400, outputTokens: 100, costUsd: 0.002 });
    expect(acc.totals).toEqual({ calls: 2, inputTokens: 800, outputTokens: 200, costUsd: 0.004 });
    expect(acc.exhausted()).toBe(true);
    expect(acc.tokensLeft()).toBe(0);

    const byCost = createUsageAccumulator({ maxCostUsd: 0.01 });
    byCost.add({ inputTokens: 1, outputTokens: 1, costUsd: 0.011 });
    expect(byCost.exhausted()).toBe(true);
    expect(createUsageAccumulator().tokensLeft()).toBe(Infinity);
  });

  it('addUsage is a plain sum', () => {
    expect(addUsage(NO_USAGE, { inputTokens: 1, outputTokens: 2, costUsd: 0.5 })).toEqual({
      inputTokens: 1,
      outputTokens: 2,
      costUsd: 0.5,
    });
  });

  it('meterClient counts every completion made through a real client, including retried ones once', async () => {
    server = await startScriptedAnthropicServer([
      { text: 'a', usage: { input_tokens: 100, output_tokens: 10 } },
      { error: 'overloaded_error', retryAfter: 0 },
      { text: 'b', usage: { input_tokens: 200, output_tokens: 20 } },
    ]);
    const client = await createLlmClient(
      { provider: 'anthropic', apiKey: 'k', baseURL: server.url, model: 'claude-haiku-4-5', initialBackoffMs: 1 },
      { log: silentLogger },
    );
    const acc = createUsageAccumulator({ maxTokens: 330 });
    const metered = meterClient(client!, acc);
    expect(metered.model).toBe('claude-haiku-4-5');
    await metered.complete({ messages: [{ role: 'user', content: 'x' }] });
    expect(acc.exhausted()).toBe(false);
    await metered.complete({ messages: [{ role: 'user', content: 'y' }] });
    expect(acc.totals).toEqual({ calls: 2, inputTokens: 300, outputTokens: 30, costUsd: (300 * 1 + 30 * 5) / 1e6 });
    expect(acc.exhausted()).toBe(true);
  });
});

describe('retry policy pieces', () => {
  const policy = { initialBackoffMs: 1000, maxBackoffMs: 10_000 };

  it('backs off exponentially with jitter in [0.5, 1) of the step, capped', () => {
    expect(backoffMs(1, undefined, policy, () => 0)).toBe(500);
    expect(backoffMs(1, undefined, policy, () => 0.999)).toBe(1000);
    expect(backoffMs(3, undefined, policy, () => 0)).toBe(2000);
    expect(backoffMs(10, undefined, policy, () => 0.999)).toBe(9995);
    expect(backoffMs(2, 7000, policy, () => 0)).toBe(7000);
  });

  it('reads retry-after-ms, retry-after seconds and HTTP dates', () => {
    const headers = (h: Record<string, string>) => (n: string) => h[n];
    expect(retryAfterFromHeaders(headers({ 'retry-after-ms': '250' }))).toBe(250);
    expect(retryAfterFromHeaders(headers({ 'retry-after': '2' }))).toBe(2000);
    expect(retryAfterFromHeaders(headers({ 'retry-after': '0.5' }))).toBe(500);
    const now = Date.parse('2026-11-29T20:00:00Z');
    expect(retryAfterFromHeaders(headers({ 'retry-after': 'Sun, 29 Nov 2026 20:00:03 GMT' }), now)).toBe(3000);
    expect(retryAfterFromHeaders(headers({ 'retry-after': 'soon' }))).toBeUndefined();
    expect(retryAfterFromHeaders(headers({}))).toBeUndefined();
  });

  it('sleep rejects with CancelledError as soon as the signal fires', async () => {
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 50);
    // Not cancelled, the sleep would resolve after 10 s instead of rejecting.
    await expect(sleep(10_000, ac.signal)).rejects.toBeInstanceOf(CancelledError);
  });
});
