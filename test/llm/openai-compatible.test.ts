import { afterEach, describe, expect, it } from 'vitest';
import { CancelledError } from '../../src/errors.js';
import {
  classifyLlmError,
  createLlmClient,
  LlmAuthError,
  LlmBadResponseError,
  LlmConnectionError,
  LlmContextTooLongError,
  LlmOverloadedError,
  LlmTimeoutError,
  type LlmClient,
  type LlmSettingsInput,
} from '../../src/llm/index.js';
import { silentLogger } from '../../src/log.js';
import { startScriptedOpenAiServer, type OpenAiResponse, type ScriptedServer } from '../helpers/openai-wire-server.js';

let server: ScriptedServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function setup(responses: OpenAiResponse[], overrides: Partial<LlmSettingsInput> = {}): Promise<LlmClient> {
  server = await startScriptedOpenAiServer(responses);
  const client = await createLlmClient(
    {
      provider: 'openai',
      baseURL: `${server.url}/v1`,
      initialBackoffMs: 5,
      maxBackoffMs: 5_000,
      timeoutMs: 5_000,
      maxRetries: 3,
      ...overrides,
    },
    { log: silentLogger, random: () => 0.5 },
  );
  if (!client) throw new Error('expected a client');
  return client;
}

const ask = { system: 'You reproduce bugs.', messages: [{ role: 'user' as const, content: 'Write a script.' }] };

async function caught(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (err) {
    return err;
  }
  throw new Error('expected a rejection');
}

describe('OpenAI-compatible adapter over fetch', () => {
  it('sends a chat completion (system first, temperature, max_tokens, bearer key) and reads the answer', async () => {
    const client = await setup([{ text: 'import torch', usage: { prompt_tokens: 120, completion_tokens: 30 } }], {
      apiKey: 'local-key',
      temperature: 0.7,
      maxTokens: 256,
    });
    expect(client.model).toBe('Qwen/Qwen2.5-Coder-7B-Instruct');
    const res = await client.complete({ ...ask, stop: ['###'] });
    expect(res.text).toBe('import torch');
    expect(res.stopReason).toBe('stop');
    expect(res.usage).toEqual({ inputTokens: 120, outputTokens: 30, costUsd: 0 });
    expect(res.attempts).toBe(1);
    const req = server!.requests[0]!;
    expect(req.path).toBe('/v1/chat/completions');
    expect(req.headers.authorization).toBe('Bearer local-key');
    expect(req.body).toEqual({
      model: 'Qwen/Qwen2.5-Coder-7B-Instruct',
      messages: [
        { role: 'system', content: 'You reproduce bugs.' },
        { role: 'user', content: 'Write a script.' },
      ],
      temperature: 0.7,
      max_tokens: 256,
      stop: ['###'],
      stream: false,
    });
  });

  it('sends no Authorization header without a key (vLLM, Ollama) and a per-request temperature wins', async () => {
    const client = await setup(['ok']);
    await client.complete({ ...ask, temperature: 0 });
    expect(server!.requests[0]!.headers.authorization).toBeUndefined();
    expect((server!.requests[0]!.body as { temperature: number }).temperature).toBe(0);
  });

  it('estimates tokens when the server leaves usage out, and prices with the table', async () => {
    const client = await setup([{ text: 'x'.repeat(400), usage: null }], {
      model: 'paid-model',
      prices: { 'paid-model': { input: 1, output: 2 } },
    });
    const res = await client.complete(ask);
    expect(res.usage.outputTokens).toBe(100);
    expect(res.usage.inputTokens).toBeGreaterThan(0);
    expect(res.usage.costUsd).toBeCloseTo((res.usage.inputTokens * 1 + 100 * 2) / 1e6, 12);
  });

  it('treats a null content as an empty answer', async () => {
    const client = await setup([{ text: null, finishReason: 'length' }]);
    const res = await client.complete(ask);
    expect(res.text).toBe('');
    expect(res.stopReason).toBe('length');
  });

  it('retries 429 honouring retry-after, then succeeds', async () => {
    const client = await setup([{ error: 'rate_limit', retryAfter: 1 }, 'done']);
    const started = Date.now();
    const res = await client.complete(ask);
    expect(res.text).toBe('done');
    expect(res.attempts).toBe(2);
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
  });

  it('gives up on a persistently overloaded server after maxRetries', async () => {
    const client = await setup([{ error: 'overloaded' }, { error: 'overloaded' }], { maxRetries: 1 });
    const err = await caught(client.complete(ask));
    expect(err).toBeInstanceOf(LlmOverloadedError);
    expect((err as LlmOverloadedError).attempts).toBe(2);
    expect(classifyLlmError(err)).toBe('unavailable');
  });

  it('does not retry 401', async () => {
    const client = await setup([{ error: 'auth' }, 'never']);
    const err = await caught(client.complete(ask));
    expect(err).toBeInstanceOf(LlmAuthError);
    expect((err as Error).message).toContain('Incorrect API key');
    expect(server!.requests).toHaveLength(1);
  });

  it('recognises context overflow in OpenAI shape and in vLLM flat shape', async () => {
    const client = await setup([{ error: 'context_length_exceeded' }, { error: 'context_length_exceeded', vllm: true }]);
    expect(await caught(client.complete(ask))).toBeInstanceOf(LlmContextTooLongError);
    const second = await caught(client.complete(ask));
    expect(second).toBeInstanceOf(LlmContextTooLongError);
    expect((second as Error).message).toContain('maximum context length is 32768');
    expect(server!.requests).toHaveLength(2);
  });

  it('times out a hanging server', async () => {
    const client = await setup([{ hang: true }], { timeoutMs: 300, maxRetries: 0 });
    expect(await caught(client.complete(ask))).toBeInstanceOf(LlmTimeoutError);
  });

  it('cancels mid-request and mid-backoff', async () => {
    const client = await setup([{ hang: true }, { error: 'overloaded', retryAfter: 30 }, 'never'], {
      timeoutMs: 30_000,
      maxBackoffMs: 60_000,
    });
    const a = new AbortController();
    setTimeout(() => a.abort(), 100);
    expect(await caught(client.complete(ask, a.signal))).toBeInstanceOf(CancelledError);
    const b = new AbortController();
    setTimeout(() => b.abort(), 150);
    // Not cancelled, the call would retry after 30 s and get 'never' back.
    expect(await caught(client.complete(ask, b.signal))).toBeInstanceOf(CancelledError);
    expect(server!.requests).toHaveLength(2);
  });

  it.each([
    ['garbage', { raw: 'garbage' }],
    ['an empty body', { raw: '' }],
    ['no choices', { raw: '{"id":"x","choices":[]}' }],
  ])('turns %s into LlmBadResponseError', async (_label, step) => {
    const client = await setup([step]);
    const err = await caught(client.complete(ask));
    expect(err).toBeInstanceOf(LlmBadResponseError);
    expect(classifyLlmError(err)).toBe('bad_response');
  });

  it('reports an unreachable server as a connection error after retrying', async () => {
    const client = await setup([], { maxRetries: 1 });
    await server!.close();
    const err = await caught(client.complete(ask));
    expect(err).toBeInstanceOf(LlmConnectionError);
    expect((err as LlmConnectionError).attempts).toBe(2);
    expect((err as Error).message).toContain('cannot reach');
    server = undefined;
  });
});
