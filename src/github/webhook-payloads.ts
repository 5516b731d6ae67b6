import { z } from 'zod';

/**
 * The subset of webhook payloads RepGen reads. Outside data: parsed permissively (unknown fields pass),
 * and a payload that lacks what we need is logged and ignored, never a crash.
 */

const User = z.object({ login: z.string().min(1), type: z.string().nullish() });

/** What every trigger carries: who, where, which issue. */
export const TriggerEvent = z.object({
  installation: z.object({ id: z.number().int().positive() }),
  repository: z.object({
    name: z.string().min(1),
    full_name: z.string().min(1),
    owner: z.object({ login: z.string().min(1) }),
    clone_url: z.string().min(1),
    default_branch: z.string().min(1),
  }),
  issue: z.object({
    number: z.number().int().positive(),
    html_url: z.string().url(),
    pull_request: z.unknown().optional(),
  }),
  sender: User,
});

export type TriggerEvent = z.infer<typeof TriggerEvent>;

export const IssueLabeledEvent = TriggerEvent.extend({ label: z.object({ name: z.string() }) });
export type IssueLabeledEvent = z.infer<typeof IssueLabeledEvent>;

export const IssueCommentEvent = TriggerEvent.extend({
  comment: z.object({ id: z.number().int().positive(), body: z.string().nullable(), user: User }),
});
export type IssueCommentEvent = z.infer<typeof IssueCommentEvent>;

/** `check_run.rerequested`: the "Re-run" button on RepGen's check run; `external_id` names the issue. */
export const CheckRunRerequestedEvent = z.object({
  installation: z.object({ id: z.number().int().positive() }),
  repository: TriggerEvent.shape.repository.extend({ html_url: z.string().url() }),
  check_run: z.object({ name: z.string(), external_id: z.string().nullable() }),
  sender: User,
});
export type CheckRunRerequestedEvent = z.infer<typeof CheckRunRerequestedEvent>;
