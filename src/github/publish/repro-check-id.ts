/**
 * The `external_id` of a reproduction's check run: the issue key and the job, `owner/repo#N@jobId`. The issue part
 * lets "Re-run" find the issue; the job part makes the check run one per job, so a second completion of the same
 * job (a retry, a run handed out twice while Redis was away) edits it instead of adding another. Pure.
 */
export function reproCheckExternalId(issueKey: string, jobId: string): string {
  return `${issueKey}@${jobId}`;
}

/** The issue a reproduction check run's `external_id` names; null when it is not one (older runs lack the job part). */
export function parseReproCheckExternalId(externalId: string): { fullName: string; issueNumber: number } | null {
  const m = /^([^/#@]+\/[^/#@]+)#(\d+)(?:@[A-Za-z0-9_-]+)?$/.exec(externalId);
  return m?.[1] && m[2] ? { fullName: m[1], issueNumber: Number(m[2]) } : null;
}
