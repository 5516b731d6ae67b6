import { z } from 'zod';
import { LLM_DEFAULTS, LlmEnv, LlmProviderName, NO_LLM_REASON } from '../config/env/llm-env.js';
import { setVariables } from '../config/env/define.js';
import { LlmSettingsError } from './errors.js';

/** $ per million tokens, input and output. */
export const LlmPrice = z.object({ input: z.number().min(0), output: z.number().min(0) }).strict();
export type LlmPrice = z.infer<typeof LlmPrice>;

/** Model name (or a prefix of it, e.g. `claude-sonnet-4-5` for dated ids) → price. */
export const LlmPrices = z.record(z.string().min(1), LlmPrice);
export type LlmPrices = z.infer<typeof LlmPrices>;

/**
 * List prices in $ per million tokens, from Anthropic's model pages (Nov 2026); override or extend
 * with REPGEN_LLM_PRICES. Keys match by longest prefix, so keep them specific (a bare `claude-opus-4`
 * would price every later Opus 4.x). Self-hosted models (vLLM, Ollama) cost nothing per token here —
 * their cost is the GPU, which is not per call.
 */
export const DEFAULT_LLM_PRICES: LlmPrices = {
  'claude-fable-5-1': { input: 10, output: 50 },
  'claude-opus-5-5': { input: 4, output: 20 },
  'claude-opus-5': { input: 5, output: 25 },
  'claude-sonnet-5-5': { input: 2, output: 10 },
  'claude-sonnet-5': { input: 2, output: 10 },
  'claude-sonnet-4-6': { input: 3, output: 15 },
  'claude-opus-4-5': { input: 5, output: 25 },
  'claude-sonnet-4-5': { input: 3, output: 15 },
  'claude-haiku-4-5': { input: 1, output: 5 },
  'Qwen/Qwen2.5-Coder-7B-Instruct': { input: 0, output: 0 },
  'qwen2.5-coder': { input: 0, output: 0 },
};

export const DEFAULT_MODELS = {
  // The current Sonnet; claude-sonnet-4-5 reaches end of life on 2026-11-30.
  anthropic: 'claude-sonnet-5-5',
  // The model the paper ran, under vLLM's name; Ollama calls it `qwen2.5-coder:7b-instruct`.
  openai: 'Qwen/Qwen2.5-Coder-7B-Instruct',
} as const;

export const LlmProvider = LlmProviderName;
export type LlmProvider = z.infer<typeof LlmProvider>;

/** Everything an LLM client needs. Our own config, so strict. */
export const LlmSettings = z
  .object({
    /** Which adapter; `none` means no model (the agent runs tier 0 only). */
    provider: LlmProvider,
    /** Why the provider is what it is (always set for `none`, so the CLI can say why). */
    reason: z.string().optional(),
    /** @defaultValue {@link DEFAULT_MODELS}[provider] */
    model: z.string().min(1).optional(),
    /**
     * Sampling temperature for the OpenAI-compatible adapter. @defaultValue 0.2 — low: we want working
     * code, not variety; refinement supplies the variety. Not sent to Anthropic: the API version the
     * SDK speaks (2026-10-21) has no temperature, and current Claude models reject non-default sampling.
     */
    temperature: z.number().min(0).max(2).default(LLM_DEFAULTS.temperature),
    /** Output tokens per call. @defaultValue 4096 */
    maxTokens: z.int().positive().default(LLM_DEFAULTS.maxTokens),
    /** Wall-clock limit of one HTTP call (each retry gets its own). @defaultValue 120000 */
    timeoutMs: z.int().positive().default(LLM_DEFAULTS.timeoutMs),
    /** Retries after the first call, on 429/5xx/overloaded/timeouts/connection errors. @defaultValue 4 */
    maxRetries: z.int().min(0).max(20).default(LLM_DEFAULTS.maxRetries),
    /** First backoff; doubled on each retry, with jitter. @defaultValue 1000 */
    initialBackoffMs: z.int().min(0).default(LLM_DEFAULTS.initialBackoffMs),
    /** Longest wait between calls; a `retry-after` longer than this makes us give up instead. @defaultValue 60000 */
    maxBackoffMs: z.int().min(0).default(LLM_DEFAULTS.maxBackoffMs),
    /** API root: Anthropic's (no `/v1`) or the OpenAI-compatible server's (with `/v1`). @defaultValue the provider's */
    baseURL: z.url().optional(),
    /** Never logged. Required for anthropic; optional for openai-compatible servers. */
    apiKey: z.string().min(1).optional(),
    /** Price table, merged over {@link DEFAULT_LLM_PRICES}. @defaultValue DEFAULT_LLM_PRICES */
    prices: LlmPrices.default(DEFAULT_LLM_PRICES),
  })
  .strict();
