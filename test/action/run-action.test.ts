import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { main } from '../../src/action.js';
import { ActionSetupError } from '../../src/action/check-sandbox.js';
import { silentLogger } from '../../src/log.js';
import { FakeExecutor } from '../fakes/fake-executor.js';
import { simulate } from '../fakes/repro-fixtures.js';
import { startFakeGithub, type FakeGithub } from '../github/fake-github.js';
import { commentPayload, labeledPayload } from '../github/webhook-fixtures.js';
import { makeHostileFiles } from '../helpers/hostile-files.js';
import { actionRun, headOf, LINEAR_CRASH_ISSUE, makeCheckout } from './action-harness.js';

// The action's entry point, in-process with a fake executor (fast), against our fake GitHub at the HTTP level.
// Payloads are @octokit/webhooks-examples' (Codertocat/Hello-World), as GitHub writes them to GITHUB_EVENT_PATH.
const ADMIN = { login: 'Codertocat' };
const READER = { login: 'reader' };
const SPEED = { REPGEN_PYLINT: 'false', REPGEN_CONFIRM_RUNS: '1' };

let gh: FakeGithub;
let workspace: string;
let issue = 200;

beforeAll(async () => {
  gh = await startFakeGithub({ roles: { Codertocat: 'admin', reader: 'read', triager: 'triage' }, issues: {} });
  workspace = await makeCheckout();
});
afterAll(async () => gh?.close());
beforeEach(() => {
  issue += 1;
  gh.options.config = null;
  gh.options.issues = { [issue]: LINEAR_CRASH_ISSUE };
});

const commentsOn = (n: number) => [...gh.comments.values()].filter((c) => c.issue === n);

async function runEntry(
  event: string,
  payload: unknown,
  opts: { inputs?: Record<string, string>; executor?: FakeExecutor; ws?: string } = {},
) {
  const run = await actionRun({
    event,
    payload,
    apiUrl: gh.url,
    workspace: opts.ws ?? workspace,
    inputs: { 'llm-provider': 'none', ...opts.inputs },
    env: SPEED,
  });
  const executor = opts.executor ?? new FakeExecutor(simulate);
  const lines: string[] = [];
  const code = await main(run.env, { executor, log: silentLogger, minEditIntervalMs: 0 }, (l) => void lines.push(l));
  return { code, executor, outputs: await run.outputs(), log: lines.join(''), run };
}

describe('issues.labeled (a real payload) runs the pipeline and publishes like the App', () => {
  it("posts the result comment, a check run on the checkout's commit, the repro:confirmed label, and the outputs", async () => {
    const { code, outputs, executor } = await runEntry('issues', labeledPayload('needs-repro', { issueNumber: issue, sender: ADMIN }));
    expect(code).toBe(0);
    expect(executor.requests.length).toBeGreaterThan(0);
    const comments = commentsOn(issue);
    expect(comments).toHaveLength(1);
    expect(comments[0]?.body).toContain('<!-- repgen:progress job=action-4242-1 -->');
    expect(comments[0]?.body).toMatch(/reproduced/i);
    expect(comments[0]?.body).toContain('mat1 and mat2 shapes cannot be multiplied');
    expect(comments[0]?.body).not.toContain('ghs_workflowTokenForTests');
    expect(gh.callsTo('POST', new RegExp(`/issues/${issue}/reactions$`)).map((c) => c.body)).toEqual([{ content: 'eyes' }]);
    expect(gh.checkRuns.at(-1)).toMatchObject({
      name: 'RepGen reproduction',
      head_sha: headOf(workspace),
      status: 'completed',
      conclusion: 'success',
      external_id: `codertocat/hello-world#${issue}`,
      output: { title: 'Bug reproduced' },
    });
    expect(gh.labels.get(issue)).toEqual(['repro:confirmed']);
    expect(outputs).toMatchObject({ status: 'ran', verdict: 'reproduced', 'comment-url': comments[0]?.html_url });
    expect(await readFile(outputs['repro-path'] ?? '', 'utf8')).toContain('nn.Linear(5, 2)');
    expect(JSON.parse(await readFile(outputs['evidence-path'] ?? '', 'utf8')).ref).toMatchObject({
      repo: 'Codertocat/Hello-World',
      sha: headOf(workspace),
    });
    // Every script run carried the checkout, read-only and importable.
    expect(executor.requests.every((r) => r.workspace?.hostPath === workspace)).toBe(true);
  });

  it('ignores another label, and a label added by a bot, without a call that writes', async () => {
    const other = await runEntry('issues', labeledPayload('bug', { issueNumber: issue, sender: ADMIN }));
    const bot = await runEntry(
      'issues',
      labeledPayload('needs-repro', { issueNumber: issue, sender: { login: 'dependabot[bot]', type: 'Bot' } }),
    );
    expect([other.outputs.status, bot.outputs.status]).toEqual(['ignored', 'ignored']);
    expect([other.code, bot.code]).toEqual([0, 0]);
    expect(other.executor.requests).toEqual([]);
    expect(commentsOn(issue)).toEqual([]);
    expect(gh.calls.filter((c) => c.method !== 'GET' && c.path.includes(`/issues/${issue}`))).toEqual([]);
  });

  it('takes the trigger-label input over the default', async () => {
    const { outputs } = await runEntry('issues', labeledPayload('repro-me', { issueNumber: issue, sender: ADMIN }), {
      inputs: { 'trigger-label': 'repro-me' },
    });
    expect(outputs.status).toBe('ran');
  });
});

