import { CancelledError, RepgenError, SetupError } from '../errors.js';

/**
 * Typed errors of the LLM layer. Adapters translate every provider failure into one of these, so
 * the agent decides by class (via {@link classifyLlmError}), never by parsing provider messages.
 * Cancellation is the shared {@link CancelledError}, so the pipeline handles it like any other abort.
 */

export interface LlmErrorDetails {
  provider: 'anthropic' | 'openai';
  /** HTTP status, when there was a response. */
  status?: number;
  /** The provider's request id, for support tickets. */
  requestId?: string;
  /** How long the server asked us to wait (from `retry-after` / `retry-after-ms`). */
  retryAfterMs?: number;
  /** The server's own verdict from `x-should-retry` (true/false); it overrides the class default. */
  serverSaysRetry?: boolean;
  /** Calls made before giving up, set once retries are over. */
  attempts?: number;
  cause?: unknown;
}

/** Base class: every LLM failure other than cancellation. */
export class LlmError extends RepgenError {
  override name = 'LlmError';
  /** Whether trying the same request again later can succeed. */
  readonly retryable: boolean = false;
  readonly provider: 'anthropic' | 'openai';
  readonly status?: number;
  readonly requestId?: string;
  readonly retryAfterMs?: number;
  readonly serverSaysRetry?: boolean;
  attempts: number;

  constructor(message: string, details: LlmErrorDetails) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.provider = details.provider;
    this.status = details.status;
    this.requestId = details.requestId;
    this.retryAfterMs = details.retryAfterMs;
    this.serverSaysRetry = details.serverSaysRetry;
    this.attempts = details.attempts ?? 1;
  }
}

/** 429: too many requests or tokens per minute. */
export class LlmRateLimitError extends LlmError {
  override name = 'LlmRateLimitError';
  override readonly retryable = true;
}

/** 529 / 503 / `overloaded_error`: the provider is at capacity. */
export class LlmOverloadedError extends LlmError {
  override name = 'LlmOverloadedError';
  override readonly retryable = true;
}

/** Other 5xx. */
export class LlmServerError extends LlmError {
  override name = 'LlmServerError';
  override readonly retryable = true;
}

/** No response at all (refused, reset, DNS). */
export class LlmConnectionError extends LlmError {
  override name = 'LlmConnectionError';
  override readonly retryable = true;
}

/** The call took longer than `timeoutMs`. */
export class LlmTimeoutError extends LlmError {
  override name = 'LlmTimeoutError';
  override readonly retryable = true;
}

/** The prompt (plus `maxTokens`) does not fit the model's context window: shrink the context, do not retry. */
export class LlmContextTooLongError extends LlmError {
  override name = 'LlmContextTooLongError';
}

/** 401/403: the key is missing, wrong or lacks permission. Retrying cannot help. */
export class LlmAuthError extends LlmError {
  override name = 'LlmAuthError';
}

/** Other 4xx: the request itself is wrong (unknown model, bad parameter). */
export class LlmBadRequestError extends LlmError {
  override name = 'LlmBadRequestError';
}

/** A 2xx whose body is not a completion (garbage, empty, wrong shape). */
export class LlmBadResponseError extends LlmError {
  override name = 'LlmBadResponseError';
}

/** A setting is missing or invalid (no API key for the chosen provider, a malformed env var). Exit 2 in the CLI. */
export class LlmSettingsError extends SetupError {
  override name = 'LlmSettingsError';
}

/**
 * What the agent needs to know about an LLM failure:
 * - `cancelled`: stop, the run was aborted;
 * - `context_too_long`: retry with a smaller context bundle (or exit_context);
 * - `bad_response`: count a failed attempt and go on;
 * - `unavailable`: rate limits/overload/5xx/timeouts/connection that outlived the retries → exit_infra;
 * - `auth`, `bad_request`, `settings`: configuration is wrong → exit_infra (setup), no point in retrying;
 * - `unknown`: a bug of ours; rethrow.
 */
export type LlmErrorKind =
  'cancelled' | 'context_too_long' | 'bad_response' | 'unavailable' | 'auth' | 'bad_request' | 'settings' | 'unknown';

export function classifyLlmError(err: unknown): LlmErrorKind {
  if (err instanceof CancelledError) return 'cancelled';
  if (err instanceof LlmContextTooLongError) return 'context_too_long';
  if (err instanceof LlmBadResponseError) return 'bad_response';
  if (err instanceof LlmAuthError) return 'auth';
  if (err instanceof LlmBadRequestError) return 'bad_request';
  if (err instanceof LlmSettingsError) return 'settings';
  if (err instanceof LlmError && err.retryable) return 'unavailable';
  if (err instanceof Error && err.name === 'AbortError') return 'cancelled';
  return 'unknown';
}

/** Reads `x-should-retry`, the header Anthropic (and its SDKs) use to override status-based retry rules. */
export function shouldRetryHeader(value: string | null | undefined): boolean | undefined {
  if (value === 'true') return true;
  if (value === 'false') return false;
  return undefined;
}

/**
 * Maps an HTTP error response (status, the provider's error type/code and message) to a typed error.
 * Shared by both adapters so that a 429 means the same thing whatever server sent it.
 */
export function errorFromStatus(
  status: number,
  info: { type?: string | null; code?: string | null; message?: string | null },
  details: LlmErrorDetails,
): LlmError {
  const text = info.message ?? '';
  const where = `${details.provider} ${status}${info.type ? ` ${info.type}` : ''}`;
  const message = `${where}: ${text || 'no message'}`;
  const d = { ...details, status };
  if (status === 413 || isContextTooLong(info)) return new LlmContextTooLongError(message, d);
  if (status === 401 || status === 403 || info.type === 'authentication_error' || info.type === 'permission_error') {
    return new LlmAuthError(message, d);
  }
  if (status === 429 || info.type === 'rate_limit_error') return new LlmRateLimitError(message, d);
  if (status === 529 || status === 503 || info.type === 'overloaded_error') return new LlmOverloadedError(message, d);
  if (status === 408 || status === 504) return new LlmTimeoutError(message, d);
  if (status >= 500) return new LlmServerError(message, d);
  return new LlmBadRequestError(message, d);
}

// Anthropic: 400 invalid_request_error "prompt is too long: N tokens > M maximum" (and "input length and
// `max_tokens` exceed context limit"); OpenAI: code context_length_exceeded; vLLM: "This model's maximum
// context length is N tokens"; llama.cpp: "the request exceeds the available context size".
const CONTEXT_PATTERNS = [
  /prompt is too long/i,
  /exceed(s|ed)? (the )?context (limit|window)/i,
  /maximum context length/i,
  /context size/i,
  /context_length_exceeded/i,
];

function isContextTooLong(info: { code?: string | null; message?: string | null }): boolean {
  if (info.code === 'context_length_exceeded') return true;
  const text = info.message ?? '';
  return CONTEXT_PATTERNS.some((re) => re.test(text));
}
