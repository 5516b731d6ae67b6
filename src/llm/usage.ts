import { z } from 'zod';
import type { Logger } from '../log.js';
import { costUsd, priceFor, type LlmPrices } from './settings.js';
import type { LlmClient, LlmRequest, LlmResponse, LlmUsage } from './types.js';

/** Zero usage, e.g. for a step that made no call. */
export const NO_USAGE: LlmUsage = { inputTokens: 0, outputTokens: 0, costUsd: 0 };

/** Sum of two usages (pure). */
export function addUsage(a: LlmUsage, b: LlmUsage): LlmUsage {
  return { inputTokens: a.inputTokens + b.inputTokens, outputTokens: a.outputTokens + b.outputTokens, costUsd: a.costUsd + b.costUsd };
}

/**
 * Prices one call. Unknown models cost 0 and are warned about once per model and `warned` set, so
 * a budget in $ does not silently stop working (a budget in tokens still does).
 */
export function priceUsage(
  model: string,
  inputTokens: number,
  outputTokens: number,
  prices: LlmPrices,
  log: Logger,
  warned: Set<string>,
): LlmUsage {
  const price = priceFor(model, prices);
  if (!price && !warned.has(model)) {
    warned.add(model);
    log.warn({ model }, 'no price for this model; counting its cost as 0 (set REPGEN_LLM_PRICES)');
  }
  return { inputTokens, outputTokens, costUsd: costUsd(price, inputTokens, outputTokens) };
}

/** Budget limits; absent means unlimited. */
export const UsageBudget = z
  .object({
    /** Input + output tokens over all calls. */
    maxTokens: z.int().positive().optional(),
    /** $ over all calls. */
    maxCostUsd: z.number().positive().optional(),
  })
  .strict();
export type UsageBudget = z.infer<typeof UsageBudget>;

export interface UsageTotals extends LlmUsage {
  calls: number;
}

/** Running totals across calls, checked against a budget. */
export interface UsageAccumulator {
  add(usage: LlmUsage): void;
  readonly totals: UsageTotals;
  /** True once a limit is reached: the caller should stop making calls (exit_budget). */
  exhausted(): boolean;
  /** Tokens left under `maxTokens` (Infinity when unlimited), never negative. */
  tokensLeft(): number;
}

export function createUsageAccumulator(budget: UsageBudget = {}): UsageAccumulator {
  const totals: UsageTotals = { calls: 0, ...NO_USAGE };
  return {
    totals,
    add(usage) {
      totals.calls += 1;
      totals.inputTokens += usage.inputTokens;
      totals.outputTokens += usage.outputTokens;
      totals.costUsd += usage.costUsd;
    },
    exhausted() {
      const tokens = totals.inputTokens + totals.outputTokens;
      if (budget.maxTokens !== undefined && tokens >= budget.maxTokens) return true;
      if (budget.maxCostUsd !== undefined && totals.costUsd >= budget.maxCostUsd) return true;
      return false;
    },
    tokensLeft() {
      if (budget.maxTokens === undefined) return Infinity;
      return Math.max(0, budget.maxTokens - totals.inputTokens - totals.outputTokens);
    },
  };
}

/**
 * Wraps a client so that every successful completion is added to `accumulator` — the one place
 * budgets are counted, whoever makes the call (report, plan, agent, structured retries).
 */
export function meterClient(client: LlmClient, accumulator: UsageAccumulator): LlmClient {
  return {
    provider: client.provider,
    model: client.model,
    async complete(request: LlmRequest, signal?: AbortSignal): Promise<LlmResponse> {
      const response = await client.complete(request, signal);
      accumulator.add(response.usage);
      return response;
    },
  };
}