describe('issue_comment.created (a real payload)', () => {
  it('refuses a user without write access once per person and issue, and runs nothing', async () => {
    const first = await runEntry('issue_comment', commentPayload('/repgen', { issueNumber: issue, sender: READER }));
    const again = await runEntry('issue_comment', commentPayload('/repgen', { issueNumber: issue, sender: READER }));
    const triager = await runEntry('issue_comment', commentPayload('/repgen', { issueNumber: issue, sender: { login: 'triager' } }));
    expect([first.outputs.status, again.outputs.status, triager.outputs.status]).toEqual(['refused', 'refused', 'refused']);
    expect([first.code, again.code]).toEqual([0, 0]);
    expect([first, again, triager].flatMap((r) => r.executor.requests)).toEqual([]);
    const bodies = commentsOn(issue).map((c) => c.body);
    expect(bodies).toHaveLength(2);
    expect(bodies[0]).toContain('Sorry, reader');
    expect(bodies[1]).toContain('Sorry, triager');
    expect(gh.checkRuns.filter((r) => String(r.external_id).endsWith(`#${issue}`))).toEqual([]);
    expect(gh.labels.get(issue)).toBeUndefined();
    expect(gh.callsTo('POST', /reactions/).filter((c) => c.path.includes(`/issues/${issue}/`))).toEqual([]);
  });

  it('lets triage trigger when .github/repgen.yml lists it', async () => {
    gh.options.config = 'trigger: [triage, write, maintain, admin]\n';
    const { outputs } = await runEntry('issue_comment', commentPayload('/repgen', { issueNumber: issue, sender: { login: 'triager' } }));
    expect(outputs.status).toBe('ran');
  });

  it('/repgen --ref checks out that ref with the workflow token and tests it', async () => {
    const payload = commentPayload('/repgen --ref master', { issueNumber: issue, sender: ADMIN, cloneUrl: workspace });
    const { outputs, executor } = await runEntry('issue_comment', payload);
    expect(outputs.status).toBe('ran');
    const used = executor.requests.find((r) => r.workspace)?.workspace?.hostPath ?? '';
    expect(used).not.toBe(workspace);
    expect(used).toContain('ref-checkout');
    expect(gh.checkRuns.at(-1)).toMatchObject({ head_sha: headOf(workspace) });
    // The reaction goes on the comment that asked.
    expect(gh.callsTo('POST', /\/issues\/comments\/\d+\/reactions$/).at(-1)?.body).toEqual({ content: 'eyes' });
  });

  it('/repgen --ref to a ref that does not exist says so on the issue, and runs nothing', async () => {
    const { outputs, executor, code } = await runEntry(
      'issue_comment',
      commentPayload('/repgen --ref no-such-branch', { issueNumber: issue, sender: ADMIN, cloneUrl: workspace }),
    );
    expect(outputs.status).toBe('bad_ref');
    expect(code).toBe(0);
    expect(executor.requests).toEqual([]);
    expect(commentsOn(issue).at(-1)?.body).toContain('the ref `no-such-branch` does not exist');
  });

  it('answers help and unknown commands, ignores plain comments and bots', async () => {
    const help = await runEntry('issue_comment', commentPayload('/repgen --frobnicate', { issueNumber: issue, sender: ADMIN }));
    const plain = await runEntry('issue_comment', commentPayload('thanks, /repgen later maybe', { issueNumber: issue, sender: ADMIN }));
    const bot = await runEntry(
      'issue_comment',
      commentPayload('/repgen', { issueNumber: issue, sender: { login: 'repgen[bot]', type: 'Bot' } }),
    );
    expect([help.outputs.status, plain.outputs.status, bot.outputs.status]).toEqual(['help', 'ignored', 'ignored']);
    expect(commentsOn(issue).map((c) => c.body)).toEqual([expect.stringContaining('unknown option `--frobnicate`')]);
  });

  it('a bad .github/repgen.yml is reported to a permitted user and nothing runs', async () => {
    gh.options.config = 'gpus: 2\n';
    const { outputs, executor } = await runEntry('issue_comment', commentPayload('/repgen', { issueNumber: issue, sender: ADMIN }));
    expect(outputs.status).toBe('bad_config');
    expect(executor.requests).toEqual([]);
    expect(commentsOn(issue)[0]?.body).toContain('`gpus`: is not a known setting');
  });
});

