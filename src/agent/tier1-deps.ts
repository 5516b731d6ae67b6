import type { Tier1Deps } from './tier1.js';

/** Tier 1's own ports out of a wider set (the agent's, less tier 0's `spare`): both rounds of tier 1 take the same. */
export function tier1DepsOf(deps: Tier1Deps): Tier1Deps {
  return {
    executor: deps.executor,
    workspace: deps.workspace,
    llm: deps.llm,
    checker: deps.checker,
    prompts: deps.prompts,
    log: deps.log,
    now: deps.now,
    onAttempt: deps.onAttempt,
    onActivity: deps.onActivity,
    checkImports: deps.checkImports,
  };
}