export type LlmSettings = z.infer<typeof LlmSettings>;
export type LlmSettingsInput = z.input<typeof LlmSettings>;

/** Choices that beat the environment (the CLI's `--llm` and `--model`). */
export interface LlmOverrides {
  provider?: LlmProvider;
  model?: string;
}

/**
 * Reads LLM settings from the environment. Provider: `overrides.provider`, else REPGEN_LLM_PROVIDER,
 * else anthropic when ANTHROPIC_API_KEY is set, else openai when OPENAI_BASE_URL is set, else none
 * (with `reason` saying so). Throws {@link LlmSettingsError} naming the variable that is malformed.
 */
export function llmSettingsFromEnv(env: NodeJS.ProcessEnv = process.env, overrides: LlmOverrides = {}): LlmSettings {
  // Empty strings count as unset: `FOO= repgen …` is a common way to switch a variable off.
  const parsed = LlmEnv.safeParse(setVariables(env));
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new LlmSettingsError(`invalid ${String(issue?.path[0] ?? 'LLM setting')}: ${issue?.message ?? 'invalid value'}`);
  }
  return llmSettingsFrom(parsed.data, overrides);
}

/** LLM settings from the parsed operator environment (src/config/operator-env.ts); see {@link llmSettingsFromEnv}. */
export function llmSettingsFrom(e: LlmEnv, overrides: LlmOverrides = {}): LlmSettings {
  let provider: LlmProvider;
  let reason: string | undefined;
  if (overrides.provider) {
    provider = overrides.provider;
    if (provider === 'none') reason = 'no LLM: chosen with --llm none';
  } else if (e.REPGEN_LLM_PROVIDER) {
    provider = e.REPGEN_LLM_PROVIDER;
    if (provider === 'none') reason = 'no LLM: REPGEN_LLM_PROVIDER=none';
  } else if (e.ANTHROPIC_API_KEY) {
    provider = 'anthropic';
  } else if (e.OPENAI_BASE_URL) {
    provider = 'openai';
  } else {
    provider = 'none';
    reason = NO_LLM_REASON;
  }

  const settings = {
    provider,
    reason,
    model: overrides.model ?? e.REPGEN_LLM_MODEL,
    temperature: e.REPGEN_LLM_TEMPERATURE,
    maxTokens: e.REPGEN_LLM_MAX_TOKENS,
    timeoutMs: e.REPGEN_LLM_TIMEOUT_MS,
    maxRetries: e.REPGEN_LLM_MAX_RETRIES,
    initialBackoffMs: e.REPGEN_LLM_BACKOFF_MS,
    maxBackoffMs: e.REPGEN_LLM_MAX_BACKOFF_MS,
    baseURL: provider === 'anthropic' ? e.ANTHROPIC_BASE_URL : provider === 'openai' ? e.OPENAI_BASE_URL : undefined,
    apiKey: provider === 'anthropic' ? e.ANTHROPIC_API_KEY : provider === 'openai' ? e.OPENAI_API_KEY : undefined,
    prices: { ...DEFAULT_LLM_PRICES, ...parsePrices(e.REPGEN_LLM_PRICES) },
  };
  const result = LlmSettings.safeParse(settings);
  if (!result.success) throw new LlmSettingsError(`invalid LLM settings: ${z.prettifyError(result.error)}`);
  return result.data;
}

function parsePrices(json: string | undefined): LlmPrices {
  if (json === undefined) return {};
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    throw new LlmSettingsError('invalid REPGEN_LLM_PRICES: not JSON; expected {"model": {"input": $/Mtok, "output": $/Mtok}}');
  }
  const parsed = LlmPrices.safeParse(value);
  if (!parsed.success) {
    throw new LlmSettingsError(
      `invalid REPGEN_LLM_PRICES: ${z.prettifyError(parsed.error)}; expected {"model": {"input": $/Mtok, "output": $/Mtok}}`,
    );
  }
  return parsed.data;
}

/**
 * Price of `model`: an exact entry, else the longest key that prefixes it (dated ids such as
 * `claude-sonnet-4-5-20250929` use the `claude-sonnet-4-5` entry). `undefined` when unknown.
 */
export function priceFor(model: string, prices: LlmPrices): LlmPrice | undefined {
  const exact = prices[model];
  if (exact) return exact;
  let best: string | undefined;
  for (const key of Object.keys(prices)) {
    if (model.startsWith(key) && (best === undefined || key.length > best.length)) best = key;
  }
  return best === undefined ? undefined : prices[best];
}

/** $ for one call. */
export function costUsd(price: LlmPrice | undefined, inputTokens: number, outputTokens: number): number {
  if (!price) return 0;
  return (inputTokens * price.input + outputTokens * price.output) / 1_000_000;
}
