import { z } from 'zod';
import { doc, intRange, posInt, intMin } from './define.js';

/** The model providers; `none` runs tier 0 only. The one list (the CLI's `--llm` and `/repgen --llm` check it). */
export const LLM_PROVIDERS = ['none', 'anthropic', 'openai'] as const;
export const LlmProviderName = z.enum(LLM_PROVIDERS);

/** What a run without a model says, wherever it is said. */
export const NO_LLM_REASON =
  'no LLM configured (set ANTHROPIC_API_KEY, or OPENAI_BASE_URL for a vLLM/Ollama server): running without a model';

export const LLM_DEFAULTS = {
  temperature: 0.2,
  maxTokens: 4096,
  timeoutMs: 120_000,
  maxRetries: 4,
  initialBackoffMs: 1000,
  maxBackoffMs: 60_000,
} as const;

/** Provider settings. No defaults applied here: "unset" chooses the provider (see llmSettingsFromEnv). */
export const LlmEnv = z.object({
  REPGEN_LLM_PROVIDER: doc(LlmProviderName.optional(), {
    description: '`none`, `anthropic` or `openai` (`--llm`)',
    shown: 'anthropic if ANTHROPIC_API_KEY, openai if OPENAI_BASE_URL, else none',
  }),
  REPGEN_LLM_MODEL: doc(z.string().min(1).optional(), {
    description: 'model id (`--model`; Ollama: `qwen2.5-coder:7b-instruct`)',
    shown: '`claude-sonnet-5-5` / `Qwen/Qwen2.5-Coder-7B-Instruct`',
  }),
  ANTHROPIC_API_KEY: doc(z.string().optional(), { description: 'required for anthropic; never logged', shown: '—' }),
  ANTHROPIC_BASE_URL: doc(z.url().optional(), { description: 'Anthropic API root (no `/v1`)', shown: '`https://api.anthropic.com`' }),
  OPENAI_BASE_URL: doc(z.url().optional(), {
    description: 'OpenAI-compatible server, with `/v1`: `http://localhost:8000/v1` (vLLM), `http://localhost:11434/v1` (Ollama)',
    shown: '—',
  }),
  OPENAI_API_KEY: doc(z.string().optional(), { description: 'sent as a bearer token when set', shown: '—' }),
  REPGEN_LLM_TEMPERATURE: doc(z.coerce.number().min(0).max(2).optional(), {
    description: 'OpenAI-compatible only (the Anthropic API version spoken takes none)',
    shown: `\`${LLM_DEFAULTS.temperature}\``,
  }),
  REPGEN_LLM_MAX_TOKENS: doc(posInt().optional(), { description: 'output tokens per call', shown: `\`${LLM_DEFAULTS.maxTokens}\`` }),
  REPGEN_LLM_TIMEOUT_MS: doc(posInt().optional(), {
    description: 'limit of one HTTP call (each retry gets its own)',
    shown: `\`${LLM_DEFAULTS.timeoutMs}\``,
  }),
  REPGEN_LLM_MAX_RETRIES: doc(intRange(0, 20).optional(), {
    description: 'retries on 429, 5xx, overloaded, timeouts and connection errors',
    shown: `\`${LLM_DEFAULTS.maxRetries}\``,
  }),
  REPGEN_LLM_BACKOFF_MS: doc(intMin(0).optional(), {
    description: 'first backoff; doubles each retry, jitter 0.5–1×',
    shown: `\`${LLM_DEFAULTS.initialBackoffMs}\``,
  }),
  REPGEN_LLM_MAX_BACKOFF_MS: doc(intMin(0).optional(), {
    description: 'longest wait; a `retry-after` above it makes RepGen give up instead',
    shown: `\`${LLM_DEFAULTS.maxBackoffMs}\``,
  }),
  REPGEN_LLM_PRICES: doc(z.string().optional(), {
    description: 'JSON `{"model": {"input": $/Mtok, "output": $/Mtok}}` merged over the built-in table (longest prefix wins)',
    shown: 'built-in table',
  }),
});
export type LlmEnv = z.infer<typeof LlmEnv>;
