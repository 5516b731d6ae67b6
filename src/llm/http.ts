// undici 8 is written for Node >= 22.19; the Kubernetes client needs the same three Node 22 APIs on Node 20.
import { Agent, fetch as undiciFetch, type Dispatcher } from 'undici';

/**
 * The HTTP client of both model adapters. Node's global fetch is undici with its own limits under ours:
 * `headersTimeout` and `bodyTimeout` of 300 s and a 10 s connect timeout. A model that takes longer than
 * five minutes to start answering (a CPU-served llama.cpp or Ollama on a long prompt) was cut with
 * "fetch failed (Headers Timeout Error)" although REPGEN_LLM_TIMEOUT_MS allowed 30 minutes. Here every
 * undici limit is set from the configured timeout plus a little slack, so the configured timeout (the
 * AbortSignal of src/llm/retry.ts, with its clear "no answer within N ms" message) is the only one that
 * ever fires. Node 20's global fetch rejects dispatchers of the undici package (a different handler
 * API), so the fetch is undici's own, paired with its Agent.
 */

/** Added to the configured timeout for undici's limits, so that ours fires first. @defaultValue 5000 */
export const UNDICI_SLACK_MS = 5_000;

export interface ModelHttpTimeouts {
  headersTimeout: number;
  bodyTimeout: number;
  connectTimeout: number;
}

/** undici's limits for a model call whose configured timeout is `timeoutMs`. Pure. */
export function modelHttpTimeouts(timeoutMs: number, slackMs = UNDICI_SLACK_MS): ModelHttpTimeouts {
  const limit = timeoutMs + slackMs;
  return { headersTimeout: limit, bodyTimeout: limit, connectTimeout: limit };
}

/** The dispatcher of a model client: undici's Agent with {@link modelHttpTimeouts}. */
export function createModelDispatcher(timeoutMs: number, slackMs = UNDICI_SLACK_MS): Dispatcher {
  return new Agent(modelHttpTimeouts(timeoutMs, slackMs));
}

/**
 * A fetch for model calls whose only time limits are the configured one: undici's fetch over
 * `dispatcher` (by default {@link createModelDispatcher}). Typed as the global fetch, which both
 * adapters (and the Anthropic SDK's `fetch` option) take.
 */
export function createModelFetch(timeoutMs: number, dispatcher: Dispatcher = createModelDispatcher(timeoutMs)): typeof fetch {
  const modelFetch = (input: string | URL | Request, init?: RequestInit): Promise<Response> =>
    undiciFetch(input as Parameters<typeof undiciFetch>[0], {
      ...(init as Parameters<typeof undiciFetch>[1]),
      dispatcher,
    }) as unknown as Promise<Response>;
  return modelFetch as typeof fetch;
}
