import { createHmac, generateKeyPairSync, randomUUID } from 'node:crypto';
import examples from '@octokit/webhooks-examples' with { type: 'json' };

/**
 * Real webhook payloads from @octokit/webhooks-examples, adjusted only where a case needs it (the label's
 * name, the comment body, an installation id the example lacks), and signed like GitHub signs them.
 */
type Example = { name: string; examples: Record<string, unknown>[] };
const all = examples as unknown as Example[];

function example(name: string, action: string): Record<string, unknown> {
  const found = all.find((e) => e.name === name)?.examples.find((x) => x.action === action);
  if (!found) throw new Error(`no ${name}.${action} example`);
  return structuredClone(found);
}

export interface PayloadOverrides {
  issueNumber?: number;
  sender?: { login: string; type?: string };
  cloneUrl?: string;
  installationId?: number;
}

function adjust(p: Record<string, unknown>, o: PayloadOverrides): Record<string, unknown> {
  const payload = p as {
    installation?: { id: number };
    issue: { number: number; html_url: string };
    sender: { login: string; type: string };
    repository: { clone_url: string };
  };
  payload.installation = { id: o.installationId ?? 1 };
  if (o.issueNumber) {
    payload.issue.number = o.issueNumber;
    payload.issue.html_url = payload.issue.html_url.replace(/\/\d+$/, `/${o.issueNumber}`);
  }
  if (o.sender) payload.sender = { ...payload.sender, login: o.sender.login, type: o.sender.type ?? 'User' };
  if (o.cloneUrl) payload.repository.clone_url = o.cloneUrl;
  return p;
}

export function labeledPayload(label: string, o: PayloadOverrides = {}): Record<string, unknown> {
  const p = example('issues', 'labeled') as { label: { name: string } };
  p.label.name = label;
  return adjust(p as unknown as Record<string, unknown>, o);
}

export function commentPayload(
  body: string,
  o: PayloadOverrides & { commentUser?: { login: string; type?: string } } = {},
): Record<string, unknown> {
  const p = example('issue_comment', 'created') as { comment: { body: string; user: { login: string; type: string } } };
  p.comment.body = body;
  const adjusted = adjust(p as unknown as Record<string, unknown>, o) as {
    comment: { user: { login: string; type: string } };
    sender: { login: string; type: string };
  };
  adjusted.comment.user = { ...adjusted.comment.user, ...(o.commentUser ?? { login: adjusted.sender.login, type: adjusted.sender.type }) };
  return adjusted as unknown as Record<string, unknown>;
}

export function sign(secret: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

/** POSTs a webhook like GitHub does; `signature: null` sends none, a string sends that one. */
export async function postWebhook(
  url: string,
  event: string,
  payload: unknown,
  opts: { secret: string; deliveryId?: string; signature?: string | null },
): Promise<{ status: number; deliveryId: string; ms: number }> {
  const body = JSON.stringify(payload);
  const deliveryId = opts.deliveryId ?? randomUUID();
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'x-github-event': event,
    'x-github-delivery': deliveryId,
    'user-agent': 'GitHub-Hookshot/test',
  };
  const signature = opts.signature === undefined ? sign(opts.secret, body) : opts.signature;
  if (signature !== null) headers['x-hub-signature-256'] = signature;
  const t0 = performance.now();
  const res = await fetch(url, { method: 'POST', headers, body });
  await res.text();
  return { status: res.status, deliveryId, ms: performance.now() - t0 };
}

let key: string | null = null;
/** A throwaway RSA key for the App's JWTs (the fake GitHub does not check them). */
export function testPrivateKey(): string {
  key ??= generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs1', format: 'pem' }).toString();
  return key;
}

/** check_run.rerequested, pointed at RepGen's check run for `issueNumber` (as RepGen writes external_id). */
export function checkRunRerequestedPayload(issueNumber: number, o: PayloadOverrides & { name?: string } = {}): Record<string, unknown> {
  const p = example('check_run', 'rerequested') as {
    check_run: { name: string; external_id: string };
    installation?: { id: number };
    sender: { login: string; type: string };
    repository: { full_name: string };
  };
  p.check_run.name = o.name ?? 'RepGen reproduction';
  p.check_run.external_id = `${p.repository.full_name.toLowerCase()}#${issueNumber}`;
  p.installation = { id: o.installationId ?? 1 };
  if (o.sender) p.sender = { ...p.sender, login: o.sender.login, type: o.sender.type ?? 'User' };
  return p as unknown as Record<string, unknown>;
}

/** pull_request.opened / synchronize / reopened from the real examples, with the description and head a case needs. */
export function pullRequestPayload(
  action: 'opened' | 'synchronize' | 'reopened' | 'closed',
  o: PayloadOverrides & { body: string | null; number?: number; headSha?: string; headRef?: string },
): Record<string, unknown> {
  const p = example('pull_request', action) as {
    number: number;
    installation?: { id: number };
    pull_request: { number: number; body: string | null; html_url: string; head: { sha: string; ref: string } };
    sender: { login: string; type: string };
    repository: { clone_url: string };
  };
  p.installation = { id: o.installationId ?? 1 };
  p.pull_request.body = o.body;
  if (o.number) {
    p.number = o.number;
    p.pull_request.number = o.number;
    p.pull_request.html_url = p.pull_request.html_url.replace(/\/\d+$/, `/${o.number}`);
  }
  if (o.headSha) p.pull_request.head.sha = o.headSha;
  if (o.headRef) p.pull_request.head.ref = o.headRef;
  if (o.sender) p.sender = { ...p.sender, login: o.sender.login, type: o.sender.type ?? 'User' };
  if (o.cloneUrl) p.repository.clone_url = o.cloneUrl;
  return p as unknown as Record<string, unknown>;
}

/**
 * issue_comment.created on a pull request: the examples hold only issue comments, so the real one gets the
 * `issue.pull_request` object GitHub adds when the "issue" is a PR.
 */
export function prCommentPayload(body: string, o: PayloadOverrides & { prNumber: number }): Record<string, unknown> {
  const p = commentPayload(body, { ...o, issueNumber: o.prNumber }) as { issue: { html_url: string; pull_request?: unknown } };
  p.issue.html_url = p.issue.html_url.replace(/\/issues\/(\d+)$/, '/pull/$1');
  const url = p.issue.html_url;
  p.issue.pull_request = {
    url: url.replace('https://github.com/', 'https://api.github.com/repos/').replace('/pull/', '/pulls/'),
    html_url: url,
    diff_url: `${url}.diff`,
    patch_url: `${url}.patch`,
    merged_at: null,
  };
  return p as unknown as Record<string, unknown>;
}
