import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, onTestFinished } from 'vitest';
import { CancelledError } from '../../src/errors.js';
import { createExecutor, readLocalExecConfig } from '../../src/exec/index.js';
import { candidateTrailer, treeChanges } from '../../src/github/publish/candidate-trailer.js';
import type { RunPipeline } from '../../src/queue/process-repro-job.js';
import { FakeExecutor } from '../fakes/fake-executor.js';
import { CRASH_ISSUE, GOOD_SCRIPT, simulate } from '../fakes/repro-fixtures.js';
import { fakeFileOnBranch } from '../github/fake-github.js';
import { commentPayload, labeledPayload, postWebhook } from '../github/webhook-fixtures.js';
import { makeGitRepo, reproducedOutcome, SECRET, startHarness, type Harness } from './harness.js';
import { waitFor } from '../helpers/poll.js';
import { livePidsWith } from '../exec/proc-helpers.js';

// Each test has its own harness (queue prefix, app server, fake GitHub, workers), closed after it: a test that fails
// on a busy machine leaves no worker behind to take the next test's jobs with its own pipeline.
let h: Harness;
let repo: ReturnType<typeof makeGitRepo>;
let issue = 200;

beforeAll(() => {
  repo = makeGitRepo();
});
afterAll(() => {
  repo?.cleanup();
});
beforeEach(async () => {
  h = await startHarness('worker', { github: { issues: {} }, env: { REPGEN_JOB_ATTEMPTS: '2', REPGEN_REPO_RATE_LIMIT: '1000' } });
  issue += 1;
  h.gh.options.issues![issue] = {
    title: 'matmul shape error',
    body: 'x @ y fails with RuntimeError: mat1 and mat2 shapes cannot be multiplied',
  };
  h.gh.options.config = null;
});
afterEach(async () => {
  await h?.close();
});

const trigger = (body = '/repgen', n = issue) =>
  postWebhook(h.app.url, 'issue_comment', commentPayload(body, { issueNumber: n, sender: { login: 'Codertocat' }, cloneUrl: repo.path }), {
    secret: SECRET,
  });
const progressComment = (n = issue) => [...h.gh.comments.values()].find((c) => c.issue === n && c.body.includes('repgen:progress'));
const finalBody = (n = issue, re: RegExp) =>
  waitFor(
    () => {
      const c = progressComment(n);
      return c && re.test(c.body) ? c.body : null;
    },
    { what: `final comment on #${n}` },
  );

