import type { LlmClient, LlmUsage } from '../llm/types.js';
import { NO_USAGE } from '../llm/usage.js';
import type { Logger } from '../log.js';
import type { Prompt } from '../prompts/load-prompts.js';
import { readReport } from '../symptoms/index.js';
import { extractFacts } from './extract-facts.js';
import { deterministicBugReport, restructureWithLlm } from './restructure.js';
import { modelOracles } from './verify-model-oracles.js';
import type { IssueInput, ReportResult } from './types.js';

export * from './types.js';
export { extractFacts } from './extract-facts.js';
export { deterministicBugReport, statedExpectation } from './restructure.js';
export { assessEvidence, hasEvidence, type ReportEvidence } from './assess-evidence.js';
export { modelOracles, verifiedSpans } from './verify-model-oracles.js';

export interface ReportSettings {
  /** Characters of the issue read; the rest is cut (and the cut is said). @defaultValue 200000 */
  maxIssueChars: number;
  /** Characters of the issue sent to the model. @defaultValue 30000 */
  maxLlmIssueChars: number;
}

export interface ReportDeps {
  llm: LlmClient | null;
  log: Logger;
  prompts?: { report: Prompt; formatError: Prompt };
}

/**
 * The issue as one markdown document with its title as a heading, the form the reader expects. A report with no
 * title (a file given to the CLI) whose first non-empty line is no `# ` heading has that line as its title, as a
 * person reads it: a sub-heading's text (`## Bug: …`) or a plain first line, never a code fence.
 */
function asMarkdown(issue: IssueInput, body: string): string {
  const title = issue.title.trim();
  const text = body.replace(/^(?:[ \t]*\n)+/, '');
  if (/^#\s/.test(text)) return text;
  if (title) return `# ${title}\n\n${body}`;
  const first = text.split('\n', 1)[0] ?? '';
  const line = first.replace(/^#{2,6}\s+/, '').trim();
  if (!line || /^(?:```|~~~|\||<)/.test(first.trim())) return body;
  // The line stays in the body too: it may be the report's first sentence as much as its title.
  return `# ${line}\n\n${text}`;
}

/**
 * Stage 2, report: deterministic extraction (code blocks, tracebacks, versions, hardware hints, data
 * descriptions) and, with an LLM, a restructured BugReport. Without one, the deterministic part alone.
 */
export async function runReport(
  input: { issue: IssueInput; settings: ReportSettings },
  deps: ReportDeps,
  signal?: AbortSignal,
): Promise<ReportResult & { usage: LlmUsage }> {
  const notes: string[] = [];
  const raw = input.issue.body.replace(/\u0000/g, '');
  const truncated = raw.length > input.settings.maxIssueChars;
  let body = raw;
  if (truncated) {
    // Cut at a line end, and close an open fence so a cut code block does not swallow what follows.
    body = raw.slice(0, input.settings.maxIssueChars);
    body = body.slice(0, Math.max(body.lastIndexOf('\n'), 0) || body.length);
    if ((body.match(/^\s*```/gm) ?? []).length % 2 === 1) body += '\n```';
    notes.push(`the issue is ${raw.length} characters long; only the first ${body.length} were read`);
  }
  const markdown = asMarkdown(input.issue, body);
  const reading = readReport(markdown);
  if (!reading.title && input.issue.title) reading.title = input.issue.title;
  const facts = await extractFacts(markdown, reading, { bodyChars: raw.length, truncated });
  const title = reading.title || input.issue.title;
  const fallback = deterministicBugReport(title, markdown, reading, facts);
  if (!deps.llm || !deps.prompts) return { reading, facts, bug: fallback, notes, usage: NO_USAGE };
  const restructured = await restructureWithLlm(
    { title, body: markdown, fallback, maxBodyChars: input.settings.maxLlmIssueChars },
    { llm: deps.llm, prompts: deps.prompts },
    signal,
  );
  if (restructured.note) {
    notes.push(restructured.note);
    deps.log.warn({ note: restructured.note }, 'report restructuring fell back to the deterministic report');
  }
  // The deterministic reader found no symptom: the model's observed / expected, where they quote the report, are the oracle.
  const fromModel = restructured.note ? null : modelOracles(restructured.bug, markdown, reading);
  if (fromModel?.symptoms.length) {
    reading.expected.push(...fromModel.symptoms);
    reading.expectations = [...(reading.expectations ?? []), ...fromModel.expectations];
    notes.push(
      `the report's symptom is read from the model's restructured report, checked against the report's words: ` +
        fromModel.spans.map((s) => `"${s.length > 160 ? `${s.slice(0, 157)}…` : s}"`).join('; '),
    );
  }
  return { reading, facts, bug: restructured.bug, notes, usage: restructured.usage };
}
