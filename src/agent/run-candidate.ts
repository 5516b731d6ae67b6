import { CancelledError } from '../errors.js';
import { DEFAULT_WORKSPACE_MOUNT, type RunRequestInput, type RunResult, type ScriptExecutor, type Workspace } from '../exec/types.js';
import { matchRun, readRun } from '../symptoms/index.js';
import type { MatchResult, ReportReading, RunReading } from '../symptoms/types.js';
import { crashProvenance } from './crash-provenance.js';

/** One executed candidate: what ran, what happened, what it means against the report. */
export interface CandidateRun {
  script: string;
  seed: number;
  run: RunResult;
  reading: RunReading;
  match: MatchResult;
}

export interface RunCandidateDeps {
  executor: ScriptExecutor;
  /** The project's checkout at the issue's ref: every run imports it; a crash must come through it or the report's code. */
  workspace?: Workspace;
}

export interface RunLimitsSettings {
  runTimeoutMs: number;
  runMemoryMb: number;
}

/** The seed of every attempt (tier 0's candidates, tier 1's scripts); confirmation re-runs use others. */
export const ATTEMPT_SEED = 0;

/**
 * The request a candidate runs as. Pure; the pipeline also builds it ahead (with any script) to warm the
 * executor for runs of this shape.
 */
export function candidateRequest(
  script: string,
  input: { report: Pick<ReportReading, 'versions'>; seed: number; settings: RunLimitsSettings; labels?: Record<string, string> },
  workspace?: Workspace,
): RunRequestInput {
  return {
    files: [{ path: 'repro.py', content: script }],
    entry: 'repro.py',
    seed: input.seed,
    env: { REPGEN_SEED: String(input.seed) },
    limits: {
      timeoutMs: input.settings.runTimeoutMs,
      memoryMb: input.settings.runMemoryMb,
      cpuSeconds: Math.max(60, Math.ceil((input.settings.runTimeoutMs / 1000) * 4)),
      maxOutputBytes: 1_000_000,
    },
    labels: input.labels ?? {},
    ...(workspace ? { workspace } : {}),
    // The Kubernetes executor picks an image matching the report's versions; the local one ignores them.
    ...(input.report.versions.length
      ? { versions: Object.fromEntries(input.report.versions.map((v) => [v.name.toLowerCase(), v.version])) }
      : {}),
  };
}

/**
 * Runs a script through the executor and judges the output with the symptom matcher (code decides,
 * never the model). An aborted run is a cancellation; other infrastructure failures come back in
 * `run.infra` for the caller to end with exit_infra.
 */
