import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createPyflakesChecker } from '../../src/agent/pyflakes-checker.js';
import { createExecutor, readExecConfig } from '../../src/exec/index.js';
import type { ScriptExecutor } from '../../src/exec/types.js';
import { createLlmClient } from '../../src/llm/index.js';
import { silentLogger } from '../../src/log.js';
import { runReproWithEvidence } from '../../src/pipeline/run-repro.js';
import { ReproSettings } from '../../src/pipeline/settings.js';
import { buildResultComment } from '../../src/publish/build-result-comment.js';
import { answer } from '../fakes/repro-fixtures.js';
import { startScriptedAnthropicServer, type AnthropicResponse, type ScriptedServer } from '../helpers/anthropic-wire-server.js';
import { candidateAnswer } from '../helpers/toylib-widen.js';
import {
  toylibUpper,
  UPPER_CHECK,
  UPPER_FIX,
  UPPER_ISSUE,
  UPPER_NARROW,
  UPPER_NARROW_CHECK,
  UPPER_TOLERANT,
} from '../helpers/toylib-upper.js';

/**
 * Issue 41 item 2, through the whole pipeline: the model (scripted on the loopback Anthropic wire) writes a
 * reproduction narrower than the report, the candidate fix makes the report's expectation true (its independent check
 * turns green) while that reproduction still fails, and the loop is sent back once with the finding. The runs are
 * real: the local sandbox, a tiny library checked out for the run, each patch in a scratch copy.
 */

let server: ScriptedServer | undefined;
let executor: ScriptExecutor & { close?: () => Promise<void> };
beforeAll(async () => {
  executor = await createExecutor(readExecConfig({}), { log: silentLogger });
  return () => executor.close?.();
});
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const REPORT = '```json\n{}\n```';

async function run(answers: AnthropicResponse[], settings: Record<string, unknown> = {}) {
  server = await startScriptedAnthropicServer(answers);
  const llm = await createLlmClient({
    provider: 'anthropic',
    apiKey: 'sk-test-key',
    baseURL: server.url,
    maxRetries: 0,
    initialBackoffMs: 1,
  });
  const progress: string[] = [];
  const ev = await runReproWithEvidence(
    {
      issue: { title: '', body: UPPER_ISSUE },
      settings: ReproSettings.parse({ pylint: false, confirmRuns: 1, tier0: false, ...settings }),
      workspace: { hostPath: toylibUpper(), packages: ['toylib'] },
    },
    {
      executor,
      llm,
      checker: createPyflakesChecker({ pylint: false }),
      log: silentLogger,
      progress: (_stage, line) => void progress.push(line),
    },
  );
  const why = `${ev.outcome.summary}\n${JSON.stringify(ev.outcome.attempts, null, 1)}\n${JSON.stringify(ev.candidateFix, null, 1)}`;
  return { ev, why, requests: server.requests.map((r) => r.rawBody), progress };
}

