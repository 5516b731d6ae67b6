import { z } from 'zod';
import type { Logger } from '../log.js';
import { LlmBadResponseError, LlmConnectionError, LlmSettingsError, errorFromStatus, shouldRetryHeader } from './errors.js';
import { createModelFetch } from './http.js';
import { callWithRetries, retryAfterFromHeaders } from './retry.js';
import { DEFAULT_MODELS, type LlmSettings } from './settings.js';
import type { LlmClient, LlmRequest, LlmResponse } from './types.js';
import { priceUsage } from './usage.js';

/**
 * OpenAI-compatible chat completions over plain fetch: vLLM, Ollama, llama.cpp's server, LM Studio
 * (the paper ran Qwen2.5-Coder-7B-Instruct this way). No `openai` package: it needs Node 22, and the
 * wire format we need is one POST.
 */

/** The part of a chat completion we use. vLLM, Ollama and llama.cpp differ in the extras, so those are dropped. */
const ChatCompletion = z.object({
  model: z.string().optional(),
  choices: z
    .array(
      z.object({
        message: z.object({ content: z.string().nullable().optional() }),
        finish_reason: z.string().nullable().optional(),
      }),
    )
    .min(1),
  usage: z
    .object({ prompt_tokens: z.number().int().min(0), completion_tokens: z.number().int().min(0) })
    .nullable()
    .optional(),
});

/** `{error:{message,type,code}}` (OpenAI, llama.cpp) or vLLM's flat `{object:'error', message, type, code}`. */
const ErrorBody = z.union([
  z.object({ error: z.object({ message: z.string().optional(), type: z.string().nullable().optional(), code: z.unknown().optional() }) }),
  z.object({ message: z.string(), type: z.string().nullable().optional(), code: z.unknown().optional() }),
  z.object({ error: z.string() }),
]);

export interface OpenAiCompatibleDeps {
  log: Logger;
  random?: () => number;
  /** @defaultValue undici's fetch with every limit set from `settings.timeoutMs` (src/llm/http.ts) */
  fetch?: typeof fetch;
}

export function createOpenAiCompatibleClient(settings: LlmSettings, deps: OpenAiCompatibleDeps): LlmClient {
  if (!settings.baseURL) {
    throw new LlmSettingsError(
      'the openai provider needs a server: set OPENAI_BASE_URL (e.g. http://localhost:8000/v1 for vLLM, http://localhost:11434/v1 for Ollama)',
    );
  }
  const model = settings.model ?? DEFAULT_MODELS.openai;
  const endpoint = `${settings.baseURL.replace(/\/+$/, '')}/chat/completions`;
  const doFetch = deps.fetch ?? createModelFetch(settings.timeoutMs);
  const warned = new Set<string>();
  const policy = { ...settings, provider: 'openai' as const };

  async function callOnce(request: LlmRequest, signal: AbortSignal): Promise<LlmResponse> {
    const messages = [...(request.system ? [{ role: 'system', content: request.system }] : []), ...request.messages];
    const body = {
      model,
      messages,
      temperature: request.temperature ?? settings.temperature,
      max_tokens: request.maxTokens ?? settings.maxTokens,
      ...(request.stop?.length ? { stop: request.stop } : {}),
      stream: false,
    };
    let response: Response;
    try {
      response = await doFetch(endpoint, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json',
          ...(settings.apiKey ? { authorization: `Bearer ${settings.apiKey}` } : {}),
        },
        body: JSON.stringify(body),
        signal,
      });
    } catch (err) {
      const cause = err instanceof Error && err.cause instanceof Error ? ` (${err.cause.message})` : '';
      throw new LlmConnectionError(`openai: cannot reach ${endpoint}: ${err instanceof Error ? err.message : String(err)}${cause}`, {
        provider: 'openai',
        cause: err,
      });
    }
    // Reading the body can also be cut by the signal; the retry layer sorts out which one fired.
    const text = await response.text();
    const retryAfterMs = retryAfterFromHeaders((n) => response.headers.get(n));
    if (!response.ok) {
      const info = errorInfo(text);
      throw errorFromStatus(response.status, info, {
        provider: 'openai',
        retryAfterMs,
        serverSaysRetry: shouldRetryHeader(response.headers.get('x-should-retry')),
        requestId: response.headers.get('x-request-id') ?? undefined,
      });
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw new LlmBadResponseError(`openai: the response is not JSON (${text.length === 0 ? 'empty body' : `got ${snippet(text)}`})`, {
        provider: 'openai',
        status: response.status,
      });
    }
    const parsed = ChatCompletion.safeParse(json);
    if (!parsed.success) {
      throw new LlmBadResponseError(`openai: the response is not a chat completion (got ${snippet(text)})`, {
        provider: 'openai',
        status: response.status,
      });
    }
    const completion = parsed.data;
    const choice = completion.choices[0];
    const answer = choice?.message.content ?? '';
    // Some servers leave `usage` out; ~4 characters a token keeps token budgets working (cost is 0 for
    // self-hosted models anyway).
    const inputTokens = completion.usage?.prompt_tokens ?? estimateTokens(JSON.stringify(messages));
    const outputTokens = completion.usage?.completion_tokens ?? estimateTokens(answer);
    const usedModel = completion.model ?? model;
    return {
      text: answer,
      model: usedModel,
      stopReason: choice?.finish_reason ?? null,
      usage: priceUsage(usedModel, inputTokens, outputTokens, settings.prices, deps.log, warned),
    };
  }

  return {
    provider: 'openai',
    model,
    async complete(request: LlmRequest, signal?: AbortSignal): Promise<LlmResponse> {
      const started = Date.now();
      const { value, attempts } = await callWithRetries((s) => callOnce(request, s), policy, deps, signal);
      return { ...value, attempts, durationMs: Date.now() - started };
    },
  };
}

function errorInfo(text: string): { type?: string | null; code?: string | null; message?: string | null } {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { message: text ? snippet(text) : null };
  }
  const parsed = ErrorBody.safeParse(json);
  if (!parsed.success) return { message: snippet(text) };
  const e = parsed.data;
  if ('error' in e && typeof e.error === 'string') return { message: e.error };
  const inner = 'error' in e && typeof e.error === 'object' ? e.error : (e as { message?: string; type?: string | null; code?: unknown });
  return { message: inner.message ?? null, type: inner.type ?? null, code: typeof inner.code === 'string' ? inner.code : null };
}

function estimateTokens(text: string): number {
  return text.length === 0 ? 0 : Math.ceil(text.length / 4);
}

function snippet(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > 120 ? `${flat.slice(0, 120)}…` : flat;
}
