import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { StaticChecker } from '../../src/agent/static-checker.js';
import { Cassette, hashLlmRequest, recordSession, replayCassette, replaySettings, writeCassette } from '../../src/cassettes/index.js';
import { LlmBadResponseError, LlmTimeoutError, type LlmClient, type LlmRequest } from '../../src/llm/index.js';
import type { ReproInput } from '../../src/pipeline/ports.js';
import { CANDIDATE_PROMPT_MARK } from '../../src/pipeline/stages/candidate-fix/candidate-prompt.js';
import type { ReproOutcome } from '../../src/pipeline/types.js';
import { fakeRunResult } from '../fakes/fake-executor.js';
import { makeTempDir } from '../helpers/temp-dir.js';

/** A scripted model: answers in order, or throws what the script says. */
function scriptedLlm(replies: (string | Error)[]): LlmClient {
  let i = 0;
  return {
    provider: 'openai',
    model: 'scripted',
    complete: async () => {
      const r = replies[i++];
      if (r === undefined || r instanceof Error) throw r ?? new Error('no more replies');
      return { text: r, model: 'scripted', stopReason: 'stop', usage: { inputTokens: 10, outputTokens: 5, costUsd: 0 } };
    },
  };
}
const checker: StaticChecker = {
  check: async (script) => ({
    findings: script.includes('undefined_name')
      ? [{ line: 1, message: "undefined name 'undefined_name'", severity: 'error', tool: 'pyflakes' }]
      : [],
    undefinedNames: [],
    tools: ['pyflakes'],
  }),
};
const executor = {
  name: 'fake',
  run: async (req: { files: { content: string }[] }) => fakeRunResult({ stdout: `ran ${req.files[0]?.content.length}\n` }),
};
const outcome = {
  status: 'not_reproduced',
  summary: 's',
  attempts: [{ n: 1, tier: 1, bundle: null, outcome: 'run_mismatch', feedback: '', script: 'x' }],
  confirmation: null,
  usage: { inputTokens: 20, outputTokens: 10, costUsd: 0 },
  durationMs: 5,
} as unknown as ReproOutcome;
const ask = (content: string, system = 'sys'): LlmRequest => ({ system, messages: [{ role: 'user', content }] });

async function recorded(): Promise<Cassette> {
  const rec = recordSession(
    scriptedLlm(['first', new LlmTimeoutError('no answer within 10 ms', { provider: 'openai' }), 'third']),
    executor,
    checker,
  );
  await rec.llm.complete(ask('one'));
  await expect(rec.llm.complete(ask('two'))).rejects.toThrow(LlmTimeoutError);
  await rec.llm.complete(ask('three'));
  await rec.executor.run({ files: [{ path: 'repro.py', content: 'print(1)' }], entry: 'repro.py', seed: 1 });
  await rec.executor.run({ files: [{ path: 'repro.py', content: 'print(22)' }], entry: 'repro.py' });
  await rec.checker.check('undefined_name\n');
  return rec.cassette({
    caseId: 'case-a',
    issueText: 'issue',
    settings: { maxAttempts: 2 },
    outcome,
    judge: { reproduced: false, line: 'no' },
  });
}

describe('recording a session', () => {
  it('keeps every request with its hash, each reply or error, each run and static check, and the outcome; validates it', async () => {
    const c = await recorded();
    expect(c.calls.map((k) => k.response?.text ?? k.error?.name)).toEqual(['first', 'LlmTimeoutError', 'third']);
    expect(c.executor).toBe('fake');
    expect(c.calls[0]?.requestHash).toBe(hashLlmRequest(ask('one')));
    expect(c.runs.map((r) => [r.seed, r.result.stdout])).toEqual([
      [1, 'ran 8\n'],
      [null, 'ran 9\n'],
    ]);
    expect(c.checks[0]?.report.findings[0]?.message).toMatch(/undefined name/);
    expect(c.outcome).toMatchObject({
      status: 'not_reproduced',
      attempts: [{ n: 1, tier: 1, outcome: 'run_mismatch' }],
      judge: { reproduced: false },
    });
    expect(() => Cassette.parse({ ...c, calls: [{ ...c.calls[0], response: null, error: null }] })).toThrow(
      /either a response or an error/,
    );
    expect(() => Cassette.parse({ ...c, extra: 1 })).toThrow();
  });

  it('writes <case>.json, then <case>.r2.json for a second recording of the same case', async () => {
    const dir = makeTempDir('cassettes-');
    const c = await recorded();
    expect(await writeCassette(dir, c)).toBe(join(dir, 'case-a.json'));
    expect(await writeCassette(dir, c)).toBe(join(dir, 'case-a.r2.json'));
    expect(Cassette.parse(JSON.parse(readFileSync(join(dir, 'case-a.r2.json'), 'utf8')))).toEqual(c);
    expect(await writeCassette(dir, { ...c, case: '../evil/../x' })).toBe(join(dir, '.._evil_.._x.json'));
  });
});

