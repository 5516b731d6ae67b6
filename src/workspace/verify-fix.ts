import { outputTail, type RunLimitsSettings } from '../agent/run-candidate.js';
import type { ScriptExecutor, Workspace } from '../exec/types.js';
import type { ReportReading } from '../symptoms/types.js';
import { runAgainstChange } from './fix-run.js';
import { fixOracle, fixVerdict, type BuggyOracle, type FixCheck, type FixRun } from './fix-verdict.js';

export interface VerifyFixInput {
  /** The confirmed reproduction (repro.py). */
  script: string;
  /** The report it reproduces: a run "still reproduces" when the matcher finds the report's bug in it. */
  report: ReportReading;
  /** The fixing ref as asked, and its commit. */
  ref: string;
  sha: string;
  /** The project's checkout at `sha`. */
  workspace: Workspace;
  /** Runs, each with its own seed. @defaultValue 2 */
  runs?: number;
  settings: RunLimitsSettings;
  /** A behavioural reproduction's oracle as it showed at the buggy ref: recorded beside the values at the fix. */
  buggyOracle?: BuggyOracle;
}

/**
 * Re-runs a confirmed reproduction against the project at a fixing ref, with the same executor and
 * limits as the reproduction itself, and says whether the fix holds (fail-to-pass).
 */
export async function verifyFix(input: VerifyFixInput, deps: { executor: ScriptExecutor }, signal?: AbortSignal): Promise<FixCheck> {
  const runs: FixRun[] = [];
  const n = Math.max(1, input.runs ?? 2);
  for (let i = 0; i < n; i++) {
    const seed = 7 + i * 1000;
    const {
      run: c,
      infra,
      outcome,
    } = await runAgainstChange(
      input.script,
      { report: input.report, seed, settings: input.settings, purpose: 'fix-check' },
      { executor: deps.executor, workspace: input.workspace },
      signal,
    );
    const oracle = c.match.oracle;
    const observed =
      infra ??
      (oracle
        ? `the report's expectation ${oracle.held ? 'held' : 'fails'}${oracle.observed ? `: ${oracle.observed}` : ''}`
        : c.reading.symptoms.length
          ? c.reading.symptoms.map((s) => (s.exception ? `${s.exception.type}: ${s.exception.message.split('\n')[0]}` : s.kind)).join('; ')
          : `no symptom; exit ${c.run.exitCode ?? c.run.signal ?? 'none'}`);
    runs.push({
      seed,
      outcome,
      exitCode: c.run.exitCode,
      signal: c.run.signal,
      timedOut: c.run.timedOut,
      observed: observed.slice(0, 500),
      outputExcerpt: outputTail(c.run, 2000),
      ...(oracle ? { oracle } : {}),
    });
    // One infrastructure failure ends the check: the others would fail the same way.
    if (infra) break;
  }
  const { verdict, reason } = fixVerdict(runs.map((r) => r.outcome));
  const oracle = fixOracle(input.buggyOracle, runs);
  return { ref: input.ref, sha: input.sha, verdict, reason, runs, ...(oracle ? { oracle } : {}) };
}