describe('a suspect oracle sends the loop back (issue 41 item 2)', { timeout: 600_000 }, () => {
  it('a narrow oracle caught by a patch that satisfies the report: written again, confirmed, and the same patch turns it green', async () => {
    const u = { usage: { input_tokens: 1000, output_tokens: 100 } };
    const { ev, why, requests, progress } = await run([
      { text: REPORT, ...u },
      { text: answer(UPPER_NARROW), ...u },
      { text: candidateAnswer(UPPER_FIX, UPPER_CHECK), ...u },
      { text: answer(UPPER_TOLERANT), ...u },
    ]);
    expect(ev.outcome.status, why).toBe('reproduced');
    // One model call for the round, none for the rerun: the patch already exists.
    expect(requests).toHaveLength(4);
    expect(server!.exhaustedErrors).toEqual([]);
    const r = ev.candidateFix!.reattempt!;
    expect(r, why).toMatchObject({ candidate: 1, status: 'fix_sensitive', adopted: true, suspectAttempt: 1, attempts: [2] });
    expect(r.suspectScript).toBe(UPPER_NARROW);
    expect(r.script).toBe(UPPER_TOLERANT);
    expect(r.confirmation).toEqual({ reproducedRuns: 1, totalRuns: 1 });
    expect(r.rerun!.runs.map((x) => x.outcome)).toEqual(['passed', 'passed']);
    expect(r.rerun!.diff).toBe(UPPER_FIX);
    // The round's prompt names the finding: the suspect script's failure with the patch, the check that passed, the patch.
    expect(r.feedback).not.toBe('');
    expect(requests[3]).toContain(JSON.stringify(r.feedback).slice(1, -1));
    expect(requests[3]).toMatch(/upper\(\[3\.0\]\) is 3\.5999999999999996, the report expects 3\.6/);
    expect(requests[3]).toContain(JSON.stringify(UPPER_CHECK).slice(1, -1));
    expect(requests[3]).toContain('return max(xs) * 1.2');
    expect(requests[3]).toMatch(/Attempt 1 reproduced the bug, but its assertion looks narrower than the report/);
    // In place of a refine: the generate prompt, the suspect script as the model's answer, then the finding.
    const messages = (JSON.parse(requests[3]!) as { messages: { role: string; content: unknown }[] }).messages;
    expect(messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
    expect(JSON.stringify(messages[1]!.content)).toContain(JSON.stringify(UPPER_NARROW).slice(1, -1));
    // The new reproduction is the run's: its script, its confirmation, both rounds' attempts.
    expect(ev.outcome.script).toBe(UPPER_TOLERANT);
    expect(ev.outcome.attempts.map((a) => [a.n, a.outcome])).toEqual([
      [1, 'reproduced'],
      [2, 'reproduced'],
    ]);
    expect(ev.outcome.confirmation).toEqual({ reproducedRuns: 1, totalRuns: 1 });
    expect(ev.candidateFix).toMatchObject({ answer: 'yes', result: 'fix_sensitive', diff: UPPER_FIX });
    expect(ev.candidateFix!.attempts.map((a) => a.result)).toEqual(['oracle_suspect', 'fix_sensitive']);
    // The round's tokens are counted once, in the step's usage, and the run's total holds them.
    expect(ev.candidateFix!.usage).toMatchObject({ inputTokens: 2000, outputTokens: 200 });
    expect(ev.candidateFix!.reattempt!.usage).toMatchObject({ inputTokens: 1000, outputTokens: 100 });
    expect(ev.outcome.usage).toMatchObject({ inputTokens: 4000, outputTokens: 400 });
    expect(progress.some((l) => /writing the reproduction again with that finding/.test(l))).toBe(true);
    const comment = buildResultComment(ev.outcome);
    expect(comment).toContain(
      '| **A candidate change makes this reproduction pass** | yes: it passes with the generated change below and fails without it ' +
        "(fix-sensitive). The first reproduction (attempt 1) still failed with candidate 1 although an independent check of the report's " +
        'expectation passed with it; written again with that finding, the reproduction (attempt 2, confirmed in 1/1 runs) fails without ' +
        'the change and passes with it, and replaced the first. |',
    );
  });

  it('a hope asserted after the failing check, which no run reaches, is taken out before the step: fix-sensitive at once', async () => {
    const hope = `${UPPER_TOLERANT}assert u > 3.6, f"upper([3.0]) is {u}, the reporter hopes for more"\n`;
    const { ev, why, requests } = await run([REPORT, answer(hope), candidateAnswer(UPPER_FIX, UPPER_CHECK)]);
    expect(ev.candidateFix, why).toMatchObject({ answer: 'yes', result: 'fix_sensitive', diff: UPPER_FIX });
    expect(ev.candidateFix!.reattempt).toBeUndefined();
    expect(requests).toHaveLength(3);
    const lines = ev.outcome.script!.split('\n');
    expect(lines).toHaveLength(hope.split('\n').length);
    expect(lines[7]).toBe(
      'pass  # RepGen: not checked, no run reaches it (each stops at line 7): assert u > 3.6, f"upper([3.0]) is {u}, the reporter hopes for more"',
    );
    expect((ev.outcome.notes ?? []).some((n) => n.startsWith('Took out 1 check(s) after the failed check at line 7'))).toBe(true);
    // The step ran the edited script: with the patch it passes (the hope would have failed it: 3.5999999999999996).
    expect(ev.candidateFix!.attempts[0]!.runs.map((r) => r.outcome)).toEqual(['passed', 'passed']);
    expect(buildResultComment(ev.outcome)).toContain(
      '1 check(s) marked `# RepGen: not checked` were taken out by RepGen: every run stopped at the failed check before them',
    );
  });

  it('the check also fails with the patch: no re-attempt, the candidate step asks for another patch as before', async () => {
    const { ev, why, requests } = await run([
      REPORT,
      answer(UPPER_NARROW),
      candidateAnswer(UPPER_FIX, UPPER_NARROW_CHECK),
      candidateAnswer(UPPER_FIX, UPPER_NARROW_CHECK),
    ]);
    expect(
      ev.candidateFix!.attempts.map((a) => a.result),
      why,
    ).toEqual(['still_fails', 'still_fails']);
    expect(ev.candidateFix!.attempts[0]!.check).toMatchObject({ unpatched: 'failed', patched: 'failed' });
    expect(ev.candidateFix!.reattempt).toBeUndefined();
    expect(ev.outcome.candidateFix!.reattempt).toBeUndefined();
    expect(requests).toHaveLength(4);
    expect(ev.outcome.script).toBe(UPPER_NARROW);
  });

  it('one round only: a round that writes the narrow oracle again ends still failing, the first stays, no second round', async () => {
    const { ev, why, requests } = await run([
      REPORT,
      answer(UPPER_NARROW),
      candidateAnswer(UPPER_FIX, UPPER_CHECK),
      answer(UPPER_NARROW),
      // Never asked for: a second round would take it.
      answer(UPPER_TOLERANT),
    ]);
    const r = ev.candidateFix!.reattempt!;
    expect(r, why).toMatchObject({ status: 'still_fails', adopted: false, attempts: [2] });
    expect(r.rerun!.result).toBe('oracle_suspect');
    expect(requests).toHaveLength(4);
    expect(ev.outcome.script).toBe(UPPER_NARROW);
    expect(ev.outcome.attempts.map((a) => a.n)).toEqual([1]);
    expect(ev.candidateFix).toMatchObject({ answer: 'no', result: 'oracle_suspect' });
    expect(buildResultComment(ev.outcome)).toMatch(
      /written again with that finding \(attempt 2, confirmed in 1\/1 runs\), it still fails with the change, so the first stays/,
    );
  });

  it("the budget bounds the round: the run's attempt cap already reached means no round and no model call", async () => {
    const { ev, why, requests } = await run(
      [REPORT, answer(UPPER_NARROW), candidateAnswer(UPPER_FIX, UPPER_CHECK), answer(UPPER_TOLERANT)],
      {
        maxAttempts: 1,
      },
    );
    expect(ev.candidateFix!.reattempt, why).toMatchObject({ status: 'not_made', attempts: [], feedback: '', adopted: false });
    expect(ev.candidateFix!.reattempt!.reason).toBe("the run's cap of 1 tier-1 attempts is reached (1 made)");
    expect(requests).toHaveLength(3);
    expect(ev.outcome.candidateFix!.reattempt).toMatch(/it was not written again: the run's cap of 1 tier-1 attempts is reached/);
  });

  it("the run's token cap holds the round: the candidate's tokens spent it, so no round and no model call", async () => {
    const usage = (input_tokens: number) => ({ usage: { input_tokens, output_tokens: 100 } });
    const { ev, why, requests } = await run(
      [
        { text: REPORT, ...usage(100) },
        { text: answer(UPPER_NARROW), ...usage(100) },
        { text: candidateAnswer(UPPER_FIX, UPPER_CHECK), ...usage(50_000) },
        answer(UPPER_TOLERANT),
      ],
      { maxTokens: 50_000 },
    );
    expect(ev.candidateFix!.reattempt, why).toMatchObject({ status: 'not_made', attempts: [], adopted: false });
    expect(ev.candidateFix!.reattempt!.reason).toBe('the token budget (50000) is spent (50500 used)');
    expect(requests).toHaveLength(3);
    expect(ev.outcome.usage.inputTokens + ev.outcome.usage.outputTokens).toBe(50_500);
  });

  it('the round makes at most attemptsPerBundle attempts, then the first reproduction stays', async () => {
    const passes = 'from toylib.stats import upper\n\nprint(upper([3.0]))\n';
    const { ev, why, requests } = await run(
      [REPORT, answer(UPPER_NARROW), candidateAnswer(UPPER_FIX, UPPER_CHECK), answer(passes), answer(passes), answer(UPPER_TOLERANT)],
      { attemptsPerBundle: 2, maxAttempts: 5 },
    );
    expect(ev.candidateFix!.reattempt, why).toMatchObject({ status: 'not_reproduced', attempts: [2, 3], adopted: false });
    expect(requests).toHaveLength(5);
    expect(ev.outcome.script).toBe(UPPER_NARROW);
  });
});
