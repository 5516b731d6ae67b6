import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { completeStructured, createLlmClient, llmSettingsFromEnv } from '../../src/llm/index.js';

/**
 * Opt-in live check against a real model: `E2E=1 E2E_LLM=1 npx vitest run test/llm/live.e2e.test.ts`
 * with ANTHROPIC_API_KEY (or OPENAI_BASE_URL for a local vLLM/Ollama) set. Costs a few hundred tokens.
 */
describe.runIf(process.env.E2E_LLM === '1')('live LLM', () => {
  it('completes and answers structured output through the configured provider', async () => {
    const settings = llmSettingsFromEnv(process.env);
    if (settings.provider === 'none') throw new Error(`E2E_LLM=1 but ${settings.reason}`);
    const client = await createLlmClient({ ...settings, maxTokens: 256 });
    const res = await client!.complete({ messages: [{ role: 'user', content: 'Reply with the single word: pong' }] });
    expect(res.text.toLowerCase()).toContain('pong');
    expect(res.usage.inputTokens).toBeGreaterThan(0);
    expect(res.usage.outputTokens).toBeGreaterThan(0);

    const structured = await completeStructured(
      client!,
      { messages: [{ role: 'user', content: 'Return JSON {"framework": string, "major": number} for PyTorch 2.3, in a ```json block.' }] },
      z.object({ framework: z.string(), major: z.number() }),
    );
    expect(structured.ok).toBe(true);
  });
});
