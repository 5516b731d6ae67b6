// Issue 41 item 2: a reproduction that still fails with a patch under which an independent check of the report's
// expectation passes holds the code to something narrower than the report. Tier 1 goes back once with that finding
// as its first message: one round on the first context bundle, within what the run's caps leave. The finding's
// pieces (the model's check and diff, the runs' output) are data put into a prompt; nothing of them runs here.
import { NO_USAGE } from '../llm/usage.js';
import { renderPrompt, type Prompt } from '../prompts/load-prompts.js';
import type { AgentDeps, AgentInput } from './index.js';
import { runTier1, type Tier1Result } from './tier1.js';
import { tier1DepsOf } from './tier1-deps.js';

/** What the candidate fix found against the reproduction, as the loop is told it. */
export interface OracleFinding {
  /** The suspect reproduction: its attempt's number and its script. */
  attempt: number;
  script: string;
  /** What the report says should happen. */
  expected: string;
  /** The reproduction's output with the patch applied. */
  output: string;
  /** The independent check that passes with the patch (and fails without), and its output with the patch. */
  check: string;
  checkOutput: string;
  diff: string;
}

/** Characters of each output shown, and of the diff. */
const OUTPUT_CHARS = 2000;
const DIFF_CHARS = 6000;

/** A text put between fences: a run of three backticks in it (a script's print, a model's text) cannot close one. */
export function fenced(text: string, max: number): string {
  const cut = text.length > max ? `…${text.slice(-max)}` : text;
  return cut.replace(/`{3,}/g, (m) => m.split('').join('\u200b')).replace(/\n+$/, '') || '(nothing)';
}

/** The message that sends the loop back (prompts/oracle-reattempt.md). Pure. */
export function oracleFindingMessage(prompt: Prompt, f: OracleFinding): string {
  return renderPrompt(prompt, {
    attempt: f.attempt,
    // The report's words sit outside a fence: their backticks are broken all the same, so they cannot open one.
    expected: f.expected.trim() ? fenced(f.expected.trim(), OUTPUT_CHARS) : '(not stated in words; see the check)',
    output: fenced(f.output, OUTPUT_CHARS),
    check: fenced(f.check, OUTPUT_CHARS * 2),
    check_output: fenced(f.checkOutput, OUTPUT_CHARS),
    diff: fenced(f.diff, DIFF_CHARS),
  });
}

export interface ReattemptInput extends Omit<AgentInput, 'snippet' | 'tier0'> {
  finding: OracleFinding;
  /** The attempts the run made so far (tier 0's and tier 1's): numbers continue after them, tier 1's count against the cap. */
  attemptsSoFar: readonly { n: number; tier: 0 | 1 }[];
}

/**
 * The round: tier 1 with the finding in place of a first refine, on the first bundle, at most `attemptsPerBundle`
 * attempts and never past the run's attempt cap; `usageSoFar` is everything the run spent, so the token, cost and
 * wall-clock caps hold as in the first round. Ends with exit_budget and no attempt when nothing is left.
 */
export async function runOracleReattempt(
  input: ReattemptInput,
  deps: AgentDeps & { findingPrompt: Prompt },
  signal?: AbortSignal,
): Promise<Tier1Result> {
  const used = input.attemptsSoFar.filter((a) => a.tier === 1).length;
  const left = input.budget.maxAttempts - used;
  const none = (reason: string): Tier1Result => ({ status: 'exit_budget', reason, attempts: [], final: null, usage: NO_USAGE });
  if (left <= 0) return none(`the run's cap of ${input.budget.maxAttempts} tier-1 attempts is reached (${used} made)`);
  if (!deps.llm || !deps.prompts) return { ...none('there is no model to write the script again'), status: 'not_reproduced' };
  const message = oracleFindingMessage(deps.findingPrompt, input.finding);
  return runTier1(
    {
      report: input.report,
      plan: input.plan,
      bundles: input.bundles.slice(0, 1),
      snippet: input.finding.script,
      environment: input.environment,
      budget: { ...input.budget, maxBundles: 1, maxAttempts: Math.min(left, input.budget.attemptsPerBundle) },
      firstAttempt: Math.max(0, ...input.attemptsSoFar.map((a) => a.n)),
      usageSoFar: input.usageSoFar,
      missingModules: input.plan.missingModules,
      ...(input.projectPackages ? { projectPackages: input.projectPackages } : {}),
      ...(input.reportPackages ? { reportPackages: input.reportPackages } : {}),
      resume: { answer: `\`\`\`python\n${input.finding.script}\`\`\``, message },
    },
    tier1DepsOf({ ...deps, llm: deps.llm, prompts: deps.prompts }),
    signal,
  );
}
