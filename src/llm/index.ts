import { silentLogger, type Logger } from '../log.js';
import { LlmSettingsError } from './errors.js';
import { LlmSettings, type LlmSettingsInput } from './settings.js';
import type { LlmClient } from './types.js';

export * from './types.js';
export * from './errors.js';
export * from './settings.js';
export * from './usage.js';
export * from './structured.js';

export interface LlmDeps {
  /** @defaultValue silentLogger */
  log?: Logger;
  /** Jitter source in [0, 1). @defaultValue Math.random */
  random?: () => number;
  /** The HTTP client of either adapter. @defaultValue undici's fetch with every limit set from the configured timeout */
  fetch?: typeof fetch;
}

/**
 * Builds the client for `settings.provider`, importing only that adapter (the Anthropic SDK is not
 * loaded for an Ollama run). Resolves to `null` for provider `none` — `settings.reason` says why —
 * so callers write `const llm = await createLlmClient(s); if (!llm) …tier 0 only…`.
 * Throws {@link LlmSettingsError} when the provider lacks what it needs (API key, server URL).
 */
export async function createLlmClient(settings: LlmSettingsInput, deps: LlmDeps = {}): Promise<LlmClient | null> {
  const parsed = LlmSettings.safeParse(settings);
  if (!parsed.success)
    throw new LlmSettingsError(`invalid LLM settings: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
  const s = parsed.data;
  const log = deps.log ?? silentLogger;
  switch (s.provider) {
    case 'none':
      return null;
    case 'anthropic': {
      if (!s.apiKey) throw new LlmSettingsError('the anthropic provider needs an API key: set ANTHROPIC_API_KEY');
      const { createAnthropicClient } = await import('./anthropic.js');
      return createAnthropicClient(s, { log, random: deps.random, fetch: deps.fetch });
    }
    case 'openai': {
      const { createOpenAiCompatibleClient } = await import('./openai-compatible.js');
      return createOpenAiCompatibleClient(s, { log, random: deps.random, fetch: deps.fetch });
    }
  }
}
