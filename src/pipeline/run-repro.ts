// 0 intake  1 context  2 report  3 plan  4 agent (tier 0, then tier 1)  5 confirm  5b candidate fix  6 outcome
// The pipeline knows no GitHub and no Redis: the CLI and the worker wire the same deps and call runRepro.
import {
  completeSnippet,
  createPyflakesChecker,
  loadAgentPrompts,
  runAgent,
  type AgentDeps,
  type AgentInput,
  type AgentResult,
  type CandidateRun,
} from '../agent/index.js';
import type { CompletedSnippet } from '../agent/tier0.js';
import { agentBudget, reportPackagesOf, snippetForEnv, withWorkspaceModules } from './snippet-for-env.js';
import { CancelledError, SetupError } from '../errors.js';
import { distributionsForImports, loadImportNameTables, reportSetupEnv } from '../env/index.js';
import { withKerasBackend } from '../env/read/keras-backend.js';
import { DEFAULT_WORKSPACE_MOUNT } from '../exec/types.js';
import type { LlmUsage } from '../llm/types.js';
import { addUsage, NO_USAGE } from '../llm/usage.js';
import {
  createDiskProbeStore,
  environmentRecord,
  importedModules,
  missingModules,
  probeEnvironment,
  referencedModules,
  runPlan,
  type EnvironmentProbe,
  type ReproPlan,
} from '../plan/index.js';
import { hasEvidence, runReport, type ReportResult } from '../report/index.js';
import { reportedProjectStatements } from '../workspace/reported-statements.js';
import { createEarlyConfirm, runConfirm, type ConfirmResult } from './stages/confirm/index.js';
import { withoutUnreachedChecksOf } from './stages/confirm/unreached-checks.js';
import type { CandidateFixRecord } from './stages/candidate-fix/index.js';
import { candidateFixStep, withCandidateFix } from './candidate-step.js';
import { runContextStage } from './stages/context/index.js';
import { runIntake } from './stages/intake/index.js';
import { runOutcome, staticFindingsCanMatter } from './stages/outcome/index.js';
import type { ReproOutcome } from './types.js';
import { readProjectExports } from '../workspace/project-exports.js';
import { warmRuns } from './warm-runs.js';
import { buildEvidence, type ReproEvidence } from './build-evidence.js';
import type { ReproDeps, ReproInput } from './ports.js';
import { envImportFailure, environmentState, type EnvImportInput } from './environment-state.js';

export type { ReproEvidence } from './build-evidence.js';
export type { BuildContextFn, ReproDeps, ReproInput } from './ports.js';

function checkAbort(signal?: AbortSignal): void {
  if (signal?.aborted) throw new CancelledError('the reproduction was cancelled');
}

/** Runs stages 0-6 and returns the outcome. Throws CancelledError when `signal` aborts, SetupError on a broken install. */
export async function runRepro(input: ReproInput, deps: ReproDeps, signal?: AbortSignal): Promise<ReproOutcome> {
  return (await runReproWithEvidence(input, deps, signal)).outcome;
}

/** {@link runRepro}, also returning the evidence behind the outcome. */
export async function runReproWithEvidence(input: ReproInput, deps: ReproDeps, signal?: AbortSignal): Promise<ReproEvidence> {
  const state: { finish?: (infra: string) => ReproEvidence } = {};
  try {
    return await runStages(input, deps, state, signal);
  } catch (err) {
    // Cancellation and a broken install (missing prompt file, bad settings) go to the caller; anything else
    // the stages did not expect (a tool that would not start, an executor that rejected) ends as exit_infra.
    if (err instanceof CancelledError || err instanceof SetupError || signal?.aborted || !state.finish) {
      throw signal?.aborted && !(err instanceof CancelledError) ? new CancelledError('the reproduction was cancelled') : err;
    }
    deps.log.error({ error: err instanceof Error ? err.message : String(err) }, 'a stage failed unexpectedly');
    return state.finish(`${err instanceof Error ? err.name : 'Error'}: ${err instanceof Error ? err.message : String(err)}`);
  }
}

