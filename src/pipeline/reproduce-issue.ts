// 0 intake (the IssueSource: issue, checkout)  1-5 runReproWithEvidence  (fix check)  6 publish (the ResultPublisher)
// The one way to run a reproduction: `repgen reproduce`, `repgen bench`, the App's worker and the GitHub
// Action all call reproduceIssue with the spec resolveRunSpec made and their own adapters.
import { createExecutor } from '../exec/index.js';
import type { ScriptExecutor } from '../exec/types.js';
import { withPolicy } from '../exec/with-policy.js';
import { createLlmClient } from '../llm/index.js';
import type { LlmClient } from '../llm/types.js';
import { silentLogger, type Logger } from '../log.js';
import { checkBisect, checkFix, withRef } from './evidence.js';
import { envFailedEvidence, withEnv } from './env-evidence.js';
import { defaultEnvPorts } from './stages/env/default-env-ports.js';
import { envExecutor, envExecutorAt } from './stages/env/env-at.js';
import { prepareEnv, type EnvStageResult } from './stages/env/index.js';
import type { Published, ReproPorts, RunReport, SpecSummary } from './ports.js';
import { runReproWithEvidence, type BuildContextFn, type ReproEvidence } from './run-repro.js';
import { compareWithRealFix } from './stages/candidate-fix/index.js';
import type { RunSpec } from './run-spec.js';

export interface ReproduceResult extends RunReport {
  published: Published;
}

/**
 * Runs one reproduction end to end. Throws CancelledError when `signal` aborts (nothing is published: the
 * caller says how it ended, with `publisher.end`), SetupError on a broken install, and whatever the source
 * throws when it cannot give the issue or the checkout (a deleted issue, a ref that does not exist).
 */
export async function reproduceIssue(spec: RunSpec, ports: ReproPorts, signal: AbortSignal): Promise<ReproduceResult> {
  const log = ports.log ?? silentLogger;
  const { source, publisher } = ports;
  const progress = (stage: Parameters<typeof publisher.progress>[0], message: string) =>
    publisher.progress(stage, message).catch(() => undefined);

  // 0 intake: the port's half (the pipeline's own intake stage then checks and cuts the text)
  await progress('intake', `reading the issue (${source.label})`);
  const issue = await source.readIssue(signal);
  signal.throwIfAborted();
  const checkout = await source.checkout(issue, signal);
  signal.throwIfAborted();

  // The executor's host checks (the sandbox probe: bwrap runs) go on beside the env stage, not after it (issue 42).
  const building = ports.executor ? Promise.resolve(null) : createExecutor(spec.executor, { log });
  building.catch(() => undefined);
  if (ports.executor) void ports.executor.prepare?.();
  else
    void building.then(
      (made) => made?.prepare?.(),
      () => undefined,
    );

  // 0b environment: the project's own, built or reused, before anything runs
  const repoDir = checkout?.workspace?.hostPath ?? checkout?.repoDir ?? null;
  let envPorts: Awaited<ReturnType<typeof defaultEnvPorts>>;
  let envStage: EnvStageResult;
  try {
    envPorts = ports.env !== undefined ? { ports: ports.env, note: null } : await defaultEnvPorts(spec.env, log);
    envStage = envPorts.ports
      ? await prepareEnv({ issue, repoDir, checkout: checkout?.workspace?.hostPath ?? null }, envPorts.ports, progress, signal)
      : { kind: 'none' };
    signal.throwIfAborted();
  } catch (err) {
    await (await building.catch(() => null))?.close?.().catch(() => undefined);
    throw err;
  }

  const built = await building;
  try {
    const inner = withPolicy(ports.executor ?? (built as ScriptExecutor), spec.policy);
    const executor = envStage.kind === 'built' ? envExecutor(inner, envStage) : inner;
    const { llm, reason } = await modelFor(spec, ports.llm, log);
    const buildContext = checkout ? await contextFor(spec, ports.buildContext, log) : undefined;
    const summary = specSummary(spec, executor, llm, reason);
    const stages = ports.stages ?? runReproWithEvidence;
    let evidence =
      envStage.kind === 'failed'
        ? envFailedEvidence(envStage.failure, spec.env.advice)
        : await stages(
            {
              issue,
              repoDir: repoDir ?? undefined,
              workspace: checkout?.workspace,
              settings: spec.settings,
              ...(spec.env.advice ? { envAdvice: spec.env.advice } : {}),
              ...(envStage.kind === 'built'
                ? { env: { pins: envStage.env.pins, declared: envStage.spec.requirements.map((r) => r.name) } }
                : {}),
            },
            { executor, llm, llmReason: reason, buildContext, log, progress, ...(ports.checker ? { checker: ports.checker } : {}) },
            signal,
          );
    evidence = withEnv(evidence, envStage);
    if (envPorts.note)
      evidence = { ...evidence, outcome: { ...evidence.outcome, notes: [...(evidence.outcome.notes ?? []), envPorts.note] } };
    if (checkout?.ref) evidence = withRef(evidence, checkout.ref);
    if (checkout?.fix) {
      await progress('confirm', `checking the fix at ${checkout.fix.ref} (${checkout.fix.sha.slice(0, 12)})`);
      evidence = await checkFix(evidence, { ...checkout.fix, settings: spec.settings, executor }, signal);
      if (evidence.candidateFix && checkout.workspace)
        evidence = await withFixComparison(evidence, checkout.workspace.hostPath, checkout.fix, log);
    }
    if (checkout?.bisect && spec.settings.bisectMaxSteps > 0) {
      await progress('confirm', `bisecting from ${checkout.bisect.good.ref} (${checkout.bisect.good.why})`);
      const onStep = (message: string): void => void progress('confirm', message);
      // Each step in its commit's own env (reused by lock hash); without an env builder, every step runs as the issue's ref did.
      const executorAt = envPorts.ports ? envExecutorAt(issue, envPorts.ports, inner) : undefined;
      const deps = { source: checkout.bisect, settings: spec.settings, executor, progress: onStep, ...(executorAt ? { executorAt } : {}) };
      evidence = await checkBisect(evidence, deps, signal);
    }
    evidence = { ...evidence, spec: summary, outcome: { ...evidence.outcome, notes: [...(evidence.outcome.notes ?? []), ...spec.notes] } };
    const report: RunReport = {
      source: source.label,
      issue,
      evidence,
      checkout: checkout ? { ...(checkout.sha ? { sha: checkout.sha } : {}), ...(checkout.ref ? { ref: checkout.ref } : {}) } : null,
      spec: summary,
    };
    // 6 publish
    const published = await publisher.publish(report);
    return { ...report, published };
  } finally {
    await built?.close?.().catch(() => undefined);
  }
}