describe('repro worker', () => {
  it('runs the pipeline on a checkout of the ref and publishes comment, check run and label', async () => {
    const seen: { repoFiles: string; stagesReported: number; title: string }[] = [];
    const pipeline: RunPipeline = async (req, progress) => {
      await progress('context', 'indexing the repository');
      await progress('agent', 'attempt 1, tier 0');
      seen.push({
        repoFiles: execFileSync('git', ['ls-files'], { cwd: req.repoDir }).toString(),
        stagesReported: 2,
        title: req.issue.title,
      });
      return reproducedOutcome();
    };
    const w = await h.startWorker(pipeline);
    await trigger();
    const body = await finalBody(issue, /Reproduced/);
    await w.close(0);
    expect(seen[0]?.repoFiles).toContain('model.py');
    expect(seen[0]?.title).toBe('matmul shape error');
    expect(body).toContain('✅ Reproduced (3 of 3 seeded runs)');
    expect(body).toContain('mat1 and mat2 shapes cannot be multiplied');
    const check = h.gh.checkRuns.at(-1);
    expect(check).toMatchObject({ name: 'RepGen reproduction', head_sha: repo.sha, status: 'completed', conclusion: 'success' });
    expect(h.gh.labels.get(issue)).toEqual(['repro:confirmed']);
    // Progress went to the same comment: no other comment was created by the worker.
    expect([...h.gh.comments.values()].filter((c) => c.issue === issue)).toHaveLength(1);
    // The installation token never reaches GitHub in a posted body.
    expect(h.gh.calls.some((c) => JSON.stringify(c.body ?? '').includes('ghs_fakeInstallationToken'))).toBe(false);
  });

  it('retries a failing attempt and, after the last one, says what happened', async () => {
    let calls = 0;
    const w = await h.startWorker(async () => {
      calls += 1;
      throw new Error('executor unreachable');
    });
    await trigger();
    const body = await finalBody(issue, /could not finish/);
    await w.close(0);
    expect(calls).toBe(2);
    expect(body).toContain('after 2 attempts: executor unreachable');
    // The issue is free again.
    expect(await h.redis.exists(`${h.prefix}:active:codertocat/hello-world#${issue}`)).toBe(0);
  });

  it('says so and runs nothing when --ref names a ref that does not exist', async () => {
    let ran = false;
    const w = await h.startWorker(async () => {
      ran = true;
      return reproducedOutcome();
    });
    await trigger('/repgen --ref no-such-branch');
    const body = await finalBody(issue, /does not exist/);
    await w.close(0);
    expect(ran).toBe(false);
    expect(body).toContain('`no-such-branch`');
  });

  it('stops and posts nothing more when the issue is deleted during the run (404/410 on the edit)', async () => {
    let aborted = false;
    const pipeline: RunPipeline = async (_req, progress, signal) => {
      await progress('context', 'indexing');
      h.gh.deleteIssue(issue);
      await progress('agent', 'attempt 1');
      await new Promise<void>((resolve) => {
        if (signal.aborted) resolve();
        signal.addEventListener('abort', () => resolve(), { once: true });
      });
      aborted = signal.aborted;
      throw new CancelledError('stopped');
    };
    const w = await h.startWorker(pipeline);
    const before = h.gh.checkRuns.length;
    await trigger();
    await waitFor(async () => (await h.redis.exists(`${h.prefix}:active:codertocat/hello-world#${issue}`)) === 0 && aborted, {
      what: 'lock released',
    });
    await w.close(0);
    expect(aborted).toBe(true);
    expect(h.gh.checkRuns.length).toBe(before);
    expect(h.gh.labels.get(issue)).toBeUndefined();
  });

  it('/repgen cancel stops the running Python script', async () => {
    const marker = `repgen-cancel-${randomUUID()}`;
    const executor = await createExecutor(readLocalExecConfig({}));
    // Its warm servers keep their run folders until it is closed.
    onTestFinished(() => executor.close?.());
    let result: Awaited<ReturnType<typeof executor.run>> | null = null;
    let started = false;
    const pipeline: RunPipeline = async (_req, progress, signal) => {
      await progress('agent', 'running the script');
      started = true;
      result = await executor.run(
        {
          files: [{ path: 'sleep.py', content: 'import time\nprint("started", flush=True)\ntime.sleep(120)\n' }],
          entry: 'sleep.py',
          args: [marker],
          limits: { timeoutMs: 120_000 },
        },
        signal,
      );
      if (signal.aborted) throw new CancelledError('cancelled');
      return reproducedOutcome();
    };
    const w = await h.startWorker(pipeline);
    await trigger();
    await waitFor(() => started && livePidsWith(marker).length > 0, { what: 'script running' });
    await trigger('/repgen cancel');
    // Only the cancel ends the 120 s sleep as 'aborted' (its own time limit would end it as a timeout).
    const body = await finalBody(issue, /cancelled/);
    await w.close(0);
    expect(body).toContain('cancelled');
    expect((result as unknown as { infra: { kind: string } | null })?.infra?.kind).toBe('aborted');
    // The run came back aborted; its processes are gone once the kernel has reaped them, which a busy machine delays.
    await waitFor(() => livePidsWith(marker).length === 0, { what: 'no process of the script left' });
  }, 120_000); // a real sandboxed Python run: a busy machine slows its start, which must not fail the test

  it('caps concurrent runs per installation across the worker', async () => {
    let active = 0;
    let peak = 0;
    const pipeline: RunPipeline = async () => {
      active += 1;
      peak = Math.max(peak, active);
      await new Promise((r) => setTimeout(r, 600));
      active -= 1;
      return reproducedOutcome();
    };
    const w = await h.startWorker(pipeline, { REPGEN_WORKER_CONCURRENCY: '3', REPGEN_INSTALLATION_CONCURRENCY: '1' });
    const issues = [issue, issue + 1, issue + 2];
    for (const n of issues) h.gh.options.issues![n] = { title: 't', body: 'b' };
    await Promise.all(issues.map((n) => trigger('/repgen', n)));
    for (const n of issues) await finalBody(n, /Reproduced/);
    await w.close(0);
    issue += 2;
    expect(peak).toBe(1);
  });

  it('opens the regression-test PR on /repgen pr after a reproduction, and on its own with pr: auto (with the env lock)', async () => {
    const lock = 'absl-py==2.1.0\nnumpy==1.26.4\n';
    const env = {
      python: '/envs/x/bin/python',
      lockHash: 'a'.repeat(64),
      pins: {},
      substitutions: [],
      cached: true,
      buildMs: 0,
      lock,
      failure: null,
    };
    const w = await h.startWorker(async () => ({
      ...reproducedOutcome('import torch\nprint("x")\nraise RuntimeError("mat1 and mat2 shapes cannot be multiplied")\n'),
      env,
    }));
    await trigger();
    await finalBody(issue, /Reproduced/);
    await trigger('/repgen pr');
    const prBody = await waitFor(
      () => [...h.gh.comments.values()].find((c) => c.issue === issue && /opened https:\/\/github.com\/.*\/pull\//.test(c.body))?.body,
      { what: 'pr comment' },
    );
    const test = fakeFileOnBranch(h.gh, `repgen/issue-${issue}`, `tests/repro/test_issue_${issue}.py`);
    expect(prBody).toContain('xfail(strict=True)');
    expect(test).toContain('@pytest.mark.xfail(strict=True');
    expect(test).toContain(`def test_issue_${issue}(`);
    expect(h.gh.callsTo('POST', /\/git\/refs$/).at(-1)?.body).toMatchObject({ ref: `refs/heads/repgen/issue-${issue}`, sha: repo.sha });
    expect(h.gh.callsTo('POST', /\/pulls$/).at(-1)?.body).toMatchObject({ head: `repgen/issue-${issue}`, base: 'master' });

    issue += 1;
    h.gh.options.issues![issue] = { title: 't', body: 'b' };
    h.gh.options.config = 'pr: auto\n';
    await trigger();
    const auto = await finalBody(issue, /Regression test proposed in/);
    await w.close(0);
    expect(auto).toContain('/pull/');
    // The env the run used goes beside the test, one file per issue, and the PR says how to recreate it.
    expect(fakeFileOnBranch(h.gh, `repgen/issue-${issue}`, `tests/repro/requirements-repro-issue-${issue}.txt`)).toContain(lock.trim());
    expect(String((h.gh.callsTo('POST', /\/pulls$/).at(-1)?.body as { body?: string }).body)).toContain(
      `pip install -r tests/repro/requirements-repro-issue-${issue}.txt`,
    );
  });
});

describe('repro worker, the regression-test PR with a candidate fix (issue 41 item 3)', () => {
  it('/repgen pr carries a fix-sensitive change as a second commit; prCandidateCommit: false keeps the test alone', async () => {
    // The tested commit as GitHub holds it: the repository's one file.
    const tested = h.gh.git.tree(
      new Map(),
      new Map([['model.py', { mode: '100644', type: 'blob', sha: h.gh.git.blob('import torch\n') }]]),
    );
    h.gh.git.commits.set(repo.sha, {
      sha: repo.sha,
      tree: tested,
      parents: [],
      message: 'the tested commit',
      by: 'maintainer',
      verified: false,
    });
    const diff = '--- a/model.py\n+++ b/model.py\n@@ -1 +1 @@\n-import torch\n+import torch  # fixed\n';
    const w = await h.startWorker(async () => ({
      ...reproducedOutcome(),
      candidateFix: { answer: 'yes', result: 'fix_sensitive', summary: '1 candidate change: it passes', diff, runs: 2 },
    }));
    await trigger();
    await finalBody(issue, /Reproduced/);
    await trigger('/repgen pr');
    const said = await waitFor(
      () => [...h.gh.comments.values()].find((c) => c.issue === issue && /opened https:\/\/github.com\/.*\/pull\//.test(c.body))?.body,
      { what: 'pr comment' },
    );
    expect(said).toContain('a generated candidate fix (not reviewed) with which it passes, as a separate commit');
    const commits = h.gh.git.log(`repgen/issue-${issue}`);
    expect(commits.map((c) => c.message.split('\n')[0])).toEqual([
      `Candidate fix for #${issue}, generated by RepGen (not reviewed)`,
      `Add regression test for issue #${issue} (xfail until fixed)`,
      'the tested commit',
    ]);
    expect(fakeFileOnBranch(h.gh, `repgen/issue-${issue}`, 'model.py')).toBe('import torch  # fixed\n');
    expect(fakeFileOnBranch(h.gh, `repgen/issue-${issue}`, `tests/repro/test_issue_${issue}.py`)).not.toContain('xfail');
    expect(String((h.gh.callsTo('POST', /\/pulls$/).at(-1)?.body as { body?: string }).body)).toContain(`git revert ${commits[0]?.sha}`);

    // Hostile: another App's commit, signed, with the subject and the trailer its content gives. The worker knows its
    // own login (GET /app: repgen[bot]), so the commit is not taken for RepGen's: the branch stays, the body says so
    // (the logins made inert, as every reason in the body is).
    const branch = `repgen/issue-${issue}`;
    const head = h.gh.git.commit(branch)!;
    const before = h.gh.git.trees.get(head.tree)!;
    const tree = h.gh.git.tree(before, new Map([['model.py', { mode: '100644', type: 'blob', sha: h.gh.git.blob('import os\n') }]]));
    const message = `Candidate fix for #${issue}, generated by RepGen (not reviewed)\n\n${candidateTrailer(treeChanges(before, h.gh.git.trees.get(tree)!))}`;
    const other = h.gh.git.makeCommit(tree, [head.sha], message, { login: 'helper[bot]', verified: true });
    h.gh.git.refs.set(`refs/heads/${branch}`, other.sha);
    const patches = h.gh.callsTo('PATCH', /\/pulls\/\d+$/).length;
    await trigger('/repgen pr');
    const body = await waitFor(
      () => (h.gh.callsTo('PATCH', /\/pulls\/\d+$/).length > patches ? h.gh.callsTo('PATCH', /\/pulls\/\d+$/).at(-1)?.body : undefined),
      { what: 'the PR body updated' },
    );
    expect(String((body as { body?: string }).body)).toMatch(
      /Not a RepGen candidate commit.*its author is @\u200d?helper\[bot\], not @\u200d?repgen\[bot\]: not RepGen/,
    );
    expect(h.gh.git.commit(branch)!.sha).toBe(other.sha);

    issue += 1;
    h.gh.options.issues![issue] = { title: 't', body: 'b' };
    h.gh.options.config = 'pr: auto\nprCandidateCommit: false\n';
    await trigger();
    await finalBody(issue, /Regression test proposed in/);
    await w.close(0);
    expect(h.gh.git.log(`repgen/issue-${issue}`).map((c) => c.message.split('\n')[0])).toEqual([
      `Add regression test for issue #${issue} (xfail until fixed)`,
      'the tested commit',
    ]);
  });
});

describe('repro worker, real stages', () => {
  it('every script run sees the checkout of the ref read-only as its workspace, under the operator ceilings', async () => {
    h.gh.options.issues![issue] = { title: 'Linear layer shape error', body: `${CRASH_ISSUE}\n\`\`\`python\n${GOOD_SCRIPT}\`\`\`\n` };
    const executor = new FakeExecutor(simulate);
    // The report's torch 2.4.0 is not the base's 1.13, so the env stage would build a torch env (issue 39); the runs here are fake.
    const w = await h.startWorker(null, { REPGEN_PYLINT: '0', REPGEN_RUN_TIMEOUT_MS: '7000', REPGEN_ENV: 'off' }, { executor, llm: null });
    await trigger();
    const body = await finalBody(issue, /### RepGen:/);
    await w.close(0);
    expect(body).toContain('Reproduced');
    expect(executor.requests.length).toBeGreaterThan(1);
    for (const r of executor.requests) {
      expect(r.workspace?.hostPath).toMatch(/repgen-job-[^/]+\/repo$/);
      expect(r.limits.timeoutMs).toBeLessThanOrEqual(7000);
      expect(r.labels['repgen-job']).toMatch(/^repro-/);
    }
    const check = h.gh.checkRuns.at(-1);
    expect(check).toMatchObject({ head_sha: repo.sha, conclusion: 'success' });
  });
});

describe('graceful shutdown', () => {
  it('lets a running job finish within the grace period', async () => {
    let finished = false;
    let release = (): void => undefined;
    const released = new Promise<void>((r) => (release = r));
    const w = await h.startWorker(async (_req, progress) => {
      await progress('agent', 'working');
      await released;
      finished = true;
      return reproducedOutcome();
    });
    await trigger();
    await waitFor(async () => (await h.app.queue.getJobs(['active'])).length > 0, { what: 'job running' });
    // The job ends only after the shutdown has begun: the worker waits for it rather than cutting it off.
    const closing = w.close(20_000);
    release();
    await closing;
    expect(finished).toBe(true);
    await finalBody(issue, /Reproduced/);
  });

  it('past the grace period hands the job back without spending an attempt; the next worker finishes it', async () => {
    const w1 = await h.startWorker(async (_req, progress, signal) => {
      await progress('agent', 'working');
      await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
      throw new CancelledError('stopped');
    });
    await trigger();
    await waitFor(async () => (await h.app.queue.getJobs(['active'])).length > 0, { what: 'job running' });
    await w1.close(200);
    const [job] = await h.app.queue.getJobs(['delayed', 'waiting']);
    expect(job?.attemptsMade).toBe(0);
    expect(progressComment()?.body).not.toMatch(/cancelled|could not finish/);
    const w2 = await h.startWorker(async () => reproducedOutcome());
    await finalBody(issue, /Reproduced/);
    await w2.close(0);
  });
});

describe('repro worker, labeled trigger', () => {
  it('runs from an issues.labeled webhook too', async () => {
    const w = await h.startWorker(async () => reproducedOutcome());
    await postWebhook(
      h.app.url,
      'issues',
      labeledPayload('needs-repro', { issueNumber: issue, sender: { login: 'Codertocat' }, cloneUrl: repo.path }),
      { secret: SECRET },
    );
    await finalBody(issue, /Reproduced/);
    await w.close(0);
  });
});
