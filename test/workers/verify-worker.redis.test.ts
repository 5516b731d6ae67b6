import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ScriptExecutor } from '../../src/exec/types.js';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createExecutor, readLocalExecConfig } from '../../src/exec/index.js';
import { buildReproTest } from '../../src/github/publish/build-repro-test.js';
import { silentLogger } from '../../src/log.js';
import { issueKey } from '../../src/queue/repro-job.js';
import { RunRegistry } from '../../src/queue/run-registry.js';
import { wireFixCheck } from '../../workers/wire-verify.js';
import { readOperatorEnv } from '../../src/config/operator-env.js';
import { executorChooser } from '../../src/exec/executor-chooser.js';
import { fakeFileOnBranch } from '../github/fake-github.js';
import { postWebhook, pullRequestPayload } from '../github/webhook-fixtures.js';
import { SECRET, startHarness, type Harness } from './harness.js';
import { waitFor } from '../helpers/poll.js';
import { makeTempDir } from '../helpers/temp-dir.js';
import { candidateTrailer, treeChanges } from '../../src/github/publish/candidate-trailer.js';

/**
 * A fixing PR end to end: pull_request webhook → App → queue → worker → the issue's confirmed reproduction
 * run in the real local sandbox against a checkout of the PR's head (the workspace, read-only, importable)
 * → the check run on the PR. The project is a real git repository whose commits break and fix the bug.
 */

const BUGGY = 'def double(x):\n    raise RuntimeError("double is broken for x=%r" % (x,))\n';
const FIXED = 'def double(x):\n    return 2 * x\n';
const OTHER = 'def double(x):\n    return [x][2]\n';
const SCRIPT = 'import calc\nprint(calc.double(2))\n';
const ISSUE_BODY = [
  '`calc.double` raises for every input.',
  '',
  '```python',
  'import calc',
  'print(calc.double(2))',
  '```',
  '',
  '```',
  'Traceback (most recent call last):',
  '  File "repro.py", line 2, in <module>',
  '  File "calc/__init__.py", line 2, in double',
  'RuntimeError: double is broken for x=2',
  '```',
].join('\n');

let h: Harness;
let registry: RunRegistry;
let dir: string;
const shas: Record<'buggy' | 'fixed' | 'unfixed' | 'other', string> = { buggy: '', fixed: '', unfixed: '', other: '' };
let issue = 700;
let pr = 7000;

