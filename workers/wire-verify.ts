import type { OperatorEnv } from '../src/config/operator-env.js';
import type { ExecutorChooser } from '../src/exec/executor-chooser.js';
import { withPolicy } from '../src/exec/with-policy.js';
import type { RunFixCheck } from '../src/github/process-verify-job.js';
import type { Logger } from '../src/log.js';
import { jobSpec } from '../src/queue/job-spec.js';
import { runReport } from '../src/report/index.js';
import { verifyFix } from '../src/workspace/verify-fix.js';

/**
 * The worker's fix check: the job's run spec as for a reproduction (operator ceilings, the repository's
 * config and policy, the same executor and run limits), the PR head's checkout as the read-only workspace,
 * and the report's symptom read from the issue (no model: the reading is deterministic) to tell "still
 * reproduces" from a different failure.
 */
export function wireFixCheck(operator: OperatorEnv, executorFor: ExecutorChooser, log: Logger): RunFixCheck {
  return async (request, signal) => {
    const spec = jobSpec(operator, { ...request, llm: 'none' });
    const settings = spec.settings;
    const executor = withPolicy(await executorFor(spec.executor), spec.policy);
    const report = await runReport(
      { issue: request.issue, settings: { maxIssueChars: settings.maxIssueChars, maxLlmIssueChars: settings.maxLlmIssueChars } },
      { llm: null, log },
      signal,
    );
    return verifyFix(
      {
        script: request.script,
        report: report.reading,
        ref: request.ref,
        sha: request.sha,
        workspace: { hostPath: request.repoDir },
        runs: Math.min(3, Math.max(1, settings.confirmRuns)),
        settings,
        ...(request.buggyOracle ? { buggyOracle: request.buggyOracle } : {}),
      },
      { executor },
      signal,
    );
  };
}
