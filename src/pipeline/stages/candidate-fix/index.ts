// 5b candidate fix (issue 41): after a confirmed reproduction against the project's checkout, the model proposes a
// minimal patch of the library; the patch is checked (parsed, bounded, paths policed), applied to a scratch copy of
// the checkout, and the reproduction re-run there with the same seeds. A reproduction that passes with the patch and
// failed without it is fix-sensitive. The diff is data from a model: nothing of it runs on the host.
import { z } from 'zod';
import { outputTail, type CandidateRun, type RunLimitsSettings } from '../../../agent/run-candidate.js';
import type { ContextBundle } from '../../../context/types.js';
import { CancelledError } from '../../../errors.js';
import { type RunResult, type ScriptExecutor, type Workspace } from '../../../exec/types.js';
import { LlmError } from '../../../llm/errors.js';
import type { LlmClient, LlmUsage } from '../../../llm/types.js';
import { addUsage, NO_USAGE } from '../../../llm/usage.js';
import type { Logger } from '../../../log.js';
import { renderPrompt, type Prompt } from '../../../prompts/load-prompts.js';
import type { ReportResult } from '../../../report/index.js';
import { runAgainstChange } from '../../../workspace/fix-run.js';
import { applyFilePatch } from './apply-hunks.js';
import { candidateCode, projectFrames, readProjectSources } from './candidate-prompt.js';
import { DEFAULT_DIFF_LIMITS, parseUnifiedDiff, type FilePatch } from './parse-diff.js';
import { refusedPath } from './path-policy.js';
import type { PatchedCopies } from './scratch-copy.js';
import type { CandidateAttempt, CandidateFixRecord, CandidateRunRecord, ExpectationCheck } from './types.js';
import { candidateSummary, candidateVerdict } from './verdict.js';
import { importCheck, importEach } from './import-check.js';

export { CandidateFixRecord } from './types.js';
export { createPatchedCopies, type PatchedCopies } from './scratch-copy.js';
export { compareWithRealFix } from './compare-fix.js';
export { moduleOf } from './import-check.js';

/** Patches asked for at most in one run: a second only with the first's failure as feedback. */
export const MAX_PATCHES = 2;
/** Tokens (input + output) the step may spend in all, within what the run's own budget has left. */
export const STEP_MAX_TOKENS = 60_000;
/** Output tokens of one answer. */
const ANSWER_MAX_TOKENS = 4_096;
/** Characters of the failing run's output shown (its end: the traceback's innermost frames and the exception). */
const OUTPUT_CHARS = 2000;
/** Runs of the reproduction against one patched copy, with the seeds the unpatched runs used. */
const RUNS_PER_PATCH = 2;

/** The model's answer, as the step reads it: a diff and an optional independent check of the expectation. */
export const CandidateAnswer = z.object({
  diff: z.string().min(1).max(DEFAULT_DIFF_LIMITS.maxChars),
  check: z.string().min(1).max(20_000).nullable(),
});
export type CandidateAnswer = z.infer<typeof CandidateAnswer>;

/** The first ```diff (or ```patch) block and the first ```python block of an answer; zod says what is missing. Pure. */
export function readCandidateAnswer(text: string): { ok: true; value: CandidateAnswer } | { ok: false; why: string } {
  const blocks = [...text.matchAll(/```([A-Za-z]*)[^\n]*\n([\s\S]*?)\n?```/g)].map((m) => ({
    lang: (m[1] ?? '').toLowerCase(),
    body: m[2] ?? '',
  }));
  const diff = blocks.find((b) => b.lang === 'diff' || b.lang === 'patch')?.body ?? blocks.find((b) => /^--- /m.test(b.body))?.body;
  const check = blocks.find((b) => b.lang === 'python' || b.lang === 'py')?.body ?? null;
  const parsed = CandidateAnswer.safeParse({
    diff: diff ? `${diff.replace(/\n*$/, '')}\n` : '',
    check: check?.trim() ? `${check.replace(/\n*$/, '')}\n` : null,
  });
  if (!parsed.success)
    return { ok: false, why: diff ? `the answer's diff is unusable: ${z.prettifyError(parsed.error)}` : 'the answer has no ```diff block' };
  return { ok: true, value: parsed.data };
}

