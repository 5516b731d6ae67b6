import Anthropic, { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from '@anthropic-ai/sdk';
import { z } from 'zod';
import type { Logger } from '../log.js';
import { LlmBadResponseError, LlmConnectionError, LlmError, LlmTimeoutError, errorFromStatus, shouldRetryHeader } from './errors.js';
import { createModelFetch } from './http.js';
import { callWithRetries, retryAfterFromHeaders } from './retry.js';
import { DEFAULT_MODELS, type LlmSettings } from './settings.js';
import type { LlmClient, LlmRequest, LlmResponse } from './types.js';
import { priceUsage } from './usage.js';

/**
 * The Anthropic Messages API adapter, on the official SDK. The SDK's own retries are off
 * (`maxRetries: 0`): src/llm/retry.ts retries for both providers (see there for why).
 */

/** The part of a Messages API response we use; outside data, so unknown fields are dropped, not rejected. */
const AnthropicMessage = z.object({
  model: z.string(),
  content: z.array(z.object({ type: z.string(), text: z.string().optional() })),
  stop_reason: z.string().nullable().optional(),
  usage: z.object({
    input_tokens: z.number().int().min(0),
    output_tokens: z.number().int().min(0),
    cache_creation_input_tokens: z.number().int().min(0).nullable().optional(),
    cache_read_input_tokens: z.number().int().min(0).nullable().optional(),
  }),
});
type AnthropicMessage = z.infer<typeof AnthropicMessage>;

export interface AnthropicDeps {
  log: Logger;
  random?: () => number;
  /** @defaultValue undici's fetch with every limit set from `settings.timeoutMs` (src/llm/http.ts) */
  fetch?: typeof fetch;
}

export function createAnthropicClient(settings: LlmSettings, deps: AnthropicDeps): LlmClient {
  const model = settings.model ?? DEFAULT_MODELS.anthropic;
  const sdk = new Anthropic({
    apiKey: settings.apiKey ?? null,
    // null, not undefined: undefined would make the SDK read ANTHROPIC_BASE_URL behind our settings' back.
    baseURL: settings.baseURL ?? null,
    maxRetries: 0,
    timeout: settings.timeoutMs,
    // The SDK's default fetch is Node's, whose 300 s header timeout would cut a slow model under ours.
    fetch: deps.fetch ?? createModelFetch(settings.timeoutMs),
  });
  const warned = new Set<string>();
  const policy = { ...settings, provider: 'anthropic' as const };

  async function callOnce(request: LlmRequest, signal: AbortSignal): Promise<AnthropicMessage> {
    let raw: unknown;
    try {
      raw = await sdk.messages.create(
        {
          model,
          max_tokens: request.maxTokens ?? settings.maxTokens,
          // No temperature: API version 2026-10-21 dropped it and current models answer 400 to
          // non-default sampling, so `temperature` only applies to the OpenAI-compatible adapter.
          ...(request.system ? { system: request.system } : {}),
          ...(request.stop?.length ? { stop_sequences: request.stop } : {}),
          messages: request.messages.map((m) => ({ role: m.role, content: m.content })),
        },
        { signal },
      );
    } catch (err) {
      throw toLlmError(err);
    }
    const parsed = AnthropicMessage.safeParse(raw);
    if (!parsed.success) {
      throw new LlmBadResponseError(`anthropic: the response is not a message (${describeBody(raw)})`, { provider: 'anthropic' });
    }
    return parsed.data;
  }

  return {
    provider: 'anthropic',
    model,
    async complete(request: LlmRequest, signal?: AbortSignal): Promise<LlmResponse> {
      const started = Date.now();
      const { value: message, attempts } = await callWithRetries((s) => callOnce(request, s), policy, deps, signal);
      const u = message.usage;
      // Cache reads and writes are billed as input at other rates; we do not use prompt caching, so
      // counting them as plain input keeps the total right to within those rate differences.
      const inputTokens = u.input_tokens + (u.cache_creation_input_tokens ?? 0) + (u.cache_read_input_tokens ?? 0);
      return {
        text: message.content.map((block) => (block.type === 'text' ? (block.text ?? '') : '')).join(''),
        model: message.model,
        stopReason: message.stop_reason ?? null,
        usage: priceUsage(message.model || model, inputTokens, u.output_tokens, settings.prices, deps.log, warned),
        attempts,
        durationMs: Date.now() - started,
      };
    },
  };
}

function toLlmError(err: unknown): unknown {
  // Abort: rethrown as is; the retry layer knows which signal fired (caller or timeout).
  if (err instanceof APIUserAbortError) return err;
  if (err instanceof APIConnectionTimeoutError)
    return new LlmTimeoutError(`anthropic: ${err.message}`, { provider: 'anthropic', cause: err });
  if (err instanceof APIConnectionError)
    return new LlmConnectionError(`anthropic: ${err.message}${causeText(err)}`, { provider: 'anthropic', cause: err });
  if (err instanceof APIError && typeof err.status === 'number') {
    const headers = err.headers;
    const body = err.error as { error?: { type?: string; message?: string } } | undefined;
    return errorFromStatus(
      err.status,
      { type: err.type ?? body?.error?.type ?? null, message: err.apiMessage ?? body?.error?.message ?? err.message },
      {
        provider: 'anthropic',
        requestId: err.requestID ?? undefined,
        retryAfterMs: headers ? retryAfterFromHeaders((n) => headers.get(n)) : undefined,
        serverSaysRetry: shouldRetryHeader(headers?.get('x-should-retry')),
        cause: err,
      },
    );
  }
  if (err instanceof LlmError) return err;
  // A 2xx whose body does not parse (the SDK throws SyntaxError from response.json()).
  return new LlmBadResponseError(`anthropic: unreadable response: ${err instanceof Error ? err.message : String(err)}`, {
    provider: 'anthropic',
    cause: err,
  });
}

function causeText(err: Error): string {
  return err.cause instanceof Error ? ` (${err.cause.message})` : '';
}

function describeBody(raw: unknown): string {
  if (raw === undefined || raw === null || raw === '') return 'empty body';
  const text = typeof raw === 'string' ? raw : JSON.stringify(raw);
  return `got ${text.length > 120 ? `${text.slice(0, 120)}…` : text}`;
}
