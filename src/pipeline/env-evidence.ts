// The project's environment in the evidence: what the env stage built, reused or failed at. Pure.
import type { EnvBuildFailure, EnvCandidate } from '../env/types.js';
import { NO_USAGE } from '../llm/usage.js';
import type { FixAdviceFor } from './stages/env/fix-advice.js';
import { extensionFailureLine } from './stages/env/without-extensions.js';
import type { ReproEvidence } from './build-evidence.js';
import { decisionNotes, decisionRecord, envFailureSummary, envNotes, envRecord, type EnvStageResult } from './stages/env/index.js';

/** The evidence with the env recorded: evidence.json's outcome.env, the Environment line's entries and the notes. */
export function withEnv(evidence: ReproEvidence, stage: EnvStageResult): ReproEvidence {
  const o = evidence.outcome;
  if (stage.kind === 'none') {
    // The base interpreter kept: which source each key version satisfied is still said, and why no env was built.
    const notes = [...(o.notes ?? []), ...(stage.decisions?.length ? decisionNotes(stage) : []), ...(stage.note ? [stage.note] : [])];
    if (notes.length === (o.notes ?? []).length) return evidence;
    const environment = stage.decisions?.length ? { ...o.environment, ...decisionRecord(stage) } : o.environment;
    return { ...evidence, outcome: { ...o, environment, notes } };
  }
  if (stage.kind === 'failed') {
    const env = {
      python: null,
      lockHash: null,
      pins: {},
      substitutions: [],
      cached: false,
      buildMs: 0,
      lock: '',
      failure: stage.failure,
      ...(stage.spec.decisions ? { decisions: stage.spec.decisions } : {}),
    };
    const environment = { ...o.environment, ...decisionRecord(stage.spec) };
    return {
      ...evidence,
      outcome: {
        ...o,
        env,
        environment,
        notes: [...(o.notes ?? []), ...decisionNotes(stage.spec), ...stage.spec.notes.map((n) => `Environment: ${n}`)],
      },
    };
  }
  const e = stage.env;
  const env = {
    python: e.python,
    lockHash: e.lockHash,
    pins: e.pins,
    substitutions: e.substitutions,
    cached: e.cached,
    buildMs: e.buildMs,
    lock: e.lock,
    failure: null,
    ...(stage.spec.decisions ? { decisions: stage.spec.decisions } : {}),
    ...(stage.candidates?.length ? { candidates: stage.candidates } : {}),
  };
  return {
    ...evidence,
    outcome: {
      ...o,
      env,
      environment: {
        ...o.environment,
        ...envRecord(e, stage.project?.result ?? null),
        ...(stage.extensionFailure
          ? { extensions: `not built (${extensionFailureLine(stage.extensionFailure)}); the runs use the checkout without them` }
          : {}),
        ...decisionRecord(stage.spec, e),
      },
      notes: [...(o.notes ?? []), ...envNotes(e, stage.spec), ...candidateNotes(stage.candidates ?? [])],
    },
  };
}

/** The import ladder's rejected candidates, one note each: what it held and why it was not used. Pure. */
export function candidateNotes(candidates: readonly EnvCandidate[]): string[] {
  // One accepted (or unproved) candidate is the plain case; a rejected one is said even alone.
  if (!candidates.some((c) => c.outcome === 'rejected' || c.outcome === 'build-failed')) return [];
  return candidates.map((c, i) => {
    const held = Object.entries(c.key)
      .map(([n, v]) => `${n} ${v}`)
      .join(', ');
    const what = `candidate ${i + 1}${c.change ? ` (${c.change})` : ''}${held ? ` with ${held}` : ''}`;
    return `Environment: ${what}: ${c.outcome}, ${c.why}`.slice(0, 600);
  });
}

/**
 * The evidence of a job whose env could not be built: its own status (`exit_env`), never "no model" or needs-info,
 * and no script, since none ran. The build log's tail is the output a maintainer reads.
 */
export function envFailedEvidence(failure: EnvBuildFailure, where: FixAdviceFor = 'repo-config'): ReproEvidence {
  return {
    outcome: {
      status: 'exit_env',
      verdict: 'environment_failed',
      summary: envFailureSummary(failure, where),
      script: null,
      confirmation: null,
      expected: [],
      observed: [],
      match: null,
      metrics: [],
      outputExcerpt: failure.logTail.slice(-4000),
      environment: {},
      attempts: [],
      needsInfo: [],
      usage: { inputTokens: NO_USAGE.inputTokens, outputTokens: NO_USAGE.outputTokens, costUsd: NO_USAGE.costUsd },
      durationMs: 0,
      blockers: [],
      notes: [],
      scriptRan: false,
    },
    report: null,
    plan: null,
    probe: null,
    context: null,
    tier0: null,
    finalRun: null,
    confirm: null,
  };
}