export interface CandidateFixInput {
  /** The confirmed reproduction and the run that showed the bug (its seed, output and reading). */
  final: CandidateRun;
  /** The seeds of the confirmation runs that showed the bug. */
  confirmedSeeds: number[];
  report: ReportResult;
  bundles: ContextBundle[];
  workspace: Workspace & { packages?: string[] };
  settings: RunLimitsSettings;
  /** Characters of code the prompt shows (the failure's functions, then context chunks). @defaultValue 8000 */
  codeChars?: number;
  /** What the run's budget has left for the model, and when its wall clock ends (ms since the epoch). */
  budget: { tokens: number; costUsd: number; deadline?: number };
}

export interface CandidateFixDeps {
  llm: LlmClient;
  executor: ScriptExecutor;
  prompt: Prompt;
  copies: PatchedCopies;
  log: Logger;
  progress?: (message: string) => void | Promise<void>;
  now?: () => number;
}

/** Runs the step; never throws for a model or a patch that fails (those are its findings), only on cancellation. */
export async function runCandidateFix(input: CandidateFixInput, deps: CandidateFixDeps, signal?: AbortSignal): Promise<CandidateFixRecord> {
  const now = deps.now ?? Date.now;
  const started = now();
  const attempts: CandidateAttempt[] = [];
  let usage: LlmUsage = NO_USAGE;
  let notTried: string | null = null;
  const ceiling = Math.min(STEP_MAX_TOKENS, input.budget.tokens);
  const frames = projectFrames(input.final.reading.traceback?.frames ?? [], input.workspace);
  const texts = await readProjectSources(frames, input.workspace, deps.copies).catch(() => new Map<string, string | null>());
  const code = candidateCode({ frames, texts, script: input.final.script, bundle: input.bundles[0], budget: input.codeChars });
  let feedback = '';
  const unpatchedChecks = new Map<string, { outcome: ExpectationCheck['unpatched']; excerpt: string }>();
  for (let n = 1; n <= MAX_PATCHES; n++) {
    const spent = usage.inputTokens + usage.outputTokens;
    if (ceiling - spent < ANSWER_MAX_TOKENS * 2 || input.budget.costUsd - usage.costUsd <= 0) {
      if (n === 1) notTried = `the run's model budget has too little left (${Math.max(0, ceiling - spent)} tokens)`;
      break;
    }
    if (input.budget.deadline !== undefined && now() >= input.budget.deadline) {
      if (n === 1) notTried = "the run's time is spent";
      break;
    }
    await deps.progress?.(`candidate fix ${n}/${MAX_PATCHES}: asking the model for a patch`);
    const content = renderPrompt(deps.prompt, {
      report: renderReport(input.report),
      expected: input.report.bug.expected || '(not stated)',
      script: input.final.script,
      output: outputTail(input.final.run, OUTPUT_CHARS),
      sources: code.sources,
      context: code.context,
      feedback,
    });
    let text: string;
    try {
      const r = await deps.llm.complete({ messages: [{ role: 'user', content }], maxTokens: ANSWER_MAX_TOKENS, temperature: 0 }, signal);
      usage = addUsage(usage, r.usage);
      text = r.text;
    } catch (err) {
      if (signal?.aborted || !(err instanceof LlmError)) throw signal?.aborted ? new CancelledError('the reproduction was cancelled') : err;
      if (n === 1) notTried = `the model did not answer (${err.message.slice(0, 200)})`;
      else deps.log.warn({ error: err.message }, 'the second candidate fix got no answer');
      break;
    }
    const attempt = await tryCandidate(n, text, input, deps, unpatchedChecks, signal).catch((err: unknown): CandidateAttempt => {
      // A step that fails (a copy that cannot be made, a runner that refuses it) is no evidence, never the run's failure.
      if (signal?.aborted || err instanceof CancelledError) throw err;
      const message = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
      deps.log.warn({ error: message }, 'a candidate fix could not be tried');
      return {
        n,
        result: 'no_evidence',
        noEvidence: 'infra',
        reason: `the candidate could not be tried: ${message.slice(0, 300)}`,
        diff: readCandidateAnswer(text).ok ? (readCandidateAnswer(text) as { value: CandidateAnswer }).value.diff : '',
        files: [],
        runs: [],
        check: null,
        importFailure: null,
      };
    });
    attempts.push(attempt);
    await deps.progress?.(`candidate fix ${n}: ${attempt.result.replace('_', ' ')}: ${attempt.reason}`);
    if (attempt.result === 'fix_sensitive' || attempt.result === 'oracle_suspect') break;
    feedback = `\nYour previous candidate (attempt ${n}) did not make the reproduction pass: ${attempt.reason}${
      attempt.runs[0]
        ? `\nThe reproduction's output with it (the last lines):\n\`\`\`text\n${attempt.runs[0].outputExcerpt.slice(-1500)}\n\`\`\``
        : ''
    }\nPropose a different fix.\n`;
  }
  const summary =
    notTried && !attempts.length
      ? { answer: 'not_tried' as const, result: null, summary: `no candidate fix: ${notTried}`, diff: null }
      : candidateSummary(attempts);
  return {
    ...summary,
    attempts,
    usage: { inputTokens: usage.inputTokens, outputTokens: usage.outputTokens, costUsd: usage.costUsd },
    durationMs: Math.max(0, now() - started),
  };
}

export async function tryCandidate(
  n: number,
  text: string,
  input: CandidateFixInput,
  deps: CandidateFixDeps,
  unpatchedChecks: Map<string, { outcome: ExpectationCheck['unpatched']; excerpt: string }>,
  signal?: AbortSignal,
): Promise<CandidateAttempt> {
  const base = { n, runs: [] as CandidateRunRecord[], check: null, importFailure: null };
  const noEvidence = (kind: CandidateAttempt['noEvidence'], reason: string, diff: string, files: string[]): CandidateAttempt => ({
    ...base,
    result: 'no_evidence',
    noEvidence: kind,
    reason,
    diff,
    files,
  });
  const answer = readCandidateAnswer(text);
  if (!answer.ok) return noEvidence('bad_answer', answer.why, '', []);
  const diff = answer.value.diff;
  const parsed = parseUnifiedDiff(diff);
  if (!parsed.ok) return noEvidence('refused', `the patch is refused: ${parsed.why}`, diff, []);
  const files = parsed.files.map((f) => f.path);
  for (const f of parsed.files) {
    const why = refusedPath(f.path);
    if (why) return noEvidence('refused', `the patch is refused: ${f.path} ${why}`, diff, files);
  }
  const copy = await deps.copies.make(input.workspace, files, (originals) => applyAll(parsed.files, originals));
  try {
    if (!copy.ok) return noEvidence('does_not_apply', `the patch does not apply: ${copy.why}`, diff, files);
    const patched = runWorkspace(input.workspace, copy.workspace.hostPath);
    const limits = input.settings;
    const packages = input.workspace.packages ?? [];
    const at = { files, packages, executor: deps.executor, settings: limits };
    let importFailure = await importCheck({ ...at, workspace: patched }, signal);
    // Only a failure the patch brings is the patch's: the same failure without it (Keras under the env's default
    // backend, a folder of the repository's tooling the env never needed) says nothing of the change; the runs decide.
    if (importFailure) {
      const each = (workspace: Workspace) => importEach({ ...at, workspace }, signal);
      const [after, before] = [await each(patched), await each(runWorkspace(input.workspace))];
      const brought = after && before ? [...after].find(([m, why]) => before.get(m) !== why) : undefined;
      if (after && before) importFailure = brought ? `${brought[0]}: ${brought[1]}` : null;
    }
    if (importFailure)
      return { ...noEvidence('breaks_import', `the patched project does not import: ${importFailure}`, diff, files), importFailure };
    const seeds = [...new Set([input.final.seed, ...input.confirmedSeeds])].slice(0, RUNS_PER_PATCH);
    const runs: CandidateRunRecord[] = [];
    for (const seed of seeds) {
      const {
        run: c,
        infra,
        outcome,
      } = await runAgainstChange(
        input.final.script,
        { report: input.report.reading, seed, settings: limits, purpose: 'candidate-fix' },
        { executor: deps.executor, workspace: patched },
        signal,
      );
      runs.push({ seed, outcome, exitCode: c.run.exitCode, outputExcerpt: infra ?? outputTail(c.run, 2000) });
      if (infra) break;
    }
    let check: ExpectationCheck | null = null;
    const script = answer.value.check;
    // The independent check matters only when the reproduction still shows the bug: it says whether the patch made the
    // report's expectation true all the same (then the reproduction's oracle is suspect).
    if (script && runs.length && runs.every((r) => r.outcome === 'reproduces')) {
      let unpatched = unpatchedChecks.get(script);
      if (!unpatched) {
        const r = await runCheck(script, runWorkspace(input.workspace), deps.executor, limits, input.final.seed, signal);
        unpatched = { outcome: checkOutcome(r), excerpt: outputTail(r, 1500) };
        unpatchedChecks.set(script, unpatched);
      }
      let patchedRun: RunResult | null = null;
      if (unpatched.outcome === 'failed') patchedRun = await runCheck(script, patched, deps.executor, limits, input.final.seed, signal);
      check = {
        script,
        unpatched: unpatched.outcome,
        patched: patchedRun ? checkOutcome(patchedRun) : null,
        unpatchedExcerpt: unpatched.excerpt,
        patchedExcerpt: patchedRun ? outputTail(patchedRun, 1500) : '',
      };
    }
    const v = candidateVerdict({ importFailure: null, runs, check });
    return { n, result: v.result, noEvidence: v.noEvidence, reason: v.reason, diff, files, runs, check, importFailure: null };
  } finally {
    await copy.dispose();
  }
}

/** The workspace as a run request takes it (the executor's schema is strict): the checkout's, or the copy's, path and mount. */
function runWorkspace(ws: Workspace, hostPath = ws.hostPath): Workspace {
  return { hostPath, ...(ws.mountPath ? { mountPath: ws.mountPath } : {}) };
}

/** Every file patch applied to its original, or the first that does not apply. Pure. */
function applyAll(
  patches: readonly FilePatch[],
  originals: Map<string, string | null>,
): { ok: true; files: Map<string, string> } | { ok: false; why: string } {
  const files = new Map<string, string>();
  for (const p of patches) {
    const applied = applyFilePatch(originals.get(p.path) ?? null, p);
    if (!applied.ok) return applied;
    files.set(p.path, applied.text);
  }
  return { ok: true, files };
}

function runCheck(
  script: string,
  workspace: Workspace,
  executor: ScriptExecutor,
  settings: RunLimitsSettings,
  seed: number,
  signal?: AbortSignal,
): Promise<RunResult> {
  return executor.run(
    {
      files: [{ path: 'check_expectation.py', content: script }],
      entry: 'check_expectation.py',
      seed,
      env: { REPGEN_SEED: String(seed) },
      limits: { timeoutMs: settings.runTimeoutMs, memoryMb: settings.runMemoryMb, maxOutputBytes: 200_000 },
      labels: { purpose: 'candidate-fix-check' },
      workspace,
    },
    signal,
  );
}

function checkOutcome(r: RunResult): ExpectationCheck['unpatched'] {
  if (r.infra) return 'infra';
  return r.exitCode === 0 && !r.signal && !r.timedOut ? 'passed' : 'failed';
}

function renderReport(r: ReportResult): string {
  const b = r.bug;
  // The expectation is the prompt's own section ({{expected}}): not repeated here.
  return [`Title: ${b.title}`, `Core problem: ${b.coreProblem}`, `Observed: ${b.observed}`].join('\n');
}
