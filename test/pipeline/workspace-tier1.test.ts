import { chmodSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, onTestFinished } from 'vitest';
import { createPyflakesChecker } from '../../src/agent/pyflakes-checker.js';
import { createExecutor, readExecConfig } from '../../src/exec/index.js';
import { createLlmClient } from '../../src/llm/index.js';
import { silentLogger } from '../../src/log.js';
import { runReproWithEvidence } from '../../src/pipeline/run-repro.js';
import { ReproSettings } from '../../src/pipeline/settings.js';
import { startScriptedAnthropicServer, type ScriptedServer } from '../helpers/anthropic-wire-server.js';
import { answer } from '../fakes/repro-fixtures.js';
import { makeTempDir } from '../helpers/temp-dir.js';
import { WIDEN_BLOCKS, WIDEN_ISSUE } from '../helpers/toylib-widen.js';
import { buildResultComment } from '../../src/publish/build-result-comment.js';
import { Cassette, recordSession } from '../../src/cassettes/index.js';
import { replayThroughPipeline } from '../helpers/replay-dl-bugs-cassette.js';

/**
 * Tier 1 against the project's own code: the bug lives only in the workspace (a tiny library checked out
 * for the run), so only a script that imports the project can show it. The model is scripted; the runs are
 * real (local sandbox, the checkout mounted read-only and on PYTHONPATH).
 */

