import { describe, expect, it } from 'vitest';
import { SetupError } from '../../src/errors.js';
import {
  costUsd,
  createLlmClient,
  DEFAULT_LLM_PRICES,
  LlmSettings,
  LlmSettingsError,
  llmSettingsFromEnv,
  priceFor,
} from '../../src/llm/index.js';

describe('llmSettingsFromEnv', () => {
  it('chooses anthropic when ANTHROPIC_API_KEY is set (even with OPENAI_BASE_URL)', () => {
    const s = llmSettingsFromEnv({ ANTHROPIC_API_KEY: 'sk-a', OPENAI_BASE_URL: 'http://localhost:8000/v1' });
    expect(s.provider).toBe('anthropic');
    expect(s.apiKey).toBe('sk-a');
    expect(s.baseURL).toBeUndefined();
  });

  it('chooses openai when only OPENAI_BASE_URL is set, with its key and URL', () => {
    const s = llmSettingsFromEnv({ OPENAI_BASE_URL: 'http://localhost:11434/v1', OPENAI_API_KEY: 'ollama' });
    expect(s).toMatchObject({ provider: 'openai', baseURL: 'http://localhost:11434/v1', apiKey: 'ollama' });
  });

  it('chooses none, with a reason, when nothing is configured (empty strings count as unset)', () => {
    const s = llmSettingsFromEnv({ ANTHROPIC_API_KEY: '', PATH: '/usr/bin' });
    expect(s.provider).toBe('none');
    expect(s.reason).toMatch(/no LLM configured.*ANTHROPIC_API_KEY.*OPENAI_BASE_URL/);
  });

  it('lets --llm/--model overrides beat REPGEN_LLM_PROVIDER, which beats detection', () => {
    const env = {
      ANTHROPIC_API_KEY: 'sk-a',
      OPENAI_BASE_URL: 'http://h:1/v1',
      REPGEN_LLM_PROVIDER: 'openai',
      REPGEN_LLM_MODEL: 'qwen2.5-coder:7b-instruct',
    };
    expect(llmSettingsFromEnv(env)).toMatchObject({ provider: 'openai', model: 'qwen2.5-coder:7b-instruct' });
    expect(llmSettingsFromEnv(env, { provider: 'none' })).toMatchObject({
      provider: 'none',
      reason: expect.stringContaining('--llm none'),
    });
    expect(llmSettingsFromEnv(env, { provider: 'anthropic', model: 'claude-opus-5-5' })).toMatchObject({
      provider: 'anthropic',
      model: 'claude-opus-5-5',
      apiKey: 'sk-a',
    });
  });

  it('has documented defaults', () => {
    const s = llmSettingsFromEnv({ ANTHROPIC_API_KEY: 'k' });
    expect(s).toMatchObject({
      temperature: 0.2,
      maxTokens: 4096,
      timeoutMs: 120_000,
      maxRetries: 4,
      initialBackoffMs: 1000,
      maxBackoffMs: 60_000,
    });
    expect(s.prices).toEqual(DEFAULT_LLM_PRICES);
  });

  it('reads numeric settings and merges REPGEN_LLM_PRICES over the defaults', () => {
    const s = llmSettingsFromEnv({
      ANTHROPIC_API_KEY: 'k',
      REPGEN_LLM_TEMPERATURE: '0',
      REPGEN_LLM_MAX_TOKENS: '2048',
      REPGEN_LLM_TIMEOUT_MS: '30000',
      REPGEN_LLM_MAX_RETRIES: '0',
      REPGEN_LLM_BACKOFF_MS: '250',
      REPGEN_LLM_MAX_BACKOFF_MS: '8000',
      REPGEN_LLM_PRICES: '{"claude-sonnet-5-5": {"input": 1, "output": 4}, "my-model": {"input": 0.1, "output": 0.2}}',
    });
    expect(s).toMatchObject({
      temperature: 0,
      maxTokens: 2048,
      timeoutMs: 30_000,
      maxRetries: 0,
      initialBackoffMs: 250,
      maxBackoffMs: 8000,
    });
    expect(s.prices['claude-sonnet-5-5']).toEqual({ input: 1, output: 4 });
    expect(s.prices['my-model']).toEqual({ input: 0.1, output: 0.2 });
    expect(s.prices['claude-haiku-4-5']).toEqual(DEFAULT_LLM_PRICES['claude-haiku-4-5']);
  });

  it.each([
    [{ REPGEN_LLM_PROVIDER: 'gpt' }, /REPGEN_LLM_PROVIDER/],
    [{ REPGEN_LLM_MAX_TOKENS: 'lots' }, /REPGEN_LLM_MAX_TOKENS/],
    [{ REPGEN_LLM_TEMPERATURE: '3' }, /REPGEN_LLM_TEMPERATURE/],
    [{ OPENAI_BASE_URL: 'not a url' }, /OPENAI_BASE_URL/],
    [{ REPGEN_LLM_PRICES: '{oops' }, /REPGEN_LLM_PRICES: not JSON/],
    [{ REPGEN_LLM_PRICES: '{"m": {"input": -1, "output": 2}}' }, /REPGEN_LLM_PRICES/],
  ])('rejects %j with a message naming the variable', (env, message) => {
    let err: unknown;
    try {
      llmSettingsFromEnv(env);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(LlmSettingsError);
    expect(err).toBeInstanceOf(SetupError);
    expect((err as Error).message).toMatch(message);
  });
});

describe('createLlmClient', () => {
  it('gives null for provider none', async () => {
    expect(await createLlmClient({ provider: 'none', reason: 'off' })).toBeNull();
  });

  it('refuses anthropic without a key, and openai without a server, as setup errors', async () => {
    await expect(createLlmClient({ provider: 'anthropic' })).rejects.toThrow(/ANTHROPIC_API_KEY/);
    await expect(createLlmClient({ provider: 'openai' })).rejects.toThrow(/OPENAI_BASE_URL/);
    await expect(createLlmClient({ provider: 'openai' })).rejects.toBeInstanceOf(SetupError);
  });

  it('uses the default model per provider', async () => {
    const anthropic = await createLlmClient({ provider: 'anthropic', apiKey: 'k' });
    expect(anthropic?.model).toBe('claude-sonnet-5-5');
    const openai = await createLlmClient({ provider: 'openai', baseURL: 'http://localhost:8000/v1' });
    expect(openai?.model).toBe('Qwen/Qwen2.5-Coder-7B-Instruct');
  });

  it('rejects settings with unknown keys (our own config is strict)', async () => {
    await expect(createLlmClient({ provider: 'none', colour: 'blue' } as never)).rejects.toBeInstanceOf(LlmSettingsError);
    expect(LlmSettings.safeParse({ provider: 'anthropic', maxRetries: -1 }).success).toBe(false);
  });
});

describe('prices', () => {
  it('matches exact names first, then the longest prefix', () => {
    expect(priceFor('claude-opus-5-5', DEFAULT_LLM_PRICES)).toEqual({ input: 4, output: 20 });
    expect(priceFor('claude-opus-5-20260601', DEFAULT_LLM_PRICES)).toEqual({ input: 5, output: 25 });
    expect(priceFor('claude-sonnet-5-5-20261001', DEFAULT_LLM_PRICES)).toEqual({ input: 2, output: 10 });
    expect(priceFor('gpt-unknown', DEFAULT_LLM_PRICES)).toBeUndefined();
  });

  it('computes $ per million tokens', () => {
    expect(costUsd({ input: 3, output: 15 }, 1_000_000, 200_000)).toBeCloseTo(6, 12);
    expect(costUsd(undefined, 1_000_000, 1_000_000)).toBe(0);
  });
});
