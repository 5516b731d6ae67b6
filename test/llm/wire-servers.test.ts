import { afterEach, describe, expect, it } from 'vitest';
import { startScriptedAnthropicServer } from '../helpers/anthropic-wire-server.js';
import { startScriptedOpenAiServer } from '../helpers/openai-wire-server.js';
import type { ScriptedServer } from '../helpers/scripted-wire-server.js';

/** The fakes themselves: other engineers drive the agent and the App through them, so they must be right. */

const servers: ScriptedServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function post(url: string, body: unknown): Promise<{ status: number; headers: Headers; json: unknown }> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, headers: res.headers, json: text ? (JSON.parse(text) as unknown) : undefined };
}

describe('scripted Anthropic server', () => {
  it('answers in the Messages API shape, records requests, and can answer from the request', async () => {
    const s = await startScriptedAnthropicServer([
      'first',
      (req) => ({
        text: `you said ${(req.body as { messages: { content: string }[] }).messages[0]!.content}`,
        usage: { input_tokens: 7, output_tokens: 3 },
      }),
    ]);
    servers.push(s);
    const one = await post(`${s.url}/v1/messages`, { model: 'claude-x', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] });
    expect(one.status).toBe(200);
    expect(one.json).toMatchObject({
      type: 'message',
      role: 'assistant',
      model: 'claude-x',
      content: [{ type: 'text', text: 'first' }],
      stop_reason: 'end_turn',
      stop_sequence: null,
      usage: { input_tokens: expect.any(Number), output_tokens: 2 },
    });
    expect(one.headers.get('request-id')).toMatch(/^req_/);
    const two = await post(`${s.url}/v1/messages`, { model: 'claude-x', messages: [{ role: 'user', content: 'ping' }] });
    expect(two.json).toMatchObject({ content: [{ text: 'you said ping' }], usage: { input_tokens: 7, output_tokens: 3 } });
    expect(s.requests.map((r) => r.index)).toEqual([0, 1]);
    expect(s.remaining()).toBe(0);
  });

  it('sends error bodies with the real statuses and retry-after', async () => {
    const s = await startScriptedAnthropicServer([
      { error: 'overloaded_error', retryAfter: 3 },
      { error: 'rate_limit_error' },
      { error: 'api_error' },
    ]);
    servers.push(s);
    const overloaded = await post(`${s.url}/v1/messages`, {});
    expect(overloaded.status).toBe(529);
    expect(overloaded.headers.get('retry-after')).toBe('3');
    expect(overloaded.json).toMatchObject({
      type: 'error',
      error: { type: 'overloaded_error', message: 'Overloaded' },
      request_id: expect.stringMatching(/^req_/),
    });
    expect((await post(`${s.url}/v1/messages`, {})).status).toBe(429);
    expect((await post(`${s.url}/v1/messages`, {})).status).toBe(500);
  });

  it('says "scripted responses exhausted" (500, x-should-retry: false) and 404s other routes', async () => {
    const s = await startScriptedAnthropicServer([]);
    servers.push(s);
    const res = await post(`${s.url}/v1/messages`, {});
    expect(res.status).toBe(500);
    expect(res.headers.get('x-should-retry')).toBe('false');
    expect(JSON.stringify(res.json)).toContain('scripted responses exhausted');
    expect(s.exhaustedErrors).toHaveLength(1);
    expect((await post(`${s.url}/v1/complete`, {})).status).toBe(404);
  });

  it('delays a response', async () => {
    const s = await startScriptedAnthropicServer([{ text: 'slow', delayMs: 200 }]);
    servers.push(s);
    const started = Date.now();
    await post(`${s.url}/v1/messages`, {});
    expect(Date.now() - started).toBeGreaterThanOrEqual(190);
  });
});

describe('scripted OpenAI server', () => {
  it('answers in the chat completion shape', async () => {
    const s = await startScriptedOpenAiServer(['hello']);
    servers.push(s);
    const res = await post(`${s.url}/v1/chat/completions`, { model: 'qwen', messages: [{ role: 'user', content: 'x' }] });
    expect(res.json).toMatchObject({
      object: 'chat.completion',
      model: 'qwen',
      choices: [{ index: 0, message: { role: 'assistant', content: 'hello' }, finish_reason: 'stop' }],
      usage: { prompt_tokens: expect.any(Number), completion_tokens: 2, total_tokens: expect.any(Number) },
    });
  });

  it('sends OpenAI and vLLM error shapes', async () => {
    const s = await startScriptedOpenAiServer([
      { error: 'rate_limit', retryAfter: 1 },
      { error: 'context_length_exceeded', vllm: true },
    ]);
    servers.push(s);
    const limited = await post(`${s.url}/v1/chat/completions`, {});
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('1');
    expect(limited.json).toMatchObject({ error: { type: 'rate_limit_exceeded', code: 'rate_limit_exceeded' } });
    const vllm = await post(`${s.url}/v1/chat/completions`, {});
    expect(vllm.status).toBe(400);
    expect(vllm.json).toMatchObject({ object: 'error', code: 400, message: expect.stringContaining('maximum context length') });
  });
});