export async function runCandidate(
  script: string,
  input: { report: ReportReading; seed: number; settings: RunLimitsSettings; labels?: Record<string, string> },
  deps: RunCandidateDeps,
  signal?: AbortSignal,
): Promise<CandidateRun> {
  if (signal?.aborted) throw new CancelledError('cancelled before the run');
  const run = await deps.executor.run(candidateRequest(script, input, deps.workspace), signal);
  if (run.infra?.kind === 'aborted' || signal?.aborted) throw new CancelledError('cancelled during a run');
  // The whole result: a native crash (SIGSEGV in a CUDA/C++ op) shows only in `run.signal`.
  const reading = readRun(run.output, run);
  let match: MatchResult = run.infra
    ? { verdict: 'not_reproduced' as const, score: 0, reasons: [`infrastructure: ${run.infra.kind}: ${run.infra.message}`] }
    : matchRun(input.report, reading, {
        script,
        output: run.output,
        ...(deps.workspace ? { projectRoots: [deps.workspace.mountPath ?? DEFAULT_WORKSPACE_MOUNT, deps.workspace.hostPath] } : {}),
      });
  // An oracle's failing assertion is the script's by design (it states the report's expectation): no crash to trace.
  // Only a crash the report shows must come through the project: against a silent report's symptom, the script's own
  // failing check after the printed line is how a reproduction fails (matchPattern reads it so).
  const crashReport = input.report.expected.some((s) => s.category === 'crash');
  if (
    deps.workspace &&
    crashReport &&
    !match.oracle &&
    match.verdict !== 'not_reproduced' &&
    reading.symptoms.some((s) => s.category === 'crash')
  ) {
    const roots = [deps.workspace.mountPath ?? DEFAULT_WORKSPACE_MOUNT, deps.workspace.hostPath];
    const provenance = crashProvenance(reading.traceback, input.report, { projectRoots: roots, scriptFile: 'repro.py' });
    match = provenance.ok
      ? { ...match, reasons: [...match.reasons, provenance.reason] }
      : { verdict: 'not_reproduced', score: 0, reasons: [...match.reasons, provenance.reason] };
  }
  // Against the project's checkout a reproduction is a fail-to-pass test: a run that shows the bug and exits 0 (a printed
  // line, a warning) fails no test suite while the bug is there, so it is not one yet.
  if (deps.workspace && match.verdict === 'reproduced' && run.exitCode === 0 && !run.signal && !run.timedOut)
    match = { ...match, verdict: 'partial', score: Math.min(match.score, 0.5), reasons: [...match.reasons, EXITS_ZERO] };
  return { script, seed: input.seed, run, reading, match };
}

/** Why a run against the project that shows the bug but exits 0 is not yet a reproduction: said to the model as feedback. */
export const EXITS_ZERO =
  'the run exits 0: against the project a reproduction must fail while the bug is there and pass once it is fixed; end the ' +
  "script with an assertion that fails while the bug shows (the report's expected value; for a reported warning, make only " +
  'that warning an error before the call, `warnings.filterwarnings("error", message="<the start of its message>", ' +
  'category=UserWarning)` with its class, so the library raises it and other warnings stay warnings)';

function describeSymptoms(reading: RunReading): string {
  if (!reading.symptoms.length)
    return reading.exception ? `${reading.exception.type}: ${reading.exception.message}` : 'no symptom (the run finished normally)';
  return reading.symptoms
    .map((s) =>
      s.exception
        ? `${s.kind} (${s.exception.type}: ${s.exception.message.split('\n')[0]})`
        : `${s.kind}${s.metric ? ` in ${s.metric}` : ''}`,
    )
    .join('; ');
}

/** Feedback after a run that did not show the bug: expected vs observed, and the matcher's reasons. */
export function mismatchFeedback(report: ReportReading, c: CandidateRun): string {
  const expected = report.expected
    .map((s) =>
      s.exception ? `${s.exception.type}: ${s.exception.message.split('\n')[0]}` : `${s.kind}${s.metric ? ` in ${s.metric}` : ''}`,
    )
    .join('; ');
  const lines = [
    `Expected: ${expected || 'nothing to compare'}.`,
    `Observed: ${describeSymptoms(c.reading)}; exit code ` +
      `${c.run.exitCode ?? 'none'}${c.run.timedOut ? ', timed out' : ''}${c.run.oomKilled ? ', killed for memory' : ''}.`,
    `Matcher (${c.match.verdict}, score ${c.match.score}): ${c.match.reasons.join('; ')}`,
  ];
  // Values of the reporter's random state are never a target (docs/verdicts.md): say so, so no attempt chases them.
  const unreachable = [...new Set((c.match.compared ?? []).flatMap((x) => x.notCompared ?? []))];
  if (unreachable.length)
    lines.push(
      `Do not aim for the report's exact ${unreachable.join(', ')}: they come from the reporter's random state or data; match the pattern instead.`,
    );
  return lines.join('\n');
}

/** The last lines of a run's output, for feedback and the comment. */
export function outputTail(run: RunResult, maxChars = 3000): string {
  const out = run.output.trimEnd();
  return out.length > maxChars ? `…${out.slice(-maxChars)}` : out;
}
