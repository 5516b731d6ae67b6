import { afterEach, describe, expect, it } from 'vitest';
import { CancelledError } from '../../src/errors.js';
import {
  classifyLlmError,
  createLlmClient,
  LlmAuthError,
  LlmBadResponseError,
  LlmContextTooLongError,
  LlmOverloadedError,
  LlmRateLimitError,
  LlmServerError,
  LlmTimeoutError,
  type LlmClient,
  type LlmSettingsInput,
} from '../../src/llm/index.js';
import type { Logger } from '../../src/log.js';
import {
  PROMPT_TOO_LONG,
  startScriptedAnthropicServer,
  type AnthropicResponse,
  type ScriptedServer,
} from '../helpers/anthropic-wire-server.js';

let server: ScriptedServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

function recordingLog(): Logger & { lines: { level: string; msg: string; obj: Record<string, unknown> }[] } {
  const lines: { level: string; msg: string; obj: Record<string, unknown> }[] = [];
  const at = (level: string) => (obj: Record<string, unknown>, msg: string) => void lines.push({ level, msg, obj });
  return { lines, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

async function setup(
  responses: AnthropicResponse[],
  overrides: Partial<LlmSettingsInput> = {},
  log: Logger = recordingLog(),
): Promise<LlmClient> {
  server = await startScriptedAnthropicServer(responses);
  const client = await createLlmClient(
    {
      provider: 'anthropic',
      apiKey: 'sk-test-key',
      baseURL: server.url,
      initialBackoffMs: 5,
      maxBackoffMs: 5_000,
      timeoutMs: 5_000,
      maxRetries: 3,
      ...overrides,
    },
    { log, random: () => 0.5 },
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

describe('anthropic adapter over the real SDK', () => {
  it('returns the text, stop reason, usage and cost, and sends a real Messages API request', async () => {
    const client = await setup([{ text: 'print("hi")', usage: { input_tokens: 1000, output_tokens: 500 } }], {
      model: 'claude-sonnet-5-5',
      maxTokens: 777,
    });
    const res = await client.complete({ ...ask, stop: ['END'] });
    expect(res.text).toBe('print("hi")');
    expect(res.stopReason).toBe('end_turn');
    expect(res.model).toBe('claude-sonnet-5-5');
    expect(res.usage.inputTokens).toBe(1000);
    expect(res.usage.outputTokens).toBe(500);
    // claude-sonnet-5-5 is $2 in / $10 out per million tokens.
    expect(res.usage.costUsd).toBeCloseTo((1000 * 2 + 500 * 10) / 1e6, 12);
    expect(res.attempts).toBe(1);

    const req = server!.requests[0]!;
    expect(req.path).toBe('/v1/messages');
    // SDK 1.x sends the key as a bearer token (x-api-key before 1.0).
    expect(req.headers.authorization).toBe('Bearer sk-test-key');
    expect(req.headers['anthropic-version']).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(req.body).toEqual({
      model: 'claude-sonnet-5-5',
      max_tokens: 777,
      system: 'You reproduce bugs.',
      stop_sequences: ['END'],
      messages: [{ role: 'user', content: 'Write a script.' }],
    });
  });

  it('prices with a table given in the settings (prefix match for dated ids)', async () => {
    const client = await setup([{ text: 'ok', usage: { input_tokens: 2_000_000, output_tokens: 1_000_000 }, model: 'my-model-20260101' }], {
      model: 'my-model',
      prices: { 'my-model': { input: 1.5, output: 3 } },
    });
    const res = await client.complete(ask);
    expect(res.model).toBe('my-model-20260101');
    expect(res.usage.costUsd).toBeCloseTo(3 + 3, 9);
  });

  it('warns once and counts 0 $ for a model without a price', async () => {
    const log = recordingLog();
    const client = await setup(
      [
        { text: 'a', usage: { input_tokens: 10, output_tokens: 1 } },
        { text: 'b', usage: { input_tokens: 10, output_tokens: 1 } },
      ],
      { model: 'mystery-model' },
      log,
    );
    expect((await client.complete(ask)).usage.costUsd).toBe(0);
    await client.complete(ask);
    expect(log.lines.filter((l) => l.msg.startsWith('no price')).length).toBe(1);
  });

  it('retries a 429 after waiting what retry-after says', async () => {
    const client = await setup([{ error: 'rate_limit_error', retryAfter: 1 }, 'done']);
    const started = Date.now();
    const res = await client.complete(ask);
    const elapsed = Date.now() - started;
    expect(res.text).toBe('done');
    expect(res.attempts).toBe(2);
    // Our own backoff would be ~5 ms; only honouring retry-after makes it take a second.
    expect(elapsed).toBeGreaterThanOrEqual(950);
    expect(server!.requests).toHaveLength(2);
  });

  it('retries 529 overloaded and 500 with backoff, then succeeds', async () => {
    const client = await setup([{ error: 'overloaded_error', retryAfter: 0 }, { error: 'api_error' }, 'third time']);
    const res = await client.complete(ask);
    expect(res.text).toBe('third time');
    expect(res.attempts).toBe(3);
    expect(server!.requests).toHaveLength(3);
  });

  it('gives up after maxRetries with the last typed error', async () => {
    const client = await setup([{ error: 'overloaded_error' }, { error: 'overloaded_error' }, { error: 'overloaded_error' }], {
      maxRetries: 2,
    });
    const err = await caught(client.complete(ask));
    expect(err).toBeInstanceOf(LlmOverloadedError);
    expect((err as LlmOverloadedError).status).toBe(529);
    expect((err as LlmOverloadedError).attempts).toBe(3);
    expect((err as Error).message).toContain('Overloaded');
    expect(classifyLlmError(err)).toBe('unavailable');
    expect(server!.requests).toHaveLength(3);
  });

  it('gives up at once when retry-after is longer than the backoff cap', async () => {
    // Waiting the 120 s would outlast the test's timeout: ending at all shows it did not wait.
    const client = await setup([{ error: 'rate_limit_error', retryAfter: 120 }, 'never'], { maxBackoffMs: 1_000 });
    const err = await caught(client.complete(ask));
    expect(err).toBeInstanceOf(LlmRateLimitError);
    expect((err as LlmRateLimitError).retryAfterMs).toBe(120_000);
    expect(server!.requests).toHaveLength(1);
  });

  it('follows the server when x-should-retry overrides the status rule', async () => {
    const client = await setup([{ error: 'invalid_request_error', status: 409, headers: { 'x-should-retry': 'true' } }, 'retried']);
    expect((await client.complete(ask)).attempts).toBe(2);
  });

  it('does not retry a 401 and says it is an auth problem', async () => {
    const client = await setup([{ error: 'authentication_error' }, 'never']);
    const err = await caught(client.complete(ask));
    expect(err).toBeInstanceOf(LlmAuthError);
    expect((err as Error).message).toBe('anthropic 401 authentication_error: invalid x-api-key');
    expect(classifyLlmError(err)).toBe('auth');
    expect(server!.requests).toHaveLength(1);
  });

  it('recognises a prompt over the context window (400 and 413), without retrying', async () => {
    const client = await setup([{ error: 'invalid_request_error', message: PROMPT_TOO_LONG }, { error: 'request_too_large' }]);
    const first = await caught(client.complete(ask));
    expect(first).toBeInstanceOf(LlmContextTooLongError);
    expect(classifyLlmError(first)).toBe('context_too_long');
    expect(await caught(client.complete(ask))).toBeInstanceOf(LlmContextTooLongError);
    expect(server!.requests).toHaveLength(2);
  });

  it('times a hanging call out, and retries the timeout', async () => {
    const client = await setup([{ hang: true }, 'after the timeout'], { timeoutMs: 300, maxRetries: 1 });
    const res = await client.complete(ask);
    expect(res.text).toBe('after the timeout');
    expect(res.attempts).toBe(2);
  });

  it('throws LlmTimeoutError when every call times out', async () => {
    // The server never answers: only the client's own timeout ends the call.
    const client = await setup([{ hang: true }], { timeoutMs: 300, maxRetries: 0 });
    const err = await caught(client.complete(ask));
    expect(err).toBeInstanceOf(LlmTimeoutError);
    expect((err as Error).message).toContain('300 ms');
  });

  it('cancels at once when aborted mid-request', async () => {
    const client = await setup([{ hang: true }], { timeoutMs: 30_000 });
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 100);
    // Not cancelled, the call would end in its 30 s timeout as an LlmTimeoutError.
    const err = await caught(client.complete(ask, ac.signal));
    expect(err).toBeInstanceOf(CancelledError);
    expect(classifyLlmError(err)).toBe('cancelled');
  });

  it('cancels at once when aborted during the backoff', async () => {
    const client = await setup([{ error: 'overloaded_error', retryAfter: 30 }, 'never'], { maxBackoffMs: 60_000 });
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 200);
    // Not cancelled, the call would retry after 30 s and get 'never' back.
    const err = await caught(client.complete(ask, ac.signal));
    expect(err).toBeInstanceOf(CancelledError);
    expect(server!.requests).toHaveLength(1);
  });

  it('does not call at all when the signal is already aborted', async () => {
    const client = await setup(['never']);
    const err = await caught(client.complete(ask, AbortSignal.abort()));
    expect(err).toBeInstanceOf(CancelledError);
    expect(server!.requests).toHaveLength(0);
  });

  it.each([
    ['an HTML page', { raw: '<html>502 Bad Gateway</html>', headers: { 'content-type': 'text/html' } }],
    ['JSON that is not a message', { raw: '{"hello":"world"}' }],
    ['invalid JSON', { raw: '{"type":"message", "content": [' }],
    ['an empty body', { raw: '' }],
  ])('turns %s with status 200 into LlmBadResponseError, without retrying', async (_label, step) => {
    const client = await setup([step, 'never']);
    const err = await caught(client.complete(ask));
    expect(err).toBeInstanceOf(LlmBadResponseError);
    expect(classifyLlmError(err)).toBe('bad_response');
    expect(server!.requests).toHaveLength(1);
  });

  it('keeps only text blocks (adaptive thinking adds thinking blocks before the answer)', async () => {
    const message = {
      id: 'msg_1',
      type: 'message',
      role: 'assistant',
      model: 'claude-sonnet-5-5',
      content: [
        { type: 'thinking', thinking: 'Let me think about the shapes…', signature: 'sig' },
        { type: 'text', text: 'import torch\n' },
        { type: 'text', text: 'print(torch.__version__)' },
      ],
      stop_reason: 'end_turn',
      stop_sequence: null,
      usage: { input_tokens: 10, output_tokens: 90 },
    };
    const client = await setup([{ raw: JSON.stringify(message) }]);
    const res = await client.complete(ask);
    expect(res.text).toBe('import torch\nprint(torch.__version__)');
    expect(res.usage.outputTokens).toBe(90);
  });

  it('returns an empty text for a message with no content blocks', async () => {
    const client = await setup([{ text: '', stopReason: 'max_tokens' }]);
    const res = await client.complete(ask);
    expect(res.text).toBe('');
    expect(res.stopReason).toBe('max_tokens');
    expect(res.usage.outputTokens).toBe(0);
  });

  it('fails with the fake\'s "scripted responses exhausted" message, without retrying into it', async () => {
    const client = await setup([]);
    const err = await caught(client.complete(ask));
    expect(err).toBeInstanceOf(LlmServerError);
    expect((err as Error).message).toContain('scripted responses exhausted');
    expect(server!.requests).toHaveLength(1);
    expect(server!.exhaustedErrors).toHaveLength(1);
  });
});
