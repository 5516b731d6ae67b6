import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  completeStructured,
  createLlmClient,
  extractCodeBlock,
  LlmOverloadedError,
  parseStructured,
  type LlmClient,
} from '../../src/llm/index.js';
import { silentLogger } from '../../src/log.js';
import { startScriptedAnthropicServer, type AnthropicResponse, type ScriptedServer } from '../helpers/anthropic-wire-server.js';

const Plan = z.object({ steps: z.array(z.string()).min(1), assertion: z.string() });

let server: ScriptedServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function setup(responses: AnthropicResponse[]): Promise<LlmClient> {
  server = await startScriptedAnthropicServer(responses);
  const client = await createLlmClient(
    { provider: 'anthropic', apiKey: 'k', baseURL: server.url, model: 'claude-sonnet-5-5', initialBackoffMs: 1, maxRetries: 1 },
    { log: silentLogger },
  );
  return client!;
}

const ask = { messages: [{ role: 'user' as const, content: 'Plan the reproduction as JSON.' }] };
const good = '{"steps": ["build model", "run"], "assertion": "loss is NaN"}';

describe('completeStructured over the Anthropic wire fake', () => {
  it('returns the validated value from a fenced answer in one call', async () => {
    const client = await setup([
      { text: `Here is the plan:\n\`\`\`json\n${good}\n\`\`\``, usage: { input_tokens: 100, output_tokens: 20 } },
    ]);
    const res = await completeStructured(client, ask, Plan);
    expect(res).toMatchObject({ ok: true, value: { steps: ['build model', 'run'], assertion: 'loss is NaN' }, calls: 1 });
    expect(res.usage).toEqual({ inputTokens: 100, outputTokens: 20, costUsd: (100 * 2 + 20 * 10) / 1e6 });
  });

  it('feeds a malformed answer back once, with the validation error, and accepts the fix', async () => {
    const client = await setup([
      { text: '{"steps": [], "assertion": 3}', usage: { input_tokens: 50, output_tokens: 10 } },
      { text: good, usage: { input_tokens: 80, output_tokens: 15 } },
    ]);
    const res = await completeStructured(client, ask, Plan);
    expect(res.ok).toBe(true);
    expect(res.calls).toBe(2);
    expect(res.usage.inputTokens).toBe(130);
    expect(res.usage.outputTokens).toBe(25);
    const second = server!.requests[1]!.body as { messages: { role: string; content: string }[] };
    expect(second.messages).toHaveLength(3);
    expect(second.messages[1]).toEqual({ role: 'assistant', content: '{"steps": [], "assertion": 3}' });
    expect(second.messages[2]!.role).toBe('user');
    expect(second.messages[2]!.content).toContain('does not match the expected shape');
    expect(second.messages[2]!.content).toContain('assertion');
  });

  it('returns a typed failure (never throws) after the second malformed answer', async () => {
    const client = await setup(['I cannot do that.', '```json\n{"steps": ["a"]\n```']);
    const res = await completeStructured(client, ask, Plan);
    expect(res.ok).toBe(false);
    if (res.ok) return;
    expect(res.calls).toBe(2);
    expect(res.error).toMatch(/does not parse|does not match/);
    expect(res.text).toContain('"steps"');
    expect(res.usage.outputTokens).toBeGreaterThan(0);
    expect(server!.remaining()).toBe(0);
  });

  it('treats an empty answer as malformed and shows a placeholder turn, since empty turns are rejected', async () => {
    const client = await setup(['', '']);
    const res = await completeStructured(client, ask, Plan);
    expect(res).toMatchObject({ ok: false, calls: 2 });
    const second = server!.requests[1]!.body as { messages: { role: string; content: string }[] };
    expect(second.messages[1]!.content).toBe('(empty answer)');
    expect(second.messages[2]!.content).toContain('empty');
  });

  it('uses a caller-supplied feedback message (e.g. a rendered prompts/format-error.md)', async () => {
    const client = await setup(['nope', good]);
    const res = await completeStructured(client, ask, Plan, { feedback: (e) => `FIX: ${e}` });
    expect(res.ok).toBe(true);
    const second = server!.requests[1]!.body as { messages: { content: string }[] };
    expect(second.messages[2]!.content).toMatch(/^FIX: /);
  });

  it('tells the model when its answer was cut at the token limit', async () => {
    const client = await setup([{ text: '{"steps": ["a", "b', stopReason: 'max_tokens' }, good]);
    await completeStructured(client, ask, Plan);
    const second = server!.requests[1]!.body as { messages: { content: string }[] };
    expect(second.messages[2]!.content).toContain('cut off at the token limit');
  });

  it('lets transport errors through as typed errors (they are not malformed answers)', async () => {
    const client = await setup([{ error: 'overloaded_error' }, { error: 'overloaded_error' }]);
    await expect(completeStructured(client, ask, Plan)).rejects.toBeInstanceOf(LlmOverloadedError);
  });
});

describe('parseStructured and extractCodeBlock (pure)', () => {
  it.each([
    ['bare JSON', good],
    ['JSON in prose', `Sure! ${good} Hope that helps.`],
    ['an untagged fence', `\`\`\`\n${good}\n\`\`\``],
    ['a json fence after a python fence', `\`\`\`python\nprint(1)\n\`\`\`\n\`\`\`json\n${good}\n\`\`\``],
  ])('finds the JSON in %s', (_label, text) => {
    expect(parseStructured(text, Plan)).toEqual({ ok: true, value: { steps: ['build model', 'run'], assertion: 'loss is NaN' } });
  });

  it('says what is wrong', () => {
    expect(parseStructured('no json here', Plan)).toEqual({ ok: false, error: expect.stringContaining('No JSON found') });
    expect(parseStructured('{"steps": ["a"], "assertion": 1}', Plan)).toEqual({ ok: false, error: expect.stringContaining('assertion') });
  });

  it('picks the longest python block, accepts py/python3 tags and an unclosed last block', () => {
    const text =
      'Install:\n```bash\npip install torch\n```\n```python\nimport torch\n```\nFull script:\n```py\nimport torch\nx = torch.ones(2)\nprint(x)\n```';
    expect(extractCodeBlock(text, 'python')).toBe('import torch\nx = torch.ones(2)\nprint(x)');
    expect(extractCodeBlock('```python3\nprint(1)\n', 'python')).toBe('print(1)\n');
    expect(extractCodeBlock('text only', 'python')).toBeNull();
    expect(extractCodeBlock('```\nprint(2)\n```', 'python')).toBe('print(2)');
    expect(extractCodeBlock('```bash\nls\n```', 'python')).toBeNull();
  });

  it('keeps nested backticks of a longer fence inside the block', () => {
    const text = '````python\ns = """\n```\n"""\n````';
    expect(extractCodeBlock(text, 'python')).toBe('s = """\n```\n"""');
  });
});
