import { classifyLlmError, completeStructured, type LlmClient, type LlmUsage } from '../llm/index.js';
import { NO_USAGE } from '../llm/usage.js';
import { CancelledError } from '../errors.js';
import type { Prompt } from '../prompts/load-prompts.js';
import { renderPrompt } from '../prompts/load-prompts.js';
import type { ReportReading } from '../symptoms/types.js';
import { BugReport, LlmBugReport, type ReportFacts } from './types.js';

const NOT_STATED = /^(?:not (?:stated|specified|given|provided|mentioned|shown)|unknown|unspecified|n\/a|none|null|-|)\.?$/i;
const EXPECTATION = /\b(?:expect(?:ed|ing)?|should|supposed to|instead of|would like)\b/i;

/**
 * What the deterministic report assumes the reporter expected when the report says nothing: a guide for tier 1's
 * prompt, never the reporter's words, so the comment must not quote it as "They expected" ({@link statedExpectation}).
 */
export const INFERRED_EXPECTATION = {
  crash: 'the code runs without raising this error',
  silent: 'training behaves normally (the metrics improve)',
} as const;

/** The expectation as the report states it, '' when it was only assumed (or not stated at all). Pure. */
export function statedExpectation(expected: string): string {
  const e = expected.trim();
  return NOT_STATED.test(e) || Object.values(INFERRED_EXPECTATION).some((x) => x === e) ? '' : e;
}

/** The deterministic BugReport: built from the reading and facts alone (no model). Pure. */
export function deterministicBugReport(title: string, body: string, reading: ReportReading, facts: ReportFacts): BugReport {
  const prose = body.replace(/```[\s\S]*?```/g, ' ');
  const sentences = prose
    .split(/(?<=[.!?])\s+|\n+/)
    .map((s) => s.trim())
    .filter((s) => s.length > 3 && !s.startsWith('#'));
  const crash = reading.expected.find((s) => s.exception);
  const coreProblem =
    title.trim() || (crash?.exception ? `${crash.exception.type}: ${crash.exception.message}` : (sentences[0] ?? 'not stated'));
  const observed = reading.expected.length
    ? reading.expected
        .map((s) => (s.exception ? `${s.exception.type}: ${s.exception.message}` : `${s.kind.replace(/_/g, ' ')}: ${s.evidence}`))
        .join('\n')
    : reading.outputText.trim().slice(0, 500) || 'not stated';
  const said = sentences.find((s) => EXPECTATION.test(s));
  const expected = said ?? (crash ? INFERRED_EXPECTATION.crash : reading.expected.length ? INFERRED_EXPECTATION.silent : 'not stated');
  const steps: string[] = [];
  for (const m of prose.matchAll(/^\s*(?:\d+[.)]|[-*])\s+(.{5,200})$/gm)) if (steps.length < 8) steps.push((m[1] ?? '').trim());
  if (facts.pythonBlocks.length)
    steps.push(`run the report's Python code (${facts.pythonBlocks.length} block${facts.pythonBlocks.length === 1 ? '' : 's'}, in order)`);
  return BugReport.parse({
    title,
    coreProblem,
    observed,
    expected,
    steps,
    environment: {
      framework: facts.frameworks[0] ?? null,
      versions: reading.versions,
      hardware: facts.hardwareHints.length ? facts.hardwareHints.join(', ') : 'not stated',
      data: facts.dataDescriptions.length ? facts.dataDescriptions.slice(0, 6).join('; ') : 'not stated',
    },
    source: 'deterministic',
  });
}

export interface RestructureDeps {
  llm: LlmClient;
  prompts: { report: Prompt; formatError: Prompt };
}

/**
 * LLM restructuring: the model fills core problem / observed / expected / steps / environment from the
 * issue; the deterministic fields (versions, title) stay ours. A malformed answer is fed back once, then
 * the deterministic report is used and the note says why. Only cancellation propagates.
 */
export async function restructureWithLlm(
  input: { title: string; body: string; fallback: BugReport; maxBodyChars: number },
  deps: RestructureDeps,
  signal?: AbortSignal,
): Promise<{ bug: BugReport; usage: LlmUsage; note: string | null }> {
  const body =
    input.body.length > input.maxBodyChars
      ? `${input.body.slice(0, input.maxBodyChars)}\n[… issue cut at ${input.maxBodyChars} characters]`
      : input.body;
  const prompt = renderPrompt(deps.prompts.report, {
    title: input.title,
    body,
    extracted: JSON.stringify({ observed: input.fallback.observed, environment: input.fallback.environment }, null, 2),
  });
  try {
    const result = await completeStructured(deps.llm, { messages: [{ role: 'user', content: prompt }], maxTokens: 1500 }, LlmBugReport, {
      signal,
      feedback: (error) => renderPrompt(deps.prompts.formatError, { error, format: 'one JSON object in a ```json block' }),
    });
    if (!result.ok)
      return {
        bug: input.fallback,
        usage: result.usage,
        note: `the model's restructured report was unusable twice (${result.error.split('\n')[0]}); used the deterministic one`,
      };
    const v = result.value;
    const f = input.fallback;
    const bug = BugReport.parse({
      title: f.title,
      coreProblem: v.coreProblem || f.coreProblem,
      observed: v.observed || f.observed,
      expected: v.expected || f.expected,
      steps: v.steps.length ? v.steps : f.steps,
      environment: {
        framework: v.environment.framework ?? f.environment.framework,
        versions: f.environment.versions,
        hardware: v.environment.hardware || f.environment.hardware,
        // The model often answers "not stated" when the data is in the code; the code's facts win then.
        data: v.environment.data && !NOT_STATED.test(v.environment.data.trim()) ? v.environment.data : f.environment.data,
      },
      source: 'llm',
    });
    return { bug, usage: result.usage, note: null };
  } catch (err) {
    if (err instanceof CancelledError || classifyLlmError(err) === 'cancelled')
      throw err instanceof CancelledError ? err : new CancelledError('cancelled');
    return {
      bug: input.fallback,
      usage: NO_USAGE,
      note: `the model could not restructure the report (${err instanceof Error ? err.message : String(err)}); used the deterministic one`,
    };
  }
}
