import { IssueInput } from '../../types.js';

export interface IntakeResult {
  issue: IssueInput;
  /** Why the issue cannot be worked on at all (empty, not text); null when it can. */
  rejection: string | null;
  notes: string[];
}

/** Binary content shows as NULs or as a high share of replacement/control characters. */
function looksBinary(text: string): boolean {
  if (text.includes('\u0000')) return true;
  const sample = text.slice(0, 20_000);
  if (!sample.length) return false;
  const odd = [...sample].filter((c) => c === '\uFFFD' || (c < ' ' && c !== '\n' && c !== '\r' && c !== '\t')).length;
  return odd / sample.length > 0.1;
}

/**
 * Stage 0, intake: validates the issue the caller (CLI file adapter, GitHub handler) read. The pipeline
 * gets an IssueInput, never a GitHub object.
 */
export function runIntake(input: { issue: unknown }): IntakeResult {
  const parsed = IssueInput.safeParse(input.issue);
  if (!parsed.success) return { issue: { title: '', body: '' }, rejection: 'the issue could not be read (it has no text body)', notes: [] };
  const issue = parsed.data;
  const notes: string[] = [];
  if (looksBinary(issue.body)) {
    return { issue: { ...issue, body: '' }, rejection: 'the issue body is binary data, not text', notes };
  }
  if (!issue.body.trim() && !issue.title.trim()) return { issue, rejection: 'the issue is empty', notes };
  return { issue, rejection: null, notes };
}