describe('runner set-up failures are said on the issue and fail the step', () => {
  it('a checkout that kept the workflow token is refused before any script runs', async () => {
    const ws = await makeCheckout({ extraheader: true });
    const { code, outputs, executor, log } = await runEntry(
      'issues',
      labeledPayload('needs-repro', { issueNumber: issue, sender: ADMIN }),
      { ws },
    );
    expect(code).toBe(1);
    expect(outputs.status).toBe('setup_failed');
    expect(executor.requests).toEqual([]);
    expect(commentsOn(issue)[0]?.body).toContain('persist-credentials: false');
    expect(log).toMatch(/^::error title=RepGen::.*persist-credentials/m);
  });

  it('a python input that is not a Python (/bin/true) is refused before any script runs', async () => {
    const { code, outputs, executor } = await runEntry('issues', labeledPayload('needs-repro', { issueNumber: issue, sender: ADMIN }), {
      inputs: { python: '/bin/true' },
    });
    expect(code).toBe(1);
    expect(outputs.status).toBe('setup_failed');
    expect(executor.requests).toEqual([]);
    expect(commentsOn(issue)[0]?.body).toContain(
      "the python input '/bin/true' is not a Python interpreter: asked for its version, it printed nothing",
    );
  });

  it('an event file that is a FIFO or a device is an error naming it, at once, never a hang or a read without end', async () => {
    const h = makeHostileFiles();
    for (const [path, what] of [
      [h.fifo, 'a named pipe \\(FIFO\\)'],
      ['/dev/zero', 'a character device'],
    ] as const) {
      const run = await actionRun({
        event: 'issues',
        payload: labeledPayload('needs-repro', { issueNumber: issue, sender: ADMIN }),
        apiUrl: gh.url,
        workspace,
      });
      const lines: string[] = [];
      const env = { ...run.env, GITHUB_EVENT_PATH: path };
      expect(await main(env, { executor: new FakeExecutor(simulate), log: silentLogger }, (l) => void lines.push(l))).toBe(1);
      expect(lines.join('')).toMatch(
        new RegExp(`^::error title=RepGen::the event payload GITHUB_EVENT_PATH='.*' is ${what}, not a regular file\\n$`),
      );
    }
  });

  it('a sandbox that cannot start names the AppArmor sysctl, and nothing runs', async () => {
    const run = await actionRun({
      event: 'issues',
      payload: labeledPayload('needs-repro', { issueNumber: issue, sender: ADMIN }),
      apiUrl: gh.url,
      workspace,
      inputs: { 'llm-provider': 'none' },
      env: SPEED,
    });
    const lines: string[] = [];
    const checkSandbox = async () => {
      throw new ActionSetupError(
        'no sandbox: bubblewrap failed: setting up uid map: Permission denied. AppArmor restricts unprivileged user namespaces on this runner; add a step before RepGen: `sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0`',
      );
    };
    const code = await main(run.env, { log: silentLogger, checkSandbox, minEditIntervalMs: 0 }, (l) => void lines.push(l));
    expect(code).toBe(1);
    expect((await run.outputs()).status).toBe('setup_failed');
    expect(commentsOn(issue)[0]?.body).toMatch(/could not run on this runner: .*apparmor_restrict_unprivileged_userns=0/s);
    expect(gh.checkRuns.filter((r) => String(r.external_id).endsWith(`#${issue}`))).toEqual([]);
  });
});

describe('bin/action.js, as the runner starts it (node, env only)', () => {
  it("refuses a reader's /repgen with no run, and writes the outputs", async () => {
    const run = await actionRun({
      event: 'issue_comment',
      payload: commentPayload('/repgen', { issueNumber: issue, sender: { login: 'stranger' } }),
      apiUrl: gh.url,
      workspace,
    });
    const { code, out } = await new Promise<{ code: number | null; out: string }>((resolve) => {
      const child = spawn(process.execPath, ['bin/action.js'], { env: run.env, stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      child.stderr.on('data', (d: Buffer) => (out += d.toString()));
      child.on('close', (c) => resolve({ code: c, out }));
    });
    expect(out).toContain('RepGen: refused');
    expect(code).toBe(0);
    expect(await run.outputs()).toMatchObject({ status: 'refused', verdict: '' });
    expect(commentsOn(issue).map((c) => c.body)).toEqual([expect.stringContaining('Sorry, stranger')]);
  });
});
