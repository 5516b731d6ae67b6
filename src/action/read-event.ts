import { z } from 'zod';
import { IssueCommentEvent, IssueLabeledEvent } from '../github/webhook-payloads.js';

/**
 * The workflow's event (the webhook payload GitHub writes to GITHUB_EVENT_PATH), read with the App's own
 * payload schemas less `installation`, which a workflow's payload does not carry. Outside data: unknown
 * fields pass; an event RepGen does not handle, or one missing what it needs, is `unsupported`.
 */

const LabeledPayload = IssueLabeledEvent.omit({ installation: true }).extend({ action: z.literal('labeled') });
const CommentPayload = IssueCommentEvent.omit({ installation: true }).extend({ action: z.literal('created') });

export type LabeledPayload = z.infer<typeof LabeledPayload>;
export type CommentPayload = z.infer<typeof CommentPayload>;

export type ActionEvent =
  { kind: 'labeled'; payload: LabeledPayload } | { kind: 'comment'; payload: CommentPayload } | { kind: 'unsupported'; why: string };

/** Pure: the event's name and parsed JSON in, what RepGen should make of it out. */
export function readActionEvent(eventName: string, payload: unknown): ActionEvent {
  const action = (payload as { action?: unknown } | null)?.action;
  if (eventName === 'issues' && action === 'labeled') {
    const parsed = LabeledPayload.safeParse(payload);
    return parsed.success
      ? { kind: 'labeled', payload: parsed.data }
      : { kind: 'unsupported', why: `issues.labeled payload lacks ${path(parsed.error)}` };
  }
  if (eventName === 'issue_comment' && action === 'created') {
    const parsed = CommentPayload.safeParse(payload);
    return parsed.success
      ? { kind: 'comment', payload: parsed.data }
      : { kind: 'unsupported', why: `issue_comment.created payload lacks ${path(parsed.error)}` };
  }
  const name = `${eventName}${typeof action === 'string' ? `.${action}` : ''}`.slice(0, 80);
  return { kind: 'unsupported', why: `RepGen runs on issues.labeled and issue_comment.created, not on ${name}` };
}

function path(error: z.ZodError): string {
  return error.issues[0]?.path.join('.') || 'a required field';
}