function commit(message: string, file: string): string {
  writeFileSync(join(dir, 'calc', '__init__.py'), file);
  const git = (...args: string[]) =>
    execFileSync('git', args, {
      cwd: dir,
      env: { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t' },
    })
      .toString()
      .trim();
  git('add', '.');
  git('commit', '-q', '--allow-empty', '-m', message);
  return git('rev-parse', 'HEAD');
}

// Closed after the file: its warm servers keep their run folders until then.
let executor: ScriptExecutor | undefined;

beforeAll(async () => {
  h = await startHarness('verify-worker', {
    github: { issues: {}, pulls: {} },
    env: { REPGEN_JOB_ATTEMPTS: '1', REPGEN_REPO_RATE_LIMIT: '1000' },
  });
  registry = new RunRegistry(h.redis, { prefix: h.prefix });
  dir = makeTempDir('repgen-verify-repo-');
  mkdirSync(join(dir, 'calc'));
  execFileSync('git', ['init', '-q', '-b', 'master'], { cwd: dir });
  shas.buggy = commit('calc', BUGGY);
  shas.fixed = commit('fix double', FIXED);
  shas.unfixed = commit('break it again', BUGGY.replace('raise', '# a comment\n    raise'));
  shas.other = commit('another bug', OTHER);
  executor = await createExecutor(readLocalExecConfig({}));
  await h.startWorker(
    async () => {
      throw new Error('no reproduction runs in this test');
    },
    {},
    {
      runFixCheck: wireFixCheck(
        readOperatorEnv({ REPGEN_CONFIRM_RUNS: '2' }),
        executorChooser({ log: silentLogger, given: executor }),
        silentLogger,
      ),
    },
  );
}, 60_000);

afterAll(async () => {
  await h?.close();
  await executor?.close?.();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

beforeEach(async () => {
  issue += 1;
  pr += 1;
  h.gh.options.issues![issue] = { title: 'calc.double raises', body: ISSUE_BODY };
  await registry.setLastReproduced(issueKey({ owner: 'Codertocat', repo: 'Hello-World', issueNumber: issue }), {
    script: SCRIPT,
    sha: shas.buggy,
    summary: 'RuntimeError reproduced',
    commentUrl: `https://github.com/Codertocat/Hello-World/issues/${issue}#issuecomment-1`,
    ref: 'master',
    markers: ['RuntimeError: double is broken for x=2'],
    at: Date.now(),
  });
});

const openPr = (headSha: string, action: 'opened' | 'synchronize' = 'opened') =>
  postWebhook(
    h.app.url,
    'pull_request',
    pullRequestPayload(action, {
      body: `Fixes #${issue}`,
      number: pr,
      headSha,
      headRef: 'fix-double',
      sender: { login: 'Codertocat' },
      cloneUrl: dir,
    }),
    { secret: SECRET },
  );
const completed = (headSha: string) =>
  waitFor(
    () => h.gh.checkRuns.find((c) => c.head_sha === headSha && c.name === `RepGen fix check (#${issue})` && c.status === 'completed'),
    { what: `fix check on ${headSha.slice(0, 7)}` },
  ) as Promise<Record<string, unknown> & { output: { title: string; summary: string; text?: string } }>;

/** A call to the fake GitHub's REST API, as a person with push access makes it. */
const api = (method: string, path: string, body: unknown) =>
  fetch(`${h.gh.url}/repos/Codertocat/Hello-World${path}`, {
    method,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

describe('fix check worker', () => {
  it('fixed: the reproduction exits 0 at the PR head → success, with the plain regression test to add', async () => {
    await openPr(shas.fixed);
    const check = await completed(shas.fixed);
    expect(check.conclusion).toBe('success');
    expect(check.output.title).toBe(`Fixed: the reproduction of #${issue} passes at ${shas.fixed.slice(0, 12)}`);
    expect(check.output.summary).toContain('the reproduction exits 0 in 2/2 runs');
    expect(check.output.text).toMatch(/^4$/m);
    expect(check.output.text).toContain(`def test_issue_${issue}(tmp_path):`);
    expect(check.output.text).not.toContain('xfail');
    expect(check.output.text).toContain('add this test to the pull request');
    // It moved from queued through in_progress: the PATCHes went to the handler's check run.
    expect(h.gh.callsTo('PATCH', /\/check-runs\/\d+$/).map((c) => (c.body as { status: string }).status)).toEqual(
      expect.arrayContaining(['in_progress', 'completed']),
    );
  }, 90_000);

  it('still failing: the reported error again at the head → failure, with the output', async () => {
    await openPr(shas.unfixed, 'synchronize');
    const check = await completed(shas.unfixed);
    expect(check.conclusion).toBe('failure');
    expect(check.output.title).toMatch(/^Still failing/);
    expect(check.output.summary).toContain('RuntimeError: double is broken for x=2');
    expect(check.output.text).toContain('RuntimeError: double is broken for x=2');
  }, 90_000);

  it('inconclusive: the reproduction now fails with a different error → neutral, not a pass and not the bug', async () => {
    await openPr(shas.other);
    const check = await completed(shas.other);
    expect(check.conclusion).toBe('neutral');
    expect(check.output.title).toMatch(/^Inconclusive/);
    expect(check.output.summary).toContain('IndexError');
  }, 90_000);

  it("fixed with RepGen's regression-test PR open: its xfail test becomes a plain test, and the PR says to merge after the fix", async () => {
    const branch = `repgen/issue-${issue}`;
    const xfail = buildReproTest({
      issueNumber: issue,
      issueUrl: `https://github.com/Codertocat/Hello-World/issues/${issue}`,
      script: SCRIPT,
      markers: ['RuntimeError: double is broken for x=2'],
    });
    await api('PUT', `/contents/tests/repro/test_issue_${issue}.py`, {
      branch,
      content: Buffer.from(xfail).toString('base64'),
      message: 'x',
    });
    const reproPr = (await (await api('POST', '/pulls', { head: branch, base: 'master', title: 't' })).json()) as { number: number };
    await openPr(shas.fixed);
    const check = await completed(shas.fixed);
    expect(check.conclusion).toBe('success');
    const test = fakeFileOnBranch(h.gh, branch, `tests/repro/test_issue_${issue}.py`);
    expect(test).not.toContain('xfail');
    expect(test).toContain(`RepGen ran it against pull request #${pr} at ${shas.fixed.slice(0, 12)}`);
    expect(check.output.text).toContain(`/pull/${reproPr.number} now holds this test without its xfail marker`);
    const note = [...h.gh.comments.values()].find((c) => c.issue === reproPr.number);
    expect(note?.body).toContain(`Merge this PR after https://github.com/Codertocat/Hello-World/pull/${pr}`);
  }, 90_000);

  it("hostile: another App's signed commit with the candidate subject and a matching trailer is not RepGen's: nothing dropped", async () => {
    const branch = `repgen/issue-${issue}`;
    await api('PUT', `/contents/tests/repro/test_issue_${issue}.py`, {
      branch,
      content: Buffer.from('x = 1\n').toString('base64'),
      message: 'x',
    });
    const reproPr = (await (await api('POST', '/pulls', { head: branch, base: 'master', title: 't' })).json()) as { number: number };
    // The worker knows its login (GET /app: repgen[bot]); a commit by another App's bot is someone else's.
    const head = h.gh.git.commit(branch)!;
    const before = h.gh.git.trees.get(head.tree)!;
    const tree = h.gh.git.tree(before, new Map([['calc.py', { mode: '100644', type: 'blob', sha: h.gh.git.blob('pass\n') }]]));
    const trailer = candidateTrailer(treeChanges(before, h.gh.git.trees.get(tree)!));
    const message = `Candidate fix for #${issue}, generated by RepGen (not reviewed)\n\n${trailer}`;
    const other = h.gh.git.makeCommit(tree, [head.sha], message, { login: 'helper[bot]', verified: true });
    h.gh.git.refs.set(`refs/heads/${branch}`, other.sha);
    await openPr(shas.fixed);
    const check = await completed(shas.fixed);
    expect(check.conclusion).toBe('success');
    expect(h.gh.git.commit(branch)!.sha).toBe(other.sha);
    expect(check.output.text).toMatch(
      /left its regression-test PR .* as it is: commit \w{12} has RepGen's candidate subject but its author/,
    );
    expect(check.output.text).toMatch(/not @\u200d?repgen\[bot\]: not RepGen's commit/);
    const note = [...h.gh.comments.values()].find((c) => c.issue === reproPr.number);
    expect(note?.body).toContain('left this branch as it is');
  }, 90_000);

  it('the installation token never reaches a check run', () => {
    expect(JSON.stringify(h.gh.checkRuns)).not.toContain('ghs_fakeInstallationToken');
  });
});
