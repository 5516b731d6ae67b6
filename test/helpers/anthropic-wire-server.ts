import { randomBytes } from 'node:crypto';
import { approxTokens, startScriptedServer, type RecordedRequest, type ScriptedServer, type WireReply } from './scripted-wire-server.js';

export type { RecordedRequest, ScriptedServer } from './scripted-wire-server.js';

/**
 * A local HTTP server that speaks the Anthropic Messages API (`POST /v1/messages`), driven by a
 * script: each request gets the next scripted response. Tests point the real @anthropic-ai/sdk at
 * `server.url` (as `baseURL`), so the SDK's own request building, header handling and error classes
 * are exercised — only the network peer is fake.
 *
 * @example
 * const server = await startScriptedAnthropicServer([
 *   { error: 'overloaded_error', retryAfter: 0 },
 *   'print("hello")',
 * ]);
 */

/** A successful message. */
export interface AnthropicText {
  text: string;
  /** @defaultValue 'end_turn' */
  stopReason?: 'end_turn' | 'max_tokens' | 'stop_sequence' | 'tool_use' | 'refusal' | 'pause_turn' | null;
  /** @defaultValue input: ~chars/4 of the request's messages and system; output: ~chars/4 of `text` */
  usage?: { input_tokens: number; output_tokens: number };
  /** @defaultValue the model named in the request */
  model?: string;
  delayMs?: number;
}

/** An error response in the API's own shape: `{type:'error', error:{type, message}, request_id}`. */
export interface AnthropicErrorStep {
  error: AnthropicErrorType;
  /** @defaultValue the status the real API uses for `error` (429, 529, 500, 401, 400, …) */
  status?: number;
  /** @defaultValue a message like the real API's */
  message?: string;
  /** `retry-after` header value in seconds (a number) or as given (a string, e.g. an HTTP date). */
  retryAfter?: number | string;
  headers?: Record<string, string>;
  delayMs?: number;
}

/** Anything at all, e.g. garbage or an empty body with status 200. */
export interface AnthropicRawStep {
  raw: string;
  /** @defaultValue 200 */
  status?: number;
  headers?: Record<string, string>;
  delayMs?: number;
}

/** Never answer (for timeouts and aborts mid-request). */
export interface AnthropicHangStep {
  hang: true;
}

export type AnthropicErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'permission_error'
  | 'not_found_error'
  | 'request_too_large'
  | 'rate_limit_error'
  | 'api_error'
  | 'overloaded_error';

export type AnthropicStep = string | AnthropicText | AnthropicErrorStep | AnthropicRawStep | AnthropicHangStep;

/** A step, or a function of the request that returns one (to answer based on what was sent). */
export type AnthropicResponse = AnthropicStep | ((request: RecordedRequest) => AnthropicStep | Promise<AnthropicStep>);

const STATUS_OF: Record<AnthropicErrorType, number> = {
  invalid_request_error: 400,
  authentication_error: 401,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  overloaded_error: 529,
};

const MESSAGE_OF: Record<AnthropicErrorType, string> = {
  invalid_request_error: 'Invalid request',
  authentication_error: 'invalid x-api-key',
  permission_error: 'Your API key does not have permission to use the specified resource.',
  not_found_error: 'Not found',
  request_too_large: 'Request exceeds the maximum allowed number of bytes.',
  rate_limit_error: 'Number of request tokens has exceeded your per-minute rate limit',
  api_error: 'Internal server error',
  overloaded_error: 'Overloaded',
};

/** The real API's message for a prompt over the context window (what LlmContextTooLongError must recognise). */
export const PROMPT_TOO_LONG = 'prompt is too long: 215341 tokens > 200000 maximum';

/** Starts the fake on a free port of 127.0.0.1. */
export async function startScriptedAnthropicServer(responses: AnthropicResponse[]): Promise<ScriptedServer> {
  return startScriptedServer<AnthropicResponse>({
    name: 'anthropic',
    route: { method: 'POST', path: '/v1/messages' },
    steps: responses,
    toReply: async (response, request) => toReply(typeof response === 'function' ? await response(request) : response, request),
    errorReply: (status, message) => errorReply(status, status === 404 ? 'not_found_error' : 'api_error', message),
  });
}

function requestId(): string {
  return `req_${randomBytes(12).toString('hex')}`;
}

function toReply(step: AnthropicStep, request: RecordedRequest): WireReply {
  if (typeof step === 'string') return textReply({ text: step }, request);
  if ('hang' in step) return { status: 200, body: '', hang: true };
  if ('raw' in step) return { status: step.status ?? 200, headers: step.headers, body: step.raw, delayMs: step.delayMs };
  if ('error' in step) {
    const reply = errorReply(step.status ?? STATUS_OF[step.error], step.error, step.message ?? MESSAGE_OF[step.error]);
    const headers = { ...reply.headers, ...step.headers };
    if (step.retryAfter !== undefined) headers['retry-after'] = String(step.retryAfter);
    return { ...reply, headers, delayMs: step.delayMs };
  }
  return textReply(step, request);
}

function textReply(step: AnthropicText, request: RecordedRequest): WireReply {
  const body = (request.body ?? {}) as { model?: string; system?: unknown; messages?: unknown };
  const prompt = JSON.stringify(body.system ?? '') + JSON.stringify(body.messages ?? []);
  const message = {
    id: `msg_${randomBytes(12).toString('hex')}`,
    type: 'message',
    role: 'assistant',
    model: step.model ?? body.model ?? 'claude-unknown',
    content: step.text === '' ? [] : [{ type: 'text', text: step.text }],
    stop_reason: step.stopReason === undefined ? 'end_turn' : step.stopReason,
    stop_sequence: null,
    usage: {
      input_tokens: step.usage?.input_tokens ?? approxTokens(prompt),
      output_tokens: step.usage?.output_tokens ?? (step.text === '' ? 0 : approxTokens(step.text)),
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
      service_tier: 'standard',
    },
  };
  return { status: 200, headers: { 'request-id': requestId() }, body: JSON.stringify(message), delayMs: step.delayMs };
}

function errorReply(status: number, type: string, message: string): WireReply {
  const id = requestId();
  return {
    status,
    headers: { 'request-id': id },
    body: JSON.stringify({ type: 'error', error: { type, message }, request_id: id }),
  };
}