describe('replaying a cassette', () => {
  it('serves the same requests their replies with no drift, errors as LLM errors, runs and checks by what is run', async () => {
    const r = replayCassette(await recorded());
    expect((await r.llm.complete(ask('one'))).text).toBe('first');
    await expect(r.llm.complete(ask('two'))).rejects.toThrow(/LlmTimeoutError: no answer within 10 ms/);
    expect((await r.llm.complete(ask('three'))).text).toBe('third');
    // Runs out of their recorded order are still found by what they run.
    expect((await r.executor.run({ files: [{ path: 'repro.py', content: 'print(22)' }], entry: 'repro.py' })).stdout).toBe('ran 9\n');
    expect((await r.executor.run({ files: [{ path: 'repro.py', content: 'print(1)' }], entry: 'repro.py', seed: 1 })).stdout).toBe(
      'ran 8\n',
    );
    expect((await r.checker.check('undefined_name\n')).findings).toHaveLength(1);
    expect(r.drift).toEqual([]);
    expect(r.callsServed()).toBe(3);
  });

  it('a changed prompt is drift, reported with where it changed, and the recorded reply is still served by order', async () => {
    const r = replayCassette(await recorded());
    expect((await r.llm.complete(ask('one', 'sys v2'))).text).toBe('first');
    expect(r.drift).toEqual([{ port: 'llm', index: 1, message: 'system prompt changed (from line 1: recorded "", now " v2")' }]);
    await r.llm.complete(ask('two, reworded')).catch(() => undefined);
    expect(r.drift[1]?.message).toBe('message 1 (user) changed (from line 1: recorded "", now ", reworded")');
  });

  it('more model calls than recorded: a typed LLM error and drift; an unknown script: an infrastructure failure and drift', async () => {
    const r = replayCassette(await recorded());
    for (const q of ['one', 'two', 'three']) await r.llm.complete(ask(q)).catch(() => undefined);
    await expect(r.llm.complete(ask('four'))).rejects.toBeInstanceOf(LlmBadResponseError);
    const run = await r.executor.run({ files: [{ path: 'repro.py', content: 'print("new")' }], entry: 'repro.py' });
    expect(run.infra?.kind).toBe('sandbox_failed');
    expect((await r.checker.check('new script')).tools[0]).toMatch(/not in the cassette/);
    expect(r.drift.map((d) => d.port)).toEqual(['llm', 'executor', 'checker']);
  });
});

describe("replaying the candidate fix's request (issue 41)", () => {
  async function withCandidate(): Promise<Cassette> {
    const rec = recordSession(scriptedLlm(['report', 'patch']), executor, checker);
    await rec.llm.complete(ask('restructure the report'));
    await rec.llm.complete(ask(`${CANDIDATE_PROMPT_MARK} to the library. Sources: v1`));
    return rec.cassette({ caseId: 'case-c', issueText: 'issue', settings: {}, outcome, judge: null });
  }

  it('a candidate request whose text changed is reported, not drift, its reply served; what the step then does is still drift', async () => {
    const r = replayCassette(await withCandidate());
    await r.llm.complete(ask('restructure the report'));
    expect((await r.llm.complete(ask(`${CANDIDATE_PROMPT_MARK} to the library. Sources: v2, cut`))).text).toBe('patch');
    expect(r.drift).toEqual([]);
    expect(r.tolerated).toEqual([
      { port: 'llm', index: 2, message: expect.stringMatching(/^message 1 \(user\) changed/), candidateStep: true },
    ]);
    // A copy the recording never made, once the step has begun: drift, and marked as the step's.
    const copy = await r.copies.make({ hostPath: '/srv/p' }, ['p/m.py'], () => ({ ok: true, files: new Map() }));
    expect(copy.ok).toBe(false);
    expect(r.drift).toEqual([{ port: 'copies', index: 1, message: 'copy 1 (p/m.py) is not in the recording', candidateStep: true }]);
  });

  it('any other request that changed is drift as before, and so is a candidate request that is no longer one', async () => {
    const r = replayCassette(await withCandidate());
    await r.llm.complete(ask('restructure the report, reworded'));
    await r.llm.complete(ask('some other prompt'));
    expect(r.drift.map((d) => [d.port, d.index, d.candidateStep])).toEqual([
      ['llm', 1, undefined],
      ['llm', 2, undefined],
    ]);
    expect(r.tolerated).toEqual([]);
  });
});

