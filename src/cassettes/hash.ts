import { createHash } from 'node:crypto';
import type { RunRequestInput } from '../exec/types.js';
import type { LlmRequest } from '../llm/types.js';
import type { CassetteLlmRequest } from './schema.js';

/** The request as a cassette stores it: the LlmRequest's own fields, nothing else. Pure. */
export function cassetteLlmRequest(request: LlmRequest): CassetteLlmRequest {
  return {
    ...(request.system !== undefined ? { system: request.system } : {}),
    messages: request.messages.map((m) => ({ role: m.role, content: m.content })),
    ...(request.maxTokens !== undefined ? { maxTokens: request.maxTokens } : {}),
    ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
    ...(request.stop !== undefined ? { stop: request.stop } : {}),
  };
}

/** sha256 of a model request (system, messages, limits): a changed prompt changes it. Pure. */
export function hashLlmRequest(request: LlmRequest): string {
  return createHash('sha256')
    .update(JSON.stringify(cassetteLlmRequest(request)))
    .digest('hex');
}

/** sha256 of what a script run runs: its files, entry, args and seed (not limits or labels). Pure. */
export function hashRunRequest(request: RunRequestInput): string {
  const key = {
    files: request.files.map((f) => [f.path, f.content]),
    entry: request.entry,
    args: request.args ?? [],
    seed: request.seed ?? null,
  };
  return createHash('sha256').update(JSON.stringify(key)).digest('hex');
}

/** sha256 of a text (a script given to the static check). Pure. */
export function hashText(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}
