import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { createExecutor, readLocalExecConfig } from '../../src/exec/index.js';
import { createLlmClient } from '../../src/llm/index.js';
import { silentLogger } from '../../src/log.js';
import { ReproJob } from '../../src/queue/repro-job.js';
import { startScriptedAnthropicServer, type ScriptedServer } from '../helpers/anthropic-wire-server.js';
import { answer, CRASH_ISSUE, GOOD_SCRIPT } from '../fakes/repro-fixtures.js';
import { labeledPayload, postWebhook } from '../github/webhook-fixtures.js';
import { makeGitRepo, SECRET, startHarness, type Harness } from './harness.js';
import { waitFor } from '../helpers/poll.js';
import { makeTempDir } from '../helpers/temp-dir.js';

/**
 * The whole App, nothing scripted but the model: a signed issues.labeled POST → Probot → job in Redis →
 * worker → shallow clone → the real pipeline (real context builder, local sandbox running Debian's Python
 * and torch) → the comment edited with the evidence, a check run on the tested commit, the label added.
 */
const ISSUE = 401;
let h: Harness;
let llmServer: ScriptedServer;
let repo: ReturnType<typeof makeGitRepo>;
let cacheDir: string;

beforeAll(async () => {
  const [title, ...rest] = CRASH_ISSUE.split('\n');
  h = await startHarness('e2e', { github: { issues: { [ISSUE]: { title: (title ?? '').replace(/^# /, ''), body: rest.join('\n') } } } });
  repo = makeGitRepo({
    'model.py': 'import torch.nn as nn\n\n\ndef build():\n    return nn.Linear(5, 2)\n',
    'train.py': 'import torch\nfrom model import build\n\nlayer = build()\nx = torch.randn(4, 3)\nout = layer(x)\n',
  });
  cacheDir = makeTempDir('repgen-e2e-cache-');
  // The report stage asks for JSON; every other request is a script request and gets the good script.
  const reply = (req: { body: unknown }) =>
    JSON.stringify(req.body).includes('Restructure it') ? '```json\n{}\n```' : answer(GOOD_SCRIPT);
  llmServer = await startScriptedAnthropicServer(Array.from({ length: 20 }, () => reply));
});
afterAll(async () => {
  await h?.close();
  await llmServer?.close();
  repo?.cleanup();
  if (cacheDir) rmSync(cacheDir, { recursive: true, force: true });
});

describe('end to end', { timeout: 240_000 }, () => {
  it('signed issues.labeled → job in Redis → worker → evidence comment, check run, label', async () => {
    const res = await postWebhook(
      h.app.url,
      'issues',
      labeledPayload('needs-repro', { issueNumber: ISSUE, sender: { login: 'Codertocat' }, cloneUrl: repo.path }),
      { secret: SECRET },
    );
    expect(res.status).toBe(200);
    const [job] = await h.app.queue.getJobs(['waiting']);
    expect(ReproJob.parse(job?.data)).toMatchObject({ issueNumber: ISSUE, trigger: 'label', ref: 'master' });

    const executor = await createExecutor(readLocalExecConfig({}), { log: silentLogger });

    // Its warm servers keep their run folders until it is closed.

    onTestFinished(() => executor.close?.());
    const llm = await createLlmClient({
      provider: 'anthropic',
      apiKey: 'sk-test-key',
      baseURL: llmServer.url,
      maxRetries: 0,
      initialBackoffMs: 1,
    });
    // REPGEN_ENV off: the report's torch 2.4.0 is not the base's 1.13, so the env stage would build a torch env (issue 39)
    // for runs that are the fake executor's.
    const env = { REPGEN_CONFIRM_RUNS: '2', REPGEN_PYLINT: 'false', REPGEN_CONTEXT_CACHE_DIR: cacheDir, REPGEN_ENV: 'off' };
    // The real stages through reproduceIssue: only the executor and the model's wire are the test's.
    const w = await h.startWorker(null, env, { executor, llm });
    const body = await waitFor(() => [...h.gh.comments.values()].find((c) => c.issue === ISSUE && /### RepGen:/.test(c.body))?.body, {
      what: 'the result comment',
    });
    await waitFor(() => h.gh.labels.get(ISSUE), { what: 'label' });
    await w.close(0);

    expect(body).toContain('✅ Reproduced (2 of 2 seeded runs)');
    expect(body).toMatch(/RuntimeError: mat1 and mat2 shapes cannot be multiplied \(4x3 and 5x2\)/);
    expect(body).toContain('nn.Linear(5, 2)');
    const check = h.gh.checkRuns.find((c) => String(c.external_id).startsWith(`codertocat/hello-world#${ISSUE}@`));
    expect(check).toMatchObject({ name: 'RepGen reproduction', head_sha: repo.sha, conclusion: 'success' });
    expect(h.gh.labels.get(ISSUE)).toEqual(['repro:confirmed']);
    // Progress was edited in place along the way: more than one PATCH of the same comment before the result.
    const commentId = [...h.gh.comments.values()].find((c) => c.issue === ISSUE)?.id;
    expect(h.gh.callsTo('PATCH', new RegExp(`/issues/comments/${commentId}$`)).length).toBeGreaterThan(2);
    expect(llmServer.requests.length).toBeGreaterThan(0);
  });
});