describe("recording a session against a project's checkout", () => {
  const context = { bundles: [], trainingLoops: [], semantic: 'off: test', timings: { total: 1 } };
  const input = {
    issue: { title: 't', body: 'b' },
    repoDir: '/srv/checkouts/p',
    workspace: { hostPath: '/srv/checkouts/p', project: 'o/p @ abc', packages: ['p'] },
    settings: {},
  } as unknown as ReproInput;

  it('keeps the workspace and what the context builder returned, and passes both through unchanged', async () => {
    const rec = recordSession(scriptedLlm([]), executor, checker);
    let seenContext: unknown = null;
    const stages = rec.stages(async (i, deps) => {
      seenContext = await deps.buildContext?.({ repoDir: i.repoDir ?? '', report: { title: '', body: '' }, top: 1, tokenBudget: 1 });
      return { outcome } as never;
    });
    await stages(input, { buildContext: async () => context } as never, new AbortController().signal);
    expect(seenContext).toEqual(context);
    const c = rec.cassette({ caseId: 'p-1', issueText: 'b', settings: {}, outcome, judge: null });
    expect(c.project).toEqual({ repoDir: '/srv/checkouts/p', workspace: input.workspace, context });
    expect(Cassette.parse(JSON.parse(JSON.stringify(c))).project?.workspace.packages).toEqual(['p']);
  });

  it("keeps the exports tier 0 read from the checkout, so a replay needs no checkout to complete the report's code", async () => {
    const dir = makeTempDir('cassette-exports-');
    mkdirSync(join(dir, 'p'));
    writeFileSync(join(dir, 'p', '__init__.py'), 'from .ops import parse_shape\n');
    writeFileSync(join(dir, 'p', 'ops.py'), 'def parse_shape(x, pattern):\n    return {}\n');
    const rec = recordSession(scriptedLlm([]), executor, checker);
    const workspace = { hostPath: dir, packages: ['p'] };
    let seen: unknown = null;
    await rec.stages(async (_i, deps) => {
      seen = await deps.projectExports?.(workspace);
      return { outcome } as never;
    })({ ...input, repoDir: dir, workspace }, {} as never, new AbortController().signal);
    expect(seen).toEqual({ parse_shape: 'p' });
    const c = Cassette.parse(
      JSON.parse(JSON.stringify(rec.cassette({ caseId: 'p-2', issueText: 'b', settings: {}, outcome, judge: null }))),
    );
    expect(c.project?.exports).toEqual({ parse_shape: 'p' });
  });

  it('a session with no checkout records no project', async () => {
    const rec = recordSession(scriptedLlm([]), executor, checker);
    await rec.stages(async () => ({ outcome }) as never)(
      { ...input, workspace: undefined, repoDir: undefined },
      {} as never,
      new AbortController().signal,
    );
    expect(rec.cassette({ caseId: 'x', issueText: '', settings: {}, outcome, judge: null }).project).toBeUndefined();
  });
});

describe('the candidate-fix step in a cassette (issue 41)', () => {
  it('a recording says whether the step ran; a replay runs it as recorded, and off for a cassette that does not say', () => {
    const on = recordSession(scriptedLlm([]), executor, checker).cassette({
      caseId: 'c',
      issueText: '',
      settings: { suggestFix: true },
      outcome,
      judge: null,
    });
    const off = recordSession(scriptedLlm([]), executor, checker).cassette({
      caseId: 'c',
      issueText: '',
      settings: { suggestFix: false },
      outcome,
      judge: null,
    });
    expect([on.candidateFix, off.candidateFix]).toEqual([true, false]);
    expect(replaySettings(on)).toMatchObject({ suggestFix: true });
    expect(replaySettings(off)).toMatchObject({ suggestFix: false });
    // Recorded before the step existed: the field is absent and the settings do not name it, yet the default is on.
    const before = Cassette.parse({ ...JSON.parse(JSON.stringify(off)), candidateFix: undefined, settings: { maxAttempts: 2 } });
    expect(before.candidateFix).toBeUndefined();
    expect(replaySettings(before)).toEqual({ maxAttempts: 2, suggestFix: false });
  });
});