async function runStages(
  input: ReproInput,
  deps: ReproDeps,
  state: { finish?: (infra: string) => ReproEvidence },
  signal?: AbortSignal,
): Promise<ReproEvidence> {
  const now = deps.now ?? Date.now;
  const started = now();
  const s = input.settings;
  const notes: string[] = [];
  const llmReason = deps.llmReason ?? 'no LLM configured';
  const checker = deps.checker ?? createPyflakesChecker({ python: s.staticPython, pylint: s.pylint });
  // Tier 0 needs only pyflakes' verdict before its run; pylint -E (seconds of CPU, astroid reads torch) is wanted
  // only by the outcome, so with the default checker it runs alongside the probe, the run and the confirmation.
  const lateLint = !deps.checker && s.pylint;
  const firstChecker = lateLint ? createPyflakesChecker({ python: s.staticPython, pylint: false }) : checker;
  let lintDone: Promise<void> | null = null;
  // Aborted (its process killed) once its findings can no longer change the outcome; the run's signal aborts it too.
  const lintAbort = new AbortController();
  let lintLanded = false;
  let usage: LlmUsage = NO_USAGE;
  let report: ReportResult | null = null;
  let plan: ReproPlan | null = null;
  let probe: EnvironmentProbe | null = null;
  let snippet: CompletedSnippet | null = null;
  let agent: AgentResult | null = null;
  let confirm: ConfirmResult | null = null;
  let infra: string | null = null;
  let envFailure: string | null = null;
  let environmentFailure: string | null = null;
  let context: ReproEvidence['context'] = null;
  let environment: Record<string, string> = { executor: deps.executor.name };

  /** What the outcome is decided from, as the stages left it. */
  const decisionInput = (rejection: string | null): Parameters<typeof runOutcome>[0] => ({
    rejection,
    report,
    plan,
    snippet,
    agent,
    confirm,
    llm: { available: deps.llm !== null, reason: llmReason },
    infra,
    envFailure,
    environmentFailure,
  });
  const finish = (rejection: string | null): ReproEvidence =>
    buildEvidence({ report, plan, probe, snippet, agent, confirm, context, infra }, runOutcome(decisionInput(rejection)), {
      usage,
      environment,
      notes,
      durationMs: now() - started,
    });

  /** Ends the late pylint check unheard when its findings cannot change the outcome; the caller awaits lintDone. */
  const skipLintIfMoot = (): void => {
    if (!lintDone || lintLanded || lintAbort.signal.aborted) return;
    const input = decisionInput(null);
    if (staticFindingsCanMatter(input)) return;
    lintAbort.abort();
    const why =
      agent?.status === 'reproduced'
        ? 'the run reproduced the bug'
        : infra
          ? 'the run stopped on an infrastructure problem'
          : `its findings could not change the outcome (${runOutcome(input).verdict})`;
    notes.push(`pylint -E skipped: ${why}; the static report is pyflakes' alone`);
  };

  const stopAtPlan = async (line: string): Promise<ReproEvidence> => {
    await deps.progress('plan', line);
    skipLintIfMoot();
    await lintDone;
    return finish(null);
  };

  state.finish = (why: string) => {
    infra = why;
    skipLintIfMoot();
    return finish(null);
  };

  // 0 intake
  await deps.progress('intake', 'reading the issue');
  const intake = runIntake({ issue: input.issue });
  notes.push(...intake.notes);
  if (intake.rejection) {
    await deps.progress('intake', `rejected: ${intake.rejection}`);
    return finish(intake.rejection);
  }
  checkAbort(signal);

  // 1 context
  const ctx = await runContextStage(
    { repoDir: input.repoDir, issue: intake.issue, top: s.contextTop, tokenBudget: s.contextTokenBudget },
    deps,
    signal,
  );
  const bundles = ctx.bundles;
  context = ctx.record;
  notes.push(...ctx.notes);
  checkAbort(signal);

  // 2 report
  await deps.progress('report', deps.llm ? 'extracting and restructuring the report' : 'extracting the report (no LLM)');
  const prompts = deps.llm ? (deps.prompts ?? (await loadAgentPrompts())) : null;
  const reported = await runReport(
    { issue: intake.issue, settings: { maxIssueChars: s.maxIssueChars, maxLlmIssueChars: s.maxLlmIssueChars } },
    { llm: deps.llm, log: deps.log, prompts: prompts ? { report: prompts.report, formatError: prompts.formatError } : undefined },
    signal,
  );
  usage = addUsage(usage, reported.usage);
  report = { reading: reported.reading, facts: reported.facts, bug: reported.bug, notes: reported.notes };
  notes.push(...reported.notes);
  await deps.progress(
    'report',
    `${report.facts.pythonBlocks.length} Python block(s), ${report.reading.expected.length} expected symptom(s)${report.facts.truncated ? ', issue cut' : ''}`,
  );
  checkAbort(signal);
  // No code, no output and no stated expectation: only the reporter can help. With any of them it goes on (code runs,
  // and a model may write a script held to the output or state the report's prose expectation as an assertion).
  if (!hasEvidence(report)) return finish(null);

  // 3 plan (tier 0's completion runs here: the plan needs the completed code's imports)
  await deps.progress('plan', 'probing the environment and planning');
  // No code block, but the traceback shows the statement run against the project (`import timm` in a notebook): it is the code.
  const ranProject = input.workspace?.packages?.length
    ? reportedProjectStatements(report.facts.tracebackModuleLines, input.workspace.packages)
    : [];
  const blocks = report.facts.pythonBlocks.length ? report.facts.pythonBlocks : ranProject.length ? [ranProject.join('\n')] : [];
  const workspace = input.workspace
    ? { hostPath: input.workspace.hostPath, ...(input.workspace.mountPath ? { mountPath: input.workspace.mountPath } : {}) }
    : undefined;
  // The runs' shape is known now: their sandboxes warm while the plan and tier 0's analysis go on.
  if ((blocks.length && s.tier0) || deps.llm) warmRuns(deps.executor, { report: report.reading, settings: s, workspace }, deps.log);
  const reportText = `${intake.issue.title}\n${intake.issue.body}`;
  if (blocks.length) {
    const exports = await (deps.projectExports ?? readProjectExports)(input.workspace);
    snippet = await completeSnippet(
      { blocks, tracebackModuleLines: report.facts.tracebackModuleLines, reportText, packages: input.workspace?.packages, exports },
      { checker: firstChecker },
      signal,
    );
    if (lateLint) {
      const linted = snippet.script;
      // The report replaces pyflakes' alone once it lands (the same pyflakes findings, plus pylint's); a failed
      // or cancelled pylint keeps pyflakes' report, as a missing pylint would. Once skipped (skipLintIfMoot), a report
      // that landed all the same is not used: the notes say pyflakes' alone was.
      const lintSignal = signal ? AbortSignal.any([signal, lintAbort.signal]) : lintAbort.signal;
      // At the lowest CPU priority: it must not slow the runs, and it is often aborted unneeded (a reproduction).
      const lateChecker = createPyflakesChecker({ python: s.staticPython, pylint: true, lowPriority: true });
      lintDone = lateChecker.check(linted, lintSignal).then(
        (full) => {
          if (lintAbort.signal.aborted) return;
          lintLanded = true;
          if (snippet) snippet = { ...snippet, static: full };
        },
        () => undefined,
      );
    }
    if (!report.facts.pythonBlocks.length)
      notes.push(
        `the report has no code block; ran the statement its traceback shows it ran: ${ranProject.map((l) => `\`${l}\``).join(', ')}`,
      );
  }
  const code = snippet?.script ?? '';
  const store = deps.probeStore ?? (s.probeCacheDir ? createDiskProbeStore(s.probeCacheDir) : undefined);
  // The report's setup lines (KERAS_BACKEND…) are set for the probe as its script sets them before its imports, and
  // Keras's backend as the report's words name it where the code sets none (as the env's import proof does).
  const wanted = [...importedModules(code), ...referencedModules(code)];
  const importsKeras = (input.workspace?.packages ?? []).includes('keras') || wanted.some((m) => m.split('.')[0] === 'keras');
  const probeOptions = { store, env: withKerasBackend(reportSetupEnv(code), intake.issue, importsKeras) };
  const probed = await probeEnvironment(deps.executor, wanted, signal, workspace, probeOptions);
  checkAbort(signal);
  if (!probed.probe) {
    infra = `the executor could not run the environment probe (${probed.error ?? 'unknown error'})`;
    return stopAtPlan('failed: the executor cannot run scripts');
  }
  // The project's own packages are in the workspace: one that fails to import is not missing, its import may be the bug.
  const projectPackages = new Set(input.workspace?.packages ?? []);
  probe = withWorkspaceModules(probed.probe, projectPackages);
  environment = environmentRecord(probe, deps.executor.name);
  // Tier 1's prompt shows the environment: the model learns whether the project imports as the report uses it.
  const envState = environmentState(probe, input.workspace);
  environmentFailure = envState.failure;
  if (envState.projectLine) environment.project = envState.projectLine;
  // The project's own import fails where the report shows no such failure: no run here can show the bug.
  const importInput: Omit<EnvImportInput, 'probe' | 'runOutput'> = {
    projectPackages,
    env: input.env ?? null,
    ...(input.envAdvice ? { advice: input.envAdvice } : {}),
    workspaceMount: input.workspace?.mountPath ?? DEFAULT_WORKSPACE_MOUNT,
    expected: report.reading.expected,
    distributionOf: (m) => distributionsForImports([m], loadImportNameTables())[0]?.distribution ?? null,
  };
  envFailure = envImportFailure({ ...importInput, probe, runOutput: null })?.sentence ?? null;
  if (envFailure) return stopAtPlan(`the project does not import in this environment: ${envFailure}`);
  if (snippet) ({ snippet, probe } = snippetForEnv(snippet, { probe, setupEnv: probeOptions.env, code, report }));
  plan = runPlan({ report, code: snippet?.script ?? code, probe });
  const reportPackages = reportPackagesOf(report, probe, projectPackages);
  await deps.progress(
    'plan',
    `${plan.steps.length} steps; data: ${plan.dataStrategy}${plan.blockers.length ? `; blocked: ${plan.blockers.map((b) => b.what).join('; ')}` : ''}`,
  );

  // 4 agent
  await deps.progress('agent', deps.llm ? (s.tier0 ? 'tier 0, then tier 1' : 'tier 1 only (tier 0 off)') : 'tier 0 only (no LLM)');
  // Confirmation runs may start early, in slots tier 0 leaves free while its reproduction waits on a slower candidate.
  const early =
    s.confirmRuns > 0
      ? createEarlyConfirm({ report: report.reading, runs: s.confirmRuns, settings: s }, { executor: deps.executor, workspace }, signal)
      : null;
  const agentInput: AgentInput = {
    report,
    plan,
    bundles,
    snippet,
    environment,
    tier0: s.tier0,
    budget: agentBudget(s, started),
    usageSoFar: usage,
    projectPackages: [...projectPackages],
    reportPackages,
  };
  const agentDeps: AgentDeps = {
    executor: deps.executor,
    workspace,
    llm: deps.llm,
    checker,
    prompts,
    log: deps.log,
    now: deps.now,
    onActivity: (what) => deps.progress('agent', what),
    onAttempt: (a) => deps.progress('agent', `attempt ${a.n} (tier ${a.tier}${a.bundle ? `, bundle ${a.bundle}` : ''}): ${a.outcome}`),
    checkImports: async (modules, sig) =>
      (await missingModules(deps.executor, modules, sig, workspace, probeOptions)).filter((m) => !projectPackages.has(m)),
  };
  agent = await runAgent(
    agentInput,
    { ...agentDeps, ...(early ? { spare: (leader: CandidateRun) => early.spare(leader) } : {}) },
    signal,
  ).catch((err: unknown) => {
    early?.take(null);
    throw err;
  });
  const earlyRuns = early?.take(agent.status === 'reproduced' ? (agent.final?.script ?? null) : null);
  // A run that stopped at an import the env should provide (a declared dependency, the project's extension) is the
  // environment's failure, never a mismatch: the same rule as the probe's.
  if (agent.status !== 'reproduced' && agent.status !== 'exit_infra' && agent.final) {
    const found = envImportFailure({ ...importInput, probe: null, runOutput: agent.final.run.output || agent.final.run.stderr });
    if (found) {
      envFailure = found.sentence;
      await deps.progress('agent', `environment failure: ${found.why}`);
    }
  }
  if (agent.final) {
    const iso = agent.final.run.isolation;
    environment = { ...environment, network: iso.network, sandbox: iso.sandbox };
  }
  checkAbort(signal);
  // A reproduction (or any end the findings cannot change) makes pylint's report moot: its CPU goes to the confirmation.
  skipLintIfMoot();

  // 5 confirm
  const confirmRuns = (final: CandidateRun, early?: typeof earlyRuns) =>
    runConfirm(
      { final, report: agentInput.report.reading, runs: s.confirmRuns, parallel: s.parallelRuns, settings: s, ...(early ? { early } : {}) },
      { executor: deps.executor, workspace },
      signal,
    );
  if (agent.status === 'reproduced' && agent.final && s.confirmRuns > 0) {
    await deps.progress('confirm', `re-running with ${s.confirmRuns} seeds`);
    confirm = await confirmRuns(agent.final, earlyRuns);
    if (confirm.infra) notes.push(`a confirmation run failed for infrastructure reasons: ${confirm.infra}`);
    await deps.progress('confirm', `reproduced ${confirm.reproducedRuns}/${confirm.totalRuns} runs`);
  } else {
    await deps.progress('confirm', 'skipped: nothing reproduced');
  }
  // A check no run reached can only fail a fix: taken out, every run as it was (unreached-checks.ts).
  const trim = async (a: AgentResult, c: ConfirmResult | null): Promise<AgentResult> => {
    const t = await withoutUnreachedChecksOf(a, c);
    if (t) notes.push(t.note);
    return t?.agent ?? a;
  };
  agent = await trim(agent, confirm);

  // 5b candidate fix (issue 41): does the reproduction pass once the bug is fixed? A model's patch, in a scratch copy.
  let candidate: CandidateFixRecord | null = null;
  // Only a run against the project's checkout has library code of its own to patch, and only a model writes a patch:
  // without either the step does not apply (no row in the comment).
  const reproduced = agent.status === 'reproduced' && runOutcome(decisionInput(null)).status === 'reproduced';
  if (s.suggestFix && input.workspace && deps.llm && reproduced && agent.final) {
    // The round's reproduction is held to what gated this step: the outcome reads it, with its confirmation, as reproduced.
    const confirmed = (a: AgentResult, c: ConfirmResult | null) =>
      runOutcome({ ...decisionInput(null), agent: a, confirm: c }).status === 'reproduced';
    const spent = addUsage(usage, agent.usage);
    const step = await candidateFixStep(
      { final: agent.final, confirm, report, bundles, workspace: input.workspace, settings: s, spent, started },
      { ...deps, llm: deps.llm, now },
      { agent, agentInput, agentDeps, confirm: confirmRuns, confirmed },
      signal,
    );
    candidate = step.record;
    // A reproduction written again after a suspect oracle, confirmed and turned green by the same patch, is the run's.
    if (step.adopted) {
      confirm = step.adopted.confirm;
      agent = await trim(step.adopted.agent, confirm);
    }
    usage = addUsage(usage, candidate.usage);
    notes.push(`Candidate fix: ${candidate.summary}.`);
  }
  checkAbort(signal);

  // 6 outcome (publishing is the caller's: the CLI writes files, the App edits its comment)
  if (lintDone && !lintLanded && !lintAbort.signal.aborted)
    await deps.progress('publish', 'waiting for pylint, whose findings can change the verdict');
  await lintDone;
  const evidence = withCandidateFix(finish(null), candidate);
  await deps.progress('publish', `${evidence.outcome.status}: ${evidence.outcome.summary}`);
  return evidence;
}
