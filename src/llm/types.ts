import { z } from 'zod';

/** The LlmClient port: the agent talks to models only through this. */

export const LlmMessage = z.object({ role: z.enum(['user', 'assistant']), content: z.string() });
export type LlmMessage = z.infer<typeof LlmMessage>;

export interface LlmRequest {
  system?: string;
  messages: LlmMessage[];
  /** @defaultValue the client's configured maxTokens */
  maxTokens?: number;
  /** @defaultValue the client's configured temperature. Not sent to Anthropic (see src/llm/anthropic.ts). */
  temperature?: number;
  stop?: string[];
}

export const LlmUsage = z.object({
  inputTokens: z.number().int().min(0),
  outputTokens: z.number().int().min(0),
  costUsd: z.number().min(0),
});
export type LlmUsage = z.infer<typeof LlmUsage>;

export interface LlmResponse {
  text: string;
  model: string;
  stopReason: string | null;
  usage: LlmUsage;
  /** HTTP calls this completion took (1 + retries). Added by the LLM layer; optional for fakes. */
  attempts?: number;
  /** Wall-clock time of the completion, retries and backoff included. */
  durationMs?: number;
}

export interface LlmClient {
  readonly provider: 'anthropic' | 'openai';
  readonly model: string;
  /** One completion. Retries transient errors itself; throws typed errors from `src/llm/errors.ts`. */
  complete(request: LlmRequest, signal?: AbortSignal): Promise<LlmResponse>;
}