let server: ScriptedServer | undefined;
const dirs: string[] = [];
afterEach(async () => {
  await server?.close();
  server = undefined;
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function project(): string {
  const dir = makeTempDir('repgen-ws-tier1-');
  dirs.push(dir);
  // The sandbox runs the script as an unprivileged uid: the checkout must be readable by others.
  chmodSync(dir, 0o755);
  mkdirSync(join(dir, 'toylib'));
  writeFileSync(join(dir, 'toylib', '__init__.py'), '');
  // The bug: the shortcut keeps the input's width when the block changes it.
  writeFileSync(join(dir, 'toylib', 'blocks.py'), WIDEN_BLOCKS);
  return dir;
}

// The model's script: imports the project as the report does and calls it; nothing of the bug is in it.
const IMPORTS_PROJECT = 'from toylib.blocks import widen\n\nprint(widen([1, 2], 3))\n';
// A script that fakes the same error around plain Python: must not count.
const FAKES_IT = 'a, b = [0, 0, 0], [0, 0]\nif len(a) != len(b):\n    raise ValueError(f"widths differ: {len(a)} vs {len(b)}")\n';

describe('tier 1 with the workspace', { timeout: 180_000 }, () => {
  it("the model's script imports the project and reproduces a bug only the workspace's code has; the prompt says it is importable", async () => {
    const executor = await createExecutor(readExecConfig({}), { log: silentLogger });
    // Its warm servers keep their run folders until it is closed.
    onTestFinished(() => executor.close?.());
    server = await startScriptedAnthropicServer(['```json\n{}\n```', answer(FAKES_IT), answer(IMPORTS_PROJECT)]);
    const llm = await createLlmClient({
      provider: 'anthropic',
      apiKey: 'sk-test-key',
      baseURL: server.url,
      maxRetries: 0,
      initialBackoffMs: 1,
    });
    const settings = ReproSettings.parse({ pylint: false, confirmRuns: 1, suggestFix: false });
    const ev = await runReproWithEvidence(
      {
        issue: { title: '', body: WIDEN_ISSUE },
        settings,
        workspace: { hostPath: project(), project: 'acme/toylib @ 0123456789ab', packages: ['toylib'] },
      },
      { executor, llm, checker: createPyflakesChecker({ pylint: false }), log: silentLogger, progress: () => undefined },
    );
    expect(
      ev.outcome.status,
      `${ev.outcome.summary}\n${JSON.stringify(ev.outcome.attempts, null, 1)}\n${JSON.stringify(ev.outcome.notes)}`,
    ).toBe('reproduced');
    expect(ev.outcome.script).toBe(IMPORTS_PROJECT);
    expect(ev.finalRun?.output).toMatch(/\/workspace\/toylib\/blocks\.py", line 5, in widen/);
    // The faked crash was refused before it could count (relevance) or after (provenance).
    expect(ev.outcome.attempts.map((a) => a.outcome)[0]).not.toBe('reproduced');
    const prompts = server.requests.map((r) => r.rawBody).join('\n');
    expect(prompts).toMatch(/acme\/toylib @ 0123456789ab: importable as installed/);
    expect(prompts).toMatch(/import it the way the report does/);
  });

  it('after the reproduction, a candidate fix makes it pass in a scratch copy: evidence, outcome, usage and the comment say so', async () => {
    const executor = await createExecutor(readExecConfig({}), { log: silentLogger });
    onTestFinished(() => executor.close?.());
    const fix =
      '--- a/toylib/blocks.py\n+++ b/toylib/blocks.py\n@@ -3 +3 @@\n-    shortcut = list(xs)\n+    shortcut = list(xs) + [0] * (out - len(xs))\n';
    server = await startScriptedAnthropicServer(['```json\n{}\n```', answer(IMPORTS_PROJECT), `A fix:\n\n\`\`\`diff\n${fix}\`\`\`\n`]);
    const llm = await createLlmClient({
      provider: 'anthropic',
      apiKey: 'sk-test-key',
      baseURL: server.url,
      maxRetries: 0,
      initialBackoffMs: 1,
    });
    const settings = ReproSettings.parse({ pylint: false, confirmRuns: 1 });
    const hostPath = project();
    const ev = await runReproWithEvidence(
      {
        issue: { title: '', body: WIDEN_ISSUE },
        settings,
        workspace: { hostPath, project: 'acme/toylib @ 0123456789ab', packages: ['toylib'] },
      },
      { executor, llm, checker: createPyflakesChecker({ pylint: false }), log: silentLogger, progress: () => undefined },
    );
    expect(ev.outcome.status, ev.outcome.summary).toBe('reproduced');
    expect(ev.candidateFix, JSON.stringify(ev.candidateFix?.attempts, null, 1)).toMatchObject({
      answer: 'yes',
      result: 'fix_sensitive',
      diff: fix,
    });
    expect(ev.outcome.candidateFix).toMatchObject({ answer: 'yes', result: 'fix_sensitive', diff: fix });
    expect(server.requests).toHaveLength(3);
    // Its tokens are the run's: the same caps hold them.
    expect(ev.outcome.usage.inputTokens).toBeGreaterThanOrEqual(ev.candidateFix!.usage.inputTokens);
    expect(ev.candidateFix!.usage.inputTokens).toBeGreaterThan(0);
    const comment = buildResultComment(ev.outcome);
    expect(comment).toContain(
      '| **A candidate change makes this reproduction pass** | yes: it passes with the generated change below and fails without it (fix-sensitive) |',
    );
    expect(comment).toContain('<details><summary>A change that makes this reproduction pass (generated, not reviewed)</summary>');
    expect(comment).toContain('+    shortcut = list(xs) + [0] * (out - len(xs))');
  });

  it('a session with the candidate fix is recorded, and replays without the checkout: no drift, the same candidate', async () => {
    const executor = await createExecutor(readExecConfig({}), { log: silentLogger });
    onTestFinished(() => executor.close?.());
    const fix =
      '--- a/toylib/blocks.py\n+++ b/toylib/blocks.py\n@@ -3 +3 @@\n-    shortcut = list(xs)\n+    shortcut = list(xs) + [0] * (out - len(xs))\n';
    server = await startScriptedAnthropicServer(['```json\n{}\n```', answer(IMPORTS_PROJECT), `\`\`\`diff\n${fix}\`\`\`\n`]);
    const llm = await createLlmClient({
      provider: 'anthropic',
      apiKey: 'sk-test-key',
      baseURL: server.url,
      maxRetries: 0,
      initialBackoffMs: 1,
    });
    if (!llm) throw new Error('no client');
    const rec = recordSession(llm, executor, createPyflakesChecker({ pylint: false }));
    const settings = ReproSettings.parse({ pylint: false, confirmRuns: 1 });
    const hostPath = project();
    const ev = await rec.stages(runReproWithEvidence)(
      { issue: { title: '', body: WIDEN_ISSUE }, settings, repoDir: hostPath, workspace: { hostPath, packages: ['toylib'] } },
      { executor: rec.executor, llm: rec.llm, checker: rec.checker, log: silentLogger, progress: () => undefined },
      new AbortController().signal,
    );
    expect(ev.candidateFix?.result).toBe('fix_sensitive');
    const cassette = Cassette.parse(
      JSON.parse(
        JSON.stringify(rec.cassette({ caseId: 'toylib-widen', issueText: WIDEN_ISSUE, settings, outcome: ev.outcome, judge: null })),
      ),
    );
    expect(cassette.candidateFix).toBe(true);
    expect(cassette.candidateCopies?.map((o) => o.op)).toEqual(['read', 'make']);
    rmSync(hostPath, { recursive: true, force: true });
    const { replay, evidence } = await replayThroughPipeline(cassette);
    expect(replay.drift).toEqual([]);
    expect(replay.callsServed()).toBe(cassette.calls.length);
    expect(evidence.candidateFix).toMatchObject({ answer: 'yes', result: 'fix_sensitive', diff: fix });
  });

  it('suggestFix off: no model call after the reproduction, no candidate in the evidence or the comment', async () => {
    const executor = await createExecutor(readExecConfig({}), { log: silentLogger });
    onTestFinished(() => executor.close?.());
    server = await startScriptedAnthropicServer(['```json\n{}\n```', answer(IMPORTS_PROJECT)]);
    const llm = await createLlmClient({
      provider: 'anthropic',
      apiKey: 'sk-test-key',
      baseURL: server.url,
      maxRetries: 0,
      initialBackoffMs: 1,
    });
    const settings = ReproSettings.parse({ pylint: false, confirmRuns: 1, suggestFix: false });
    const ev = await runReproWithEvidence(
      { issue: { title: '', body: WIDEN_ISSUE }, settings, workspace: { hostPath: project(), packages: ['toylib'] } },
      { executor, llm, checker: createPyflakesChecker({ pylint: false }), log: silentLogger, progress: () => undefined },
    );
    expect(ev.outcome.status).toBe('reproduced');
    expect(server.requests).toHaveLength(2);
    expect(server.exhaustedErrors).toEqual([]);
    expect(ev.candidateFix).toBeUndefined();
    expect(buildResultComment(ev.outcome)).not.toContain('candidate change');
  });

  it('without the workspace the same script cannot import the project', async () => {
    const executor = await createExecutor(readExecConfig({}), { log: silentLogger });
    // Its warm servers keep their run folders until it is closed.
    onTestFinished(() => executor.close?.());
    const r = await executor.run({ files: [{ path: 'repro.py', content: IMPORTS_PROJECT }], entry: 'repro.py' });
    expect(r.output).toMatch(/ModuleNotFoundError: No module named 'toylib'/);
  });
});
