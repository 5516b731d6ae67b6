import { randomBytes } from 'node:crypto';
import { approxTokens, startScriptedServer, type RecordedRequest, type ScriptedServer, type WireReply } from './scripted-wire-server.js';

export type { RecordedRequest, ScriptedServer } from './scripted-wire-server.js';

/**
 * A local HTTP server that speaks OpenAI chat completions (`POST /v1/chat/completions`) the way
 * vLLM, Ollama and llama.cpp's server do, driven by a script. Point the OpenAI-compatible adapter
 * at `${server.url}/v1` (that is what OPENAI_BASE_URL looks like for those servers).
 *
 * @example
 * const server = await startScriptedOpenAiServer([{ error: 'rate_limit', retryAfter: 0 }, '{"ok": true}']);
 */

/** A successful completion. */
export interface OpenAiText {
  text: string | null;
  /** @defaultValue 'stop' */
  finishReason?: 'stop' | 'length' | 'content_filter' | 'tool_calls' | null;
  /** `null` leaves `usage` out, as some servers do. @defaultValue ~chars/4 of prompt and answer */
  usage?: { prompt_tokens: number; completion_tokens: number } | null;
  /** @defaultValue the model named in the request */
  model?: string;
  delayMs?: number;
}

/** An error in OpenAI's shape `{error:{message,type,param,code}}`, or vLLM's flat shape with `vllm: true`. */
export interface OpenAiErrorStep {
  error: OpenAiErrorKind;
  /** @defaultValue the status OpenAI-compatible servers use for `error` */
  status?: number;
  message?: string;
  /** `retry-after` header, seconds or an HTTP date. */
  retryAfter?: number | string;
  headers?: Record<string, string>;
  /** Use vLLM's flat error body `{object:'error', message, type, param, code}`. @defaultValue false */
  vllm?: boolean;
  delayMs?: number;
}

export type OpenAiErrorKind = 'rate_limit' | 'server_error' | 'overloaded' | 'auth' | 'context_length_exceeded' | 'bad_request';

export interface OpenAiRawStep {
  raw: string;
  /** @defaultValue 200 */
  status?: number;
  headers?: Record<string, string>;
  delayMs?: number;
}

export interface OpenAiHangStep {
  hang: true;
}

export type OpenAiStep = string | OpenAiText | OpenAiErrorStep | OpenAiRawStep | OpenAiHangStep;
export type OpenAiResponse = OpenAiStep | ((request: RecordedRequest) => OpenAiStep | Promise<OpenAiStep>);

const ERRORS: Record<OpenAiErrorKind, { status: number; type: string; code: string | null; message: string }> = {
  rate_limit: { status: 429, type: 'rate_limit_exceeded', code: 'rate_limit_exceeded', message: 'Rate limit reached for requests' },
  server_error: { status: 500, type: 'server_error', code: null, message: 'The server had an error while processing your request.' },
  overloaded: { status: 503, type: 'server_error', code: null, message: 'The engine is currently overloaded, please try again later' },
  auth: { status: 401, type: 'invalid_request_error', code: 'invalid_api_key', message: 'Incorrect API key provided.' },
  context_length_exceeded: {
    status: 400,
    type: 'invalid_request_error',
    code: 'context_length_exceeded',
    message:
      "This model's maximum context length is 32768 tokens. However, you requested 40961 tokens (36865 in the messages, 4096 in the completion). Please reduce the length of the messages or completion.",
  },
  bad_request: { status: 400, type: 'invalid_request_error', code: null, message: 'Invalid request' },
};

/** Starts the fake on a free port of 127.0.0.1. */
export async function startScriptedOpenAiServer(responses: OpenAiResponse[]): Promise<ScriptedServer> {
  return startScriptedServer<OpenAiResponse>({
    name: 'openai',
    route: { method: 'POST', path: '/v1/chat/completions' },
    steps: responses,
    toReply: async (response, request) => toReply(typeof response === 'function' ? await response(request) : response, request),
    errorReply: (status, message) => ({
      status,
      body: JSON.stringify({ error: { message, type: status === 404 ? 'not_found_error' : 'server_error', param: null, code: null } }),
    }),
  });
}

function toReply(step: OpenAiStep, request: RecordedRequest): WireReply {
  if (typeof step === 'string') return textReply({ text: step }, request);
  if ('hang' in step) return { status: 200, body: '', hang: true };
  if ('raw' in step) return { status: step.status ?? 200, headers: step.headers, body: step.raw, delayMs: step.delayMs };
  if ('error' in step) {
    const known = ERRORS[step.error];
    const status = step.status ?? known.status;
    const message = step.message ?? known.message;
    const body = step.vllm
      ? { object: 'error', message, type: step.error === 'rate_limit' ? 'RateLimitError' : 'BadRequestError', param: null, code: status }
      : { error: { message, type: known.type, param: null, code: known.code } };
    const headers: Record<string, string> = { ...step.headers };
    if (step.retryAfter !== undefined) headers['retry-after'] = String(step.retryAfter);
    return { status, headers, body: JSON.stringify(body), delayMs: step.delayMs };
  }
  return textReply(step, request);
}

function textReply(step: OpenAiText, request: RecordedRequest): WireReply {
  const body = (request.body ?? {}) as { model?: string; messages?: unknown };
  const promptTokens = approxTokens(JSON.stringify(body.messages ?? []));
  const completionTokens = step.text ? approxTokens(step.text) : 0;
  const usage =
    step.usage === null
      ? undefined
      : {
          prompt_tokens: step.usage?.prompt_tokens ?? promptTokens,
          completion_tokens: step.usage?.completion_tokens ?? completionTokens,
          total_tokens: (step.usage?.prompt_tokens ?? promptTokens) + (step.usage?.completion_tokens ?? completionTokens),
        };
  const completion = {
    id: `chatcmpl-${randomBytes(12).toString('hex')}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: step.model ?? body.model ?? 'unknown-model',
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: step.text },
        logprobs: null,
        finish_reason: step.finishReason === undefined ? 'stop' : step.finishReason,
      },
    ],
    ...(usage ? { usage } : {}),
  };
  return { status: 200, body: JSON.stringify(completion), delayMs: step.delayMs };
}