/** The candidate fix beside the real one (issue 41 item 5): files, functions, both verdicts; a tree that cannot be read is a note. */
async function withFixComparison(
  evidence: ReproEvidence,
  buggy: string,
  fix: { ref: string; workspace: { hostPath: string } },
  log: Logger,
): Promise<ReproEvidence> {
  const record = evidence.candidateFix;
  if (!record) return evidence;
  try {
    const comparison = await compareWithRealFix(record, {
      buggy,
      fixed: fix.workspace.hostPath,
      ref: fix.ref,
      fixVerdict: evidence.fixCheck?.verdict ?? null,
    });
    if (!comparison) return evidence;
    const note =
      `Candidate fix beside the real fix at ${fix.ref}: same files ${comparison.sameFiles.length ? comparison.sameFiles.join(', ') : 'none'} ` +
      `(the fix changes ${comparison.fixFiles.length}), same functions ${comparison.sameFunctions.length ? comparison.sameFunctions.join(', ') : 'none'}; ` +
      `the reproduction at the fix: ${comparison.fixVerdict ?? 'not run'}, with the candidate: ${comparison.candidateResult.replace('_', ' ')}.`;
    const o = evidence.outcome;
    return { ...evidence, candidateFix: { ...record, comparison }, outcome: { ...o, notes: [...(o.notes ?? []), note] } };
  } catch (err) {
    log.warn({ error: err instanceof Error ? err.message : String(err) }, 'the candidate fix could not be compared with the real fix');
    return evidence;
  }
}

async function modelFor(
  spec: RunSpec,
  given: LlmClient | null | undefined,
  log: Logger,
): Promise<{ llm: LlmClient | null; reason: string }> {
  if (given !== undefined)
    return { llm: given, reason: given ? `${given.provider} ${given.model}` : (spec.llm.reason ?? 'no LLM configured') };
  const llm = await createLlmClient(spec.llm, { log });
  return { llm, reason: llm ? `${llm.provider} ${llm.model}` : (spec.llm.reason ?? 'no LLM configured') };
}

async function contextFor(spec: RunSpec, given: BuildContextFn | null | undefined, log: Logger): Promise<BuildContextFn | undefined> {
  if (given !== undefined) return given ?? undefined;
  const { buildContext } = await import('../context/index.js');
  return (input) => buildContext(input, { settings: spec.context, log });
}

function specSummary(spec: RunSpec, executor: ScriptExecutor, llm: LlmClient | null, reason: string): SpecSummary {
  return { caps: spec.caps, executor: executor.name, llm: llm ? `${llm.provider} ${llm.model}` : `none (${reason})`, notes: spec.notes };
}
