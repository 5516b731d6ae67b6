import { afterEach, describe, expect, it } from 'vitest';
import { createPyflakesChecker } from '../../src/agent/pyflakes-checker.js';
import type { ContextResult } from '../../src/context/types.js';
import { CancelledError } from '../../src/errors.js';
import { createLlmClient } from '../../src/llm/index.js';
import type { LlmClient } from '../../src/llm/types.js';
import { silentLogger } from '../../src/log.js';
import { runReproWithEvidence, type ReproDeps } from '../../src/pipeline/run-repro.js';
import { ReproSettings, type ReproSettingsInput } from '../../src/pipeline/settings.js';
import type { StageName } from '../../src/pipeline/types.js';
import { fakeStaticPython, FAKE_PYLINT_FINDING } from '../fakes/fake-static-python.js';
import { startScriptedAnthropicServer, type AnthropicResponse, type ScriptedServer } from '../helpers/anthropic-wire-server.js';
import { FakeExecutor, type FakeResponder } from '../fakes/fake-executor.js';
import type { RunRequestInput } from '../../src/exec/types.js';
import {
  answer,
  CRASH_ISSUE,
  FAKED_SCRIPT,
  GOOD_SCRIPT,
  IRRELEVANT_SCRIPT,
  probeRun,
  simulate,
  SIZES_CRASH,
  SIZES_ISSUE,
  STATIC_ERROR_SCRIPT,
  SYNTAX_ERROR_SCRIPT,
  WRONG_SCRIPT,
} from '../fakes/repro-fixtures.js';
import { waitFor } from '../helpers/poll.js';

let server: ScriptedServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

// pylint adds ~1.5 s a script and finds nothing pyflakes misses in these scripts: off for speed here.
const checker = createPyflakesChecker({ pylint: false });

/** The restructured report the model gives first (stage 2), before any script. */
const REPORT_ANSWER =
  '```json\n' +
  JSON.stringify({
    coreProblem: 'nn.Linear called on a batch with the wrong number of features',
    observed: 'RuntimeError: mat1 and mat2 shapes cannot be multiplied (4x3 and 5x2)',
    expected: 'not stated',
    steps: ['build nn.Linear(5, 2)', 'call it on a (4, 3) batch'],
    environment: { framework: 'pytorch', hardware: 'not stated', data: 'a (4, 3) float batch' },
  }) +
  '\n```';

/** A model over the Anthropic wire fake: the report answer first, then the scripted agent answers. */
async function llmOver(responses: AnthropicResponse[], { report = true } = {}): Promise<LlmClient> {
  server = await startScriptedAnthropicServer(report ? [REPORT_ANSWER, ...responses] : responses);
  const llm = await createLlmClient({
    provider: 'anthropic',
    apiKey: 'sk-test-key',
    baseURL: server.url,
    maxRetries: 0,
    initialBackoffMs: 1,
    timeoutMs: 5_000,
  });
  if (!llm) throw new Error('expected a client');
  return llm;
}

/** The messages of the agent's i-th model call (0-based; the report call comes before them). */
function promptOf(i: number): string {
  const body = server?.requests[i + 1]?.body as { messages: { role: string; content: string }[] } | undefined;
  return body?.messages.map((m) => m.content).join('\n---\n') ?? '';
}

async function reproduce(
  opts: {
    issue?: string;
    llm?: LlmClient | null;
    respond?: FakeResponder;
    settings?: ReproSettingsInput;
    deps?: Partial<ReproDeps>;
    repoDir?: string;
  },
  signal?: AbortSignal,
) {
  const executor = new FakeExecutor(opts.respond ?? simulate);
  const stages: StageName[] = [];
  const evidence = await runReproWithEvidence(
    {
      issue: { title: '', body: opts.issue ?? CRASH_ISSUE },
      repoDir: opts.repoDir,
      settings: ReproSettings.parse({ pylint: false, ...opts.settings }),
    },
    { executor, llm: opts.llm ?? null, checker, log: silentLogger, progress: (s) => void stages.push(s), ...opts.deps },
    signal,
  );
  return { evidence, outcome: evidence.outcome, executor, stages };
}

describe('tier 0 and the confirmation', () => {
  it('confirmation runs start in a slot tier 0 leaves free while a slower, lower-numbered candidate still runs', async () => {
    const asked: { seed: number | null; size: string }[] = [];
    // The first candidate shows nothing, and only once a confirmation run has started: the confirmations start while
    // it still runs, or the test ends at its timeout. The second reproduces at once.
    let confirmStarted = (): void => undefined;
    const firstConfirm = new Promise<void>((r) => (confirmStarted = r));
    const respond: FakeResponder = (req, script) => {
      if (req.entry === 'probe.py') return probeRun();
      const size = /size=(\d+)\)/.exec(script)?.[1] ?? '?';
      asked.push({ seed: req.seed ?? null, size });
      if (req.seed !== 0) confirmStarted();
      if (size === '224') return { stdout: 'ok\n', exitCode: 0, until: firstConfirm };
      if (size === '64') return { stderr: SIZES_CRASH, exitCode: 1 };
      return { stdout: 'ok\n', exitCode: 0 };
    };
    const { outcome, evidence } = await reproduce({ issue: SIZES_ISSUE, respond, settings: { tier0: true } });
    expect(outcome.status).toBe('reproduced');
    expect(outcome.attempts.map((a) => a.outcome)).toEqual(['run_mismatch', 'reproduced']);
    expect(outcome.confirmation).toEqual({ reproducedRuns: 3, totalRuns: 3 });
    const confirms = asked.filter((a) => a.seed !== 0);
    // Each seed ran once, all of them of the winning script.
    expect(confirms.map((a) => a.seed).sort()).toEqual([1, 1001, 2001]);
    expect(confirms.every((a) => a.size === '64')).toBe(true);
    expect(evidence.confirm?.runs.map((r) => r.seed)).toEqual([1, 1001, 2001]);
    // No higher-numbered candidate ran once the second had reproduced.
    expect(asked.filter((a) => a.seed === 0).map((a) => a.size)).toEqual(['224', '64']);
  });

  it('confirmation runs started for a candidate that then loses to a lower-numbered one are cancelled and not counted', async () => {
    const asked: { seed: number | null; size: string }[] = [];
    let earlyConfirmStarted = (): void => undefined;
    const earlyConfirm = new Promise<void>((r) => (earlyConfirmStarted = r));
    const respond: FakeResponder = (req, script) => {
      if (req.entry === 'probe.py') return probeRun();
      const size = /size=(\d+)\)/.exec(script)?.[1] ?? '?';
      asked.push({ seed: req.seed ?? null, size });
      // Both reproduce; the first, lower-numbered, only once the second's early confirmation runs have started: it
      // wins, and those runs, which never end on their own, must be cancelled (waited for, the test would time out).
      if (size === '224') return { stderr: SIZES_CRASH, exitCode: 1, until: earlyConfirm };
      if (size === '64' && req.seed !== 0) {
        earlyConfirmStarted();
        return { stderr: SIZES_CRASH, exitCode: 1, until: new Promise(() => undefined) };
      }
      if (size === '64') return { stderr: SIZES_CRASH, exitCode: 1 };
      return { stdout: 'ok\n', exitCode: 0 };
    };
    const { outcome, evidence } = await reproduce({ issue: SIZES_ISSUE, respond, settings: { tier0: true } });
    expect(outcome.status).toBe('reproduced');
    expect(outcome.attempts.map((a) => a.outcome)).toEqual(['reproduced', 'reproduced']);
    expect(outcome.script).toContain('size=224)');
    expect(evidence.confirm?.runs.map((r) => r.seed)).toEqual([1, 1001, 2001]);
    expect(asked.filter((a) => a.seed !== 0 && a.size === '224')).toHaveLength(3);
    // The losing script's early runs started, and were cancelled (they never end on their own).
    expect(asked.some((a) => a.seed !== 0 && a.size === '64')).toBe(true);
  });
});

describe('runRepro: one loop test per exit status', () => {
  it('reproduced: a generated script shows the crash, confirmed by 3 seeded re-runs', async () => {
    const llm = await llmOver([answer(GOOD_SCRIPT)]);
    const { outcome, executor, stages } = await reproduce({ llm });
    expect(outcome.status).toBe('reproduced');
    expect(outcome.confirmation).toEqual({ reproducedRuns: 3, totalRuns: 3 });
    expect(outcome.attempts).toHaveLength(1);
    expect(outcome.attempts[0]).toMatchObject({ n: 1, tier: 1, outcome: 'reproduced' });
    expect(outcome.script).toBe(GOOD_SCRIPT);
    // probe, the attempt, three confirmations with distinct seeds
    expect(executor.requests.map((r) => r.seed ?? null)).toEqual([null, 0, 1, 1001, 2001]);
    expect(executor.requests[1]?.versions).toEqual({ torch: '2.4.0' });
    expect(executor.requests[1]?.env.REPGEN_SEED).toBe('0');
    expect(outcome.usage.inputTokens).toBeGreaterThan(0);
    expect(outcome.environment).toMatchObject({ torch: '1.13.0', cuda: 'no', executor: 'fake' });
    expect(stages).toEqual(expect.arrayContaining(['intake', 'context', 'report', 'plan', 'agent', 'confirm', 'publish']));
  });

  it('not_reproduced: five wrong scripts on the only bundle, then it stops', async () => {
    const llm = await llmOver(Array.from({ length: 5 }, () => answer(WRONG_SCRIPT)));
    const { outcome } = await reproduce({ llm });
    expect(outcome.status).toBe('not_reproduced');
    expect(outcome.attempts.map((a) => a.outcome)).toEqual(Array(5).fill('run_mismatch'));
    expect(outcome.summary).toMatch(/no attempt reproduced the bug \(5 tier-1 attempts over the report alone\)/);
    expect(server?.remaining()).toBe(0);
  });

  it('needs_info: no code, no model — and it lists exactly what the report lacks', async () => {
    const { outcome, executor } = await reproduce({ issue: CRASH_ISSUE.replace('torch==2.4.0', '') });
    expect(outcome.status).toBe('needs_info');
    expect(outcome.needsInfo.join('\n')).toMatch(/the code that triggers the bug/);
    expect(outcome.needsInfo.join('\n')).toMatch(/versions: the framework/);
    expect(executor.requests.filter((r) => r.entry === 'repro.py')).toHaveLength(0);
  });

  it('needs_info: a report that shows no error or output at all', async () => {
    const { outcome } = await reproduce({ issue: '# My model is weird\n\nIt does not work well, please help.\n' });
    expect(outcome.status).toBe('needs_info');
    expect(outcome.summary).toMatch(/nothing a run could be checked against/);
    expect(outcome.needsInfo.join('\n')).toMatch(/what the bug looks like/);
  });

  it('with a model, code alone starts tier 1 (issue 40: needs_info only for a report with no code, output or expectation)', async () => {
    const issue = [
      '# draw_line draws in the wrong place',
      '',
      '```python',
      'import torch',
      'img = torch.ones(3, 8, 8)',
      'print(img.sum())',
      '```',
      '',
      '```console',
      'Collecting environment information...',
      'PyTorch version: 1.8.2',
      'ROCM used to build PyTorch: N/A',
      '```',
    ].join('\n');
    const llm = await llmOver([answer(WRONG_SCRIPT)]);
    const { outcome } = await reproduce({ issue, llm, settings: { tier0: false, maxAttempts: 1 } });
    expect(outcome.status).not.toBe('needs_info');
    expect(outcome.attempts).toEqual([expect.objectContaining({ tier: 1 })]);
    // The report call and one script: the model was asked.
    expect(server?.remaining()).toBe(0);
  });

  it('needs_info never asks for what the report contains: its output, its expectation, a version it gives in words', async () => {
    const issue = [
      '# Scripting regressed',
      '',
      'Started appearing with 1.0.7. Scripting the model gives "revious return statement returned a value of type Dict".',
    ].join('\n');
    const { outcome } = await reproduce({ issue });
    const asked = outcome.needsInfo.join('\n');
    expect(asked).not.toMatch(/what the bug looks like/);
    expect(asked).not.toMatch(/versions: the framework/);
  });

  it('exit_budget: the token budget runs out before the bug shows', async () => {
    const llm = await llmOver([{ text: answer(WRONG_SCRIPT), usage: { input_tokens: 900, output_tokens: 200 } }]);
    const { outcome } = await reproduce({ llm, settings: { maxTokens: 1000 } });
    expect(outcome.status).toBe('exit_budget');
    expect(outcome.summary).toMatch(/token budget \(1000\) is spent \(\d+ used\)/);
    expect(outcome.usage.inputTokens + outcome.usage.outputTokens).toBeGreaterThanOrEqual(1100);
    expect(outcome.attempts).toHaveLength(1);
  });

  it("exit_budget: the cost budget, priced from the model's price table", async () => {
    const llm = await llmOver([{ text: answer(WRONG_SCRIPT), usage: { input_tokens: 400_000, output_tokens: 10 } }]);
    const { outcome } = await reproduce({ llm, settings: { maxCostUsd: 0.5, maxTokens: 10_000_000 } });
    expect(outcome.status).toBe('exit_budget');
    expect(outcome.summary).toMatch(/cost budget \(\$0\.5\) is spent \(\$0\.\d+ used\)/);
    expect(outcome.usage.costUsd).toBeGreaterThan(0.5);
  });

  it('exit_budget: the attempt cap and the wall clock', async () => {
    const llm = await llmOver([answer(WRONG_SCRIPT), answer(WRONG_SCRIPT)]);
    const capped = await reproduce({ llm, settings: { maxAttempts: 2 } });
    expect(capped.outcome.status).toBe('exit_budget');
    expect(capped.outcome.summary).toMatch(/cap of 2 tier-1 attempts/);
    await server?.close();
    const llm2 = await llmOver([]);
    let t = 0;
    const late = await reproduce({ llm: llm2, settings: { wallClockMs: 1000 }, deps: { now: () => (t += 1000) } });
    expect(late.outcome.status).toBe('exit_budget');
    expect(late.outcome.summary).toMatch(/wall-clock budget/);
  });

  it('exit_infra: the executor cannot run anything', async () => {
    const { outcome } = await reproduce({
      respond: () => ({ exitCode: null, infra: { kind: 'spawn_failed', message: 'python3: not found' } }),
    });
    expect(outcome.status).toBe('exit_infra');
    expect(outcome.summary).toMatch(/spawn_failed: python3: not found/);
  });

  it('exit_infra: a stage tool that fails unexpectedly (the static checker cannot start) ends the run cleanly', async () => {
    const llm = await llmOver([answer(GOOD_SCRIPT)]);
    const broken = {
      check: async () => {
        throw new Error('spawn /no/python ENOENT');
      },
    };
    const { outcome } = await reproduce({ llm, deps: { checker: broken } });
    expect(outcome.status).toBe('exit_infra');
    expect(outcome.summary).toMatch(/Error: spawn \/no\/python ENOENT/);
  });

  it('exit_infra: the model rejects the API key', async () => {
    const llm = await llmOver([{ error: 'authentication_error' }]);
    const { outcome } = await reproduce({ llm });
    expect(outcome.status).toBe('exit_infra');
    expect(outcome.summary).toMatch(/model is unavailable/);
  });
});

describe('runRepro: refinement feeds every failure back', () => {
  it('refines after a syntax error (tree-sitter), with the line in the feedback', async () => {
    const llm = await llmOver([answer(SYNTAX_ERROR_SCRIPT), answer(GOOD_SCRIPT)]);
    const { outcome, executor } = await reproduce({ llm });
    expect(outcome.status).toBe('reproduced');
    expect(outcome.attempts.map((a) => a.outcome)).toEqual(['syntax_error', 'reproduced']);
    expect(outcome.attempts[0]?.feedback).toMatch(/does not parse as Python:\nline 3/);
    expect(promptOf(1)).toMatch(/failed at the structural \(tree-sitter parse\) check/);
    expect(executor.scripts().filter((s) => s.includes('def build(:'))).toHaveLength(0);
  });

  it('refines after a static error (pyflakes undefined name)', async () => {
    const llm = await llmOver([answer(STATIC_ERROR_SCRIPT), answer(GOOD_SCRIPT)]);
    const { outcome } = await reproduce({ llm });
    expect(outcome.attempts.map((a) => a.outcome)).toEqual(['static_error', 'reproduced']);
    expect(outcome.attempts[0]?.feedback).toMatch(/undefined name 'np' \[pyflakes\]/);
    expect(promptOf(1)).toContain("undefined name 'np'");
  });

  it('refines after a wrong symptom, with expected vs observed and the output', async () => {
    const llm = await llmOver([answer(WRONG_SCRIPT), answer(GOOD_SCRIPT)]);
    const { outcome } = await reproduce({ llm });
    expect(outcome.attempts.map((a) => a.outcome)).toEqual(['run_mismatch', 'reproduced']);
    const refine = promptOf(1);
    expect(refine).toMatch(/Expected: RuntimeError: mat1 and mat2 shapes cannot be multiplied/);
    expect(refine).toMatch(/Observed: .*expected scalar type Long but found Float/);
    expect(refine).toContain('out = layer(x.long())');
  });

  it('rejects a faked bug (raising the reported exception itself) without running it', async () => {
    const llm = await llmOver([answer(FAKED_SCRIPT), answer(IRRELEVANT_SCRIPT), answer(GOOD_SCRIPT)]);
    const { outcome, executor } = await reproduce({ llm });
    expect(outcome.attempts.map((a) => a.outcome)).toEqual(['faked_bug', 'irrelevant', 'reproduced']);
    expect(outcome.attempts[0]?.feedback).toMatch(/raises RuntimeError itself/);
    expect(outcome.attempts[1]?.feedback).toMatch(/uses none of what the report is about/);
    expect(executor.scripts().some((s) => s.includes('raise RuntimeError'))).toBe(false);
    expect(outcome.status).toBe('reproduced');
  });

  it('rejects a script importing a package the interpreter cannot import, before running it (cached probe)', async () => {
    const llm = await llmOver([answer(`import transformers\n${GOOD_SCRIPT}`), answer(GOOD_SCRIPT)]);
    const { outcome, executor } = await reproduce({ llm });
    expect(outcome.attempts.map((a) => a.outcome)).toEqual(['unavailable_here', 'reproduced']);
    expect(outcome.attempts[0]?.feedback).toMatch(/package `transformers` is not installed here/);
    expect(executor.scripts().some((s) => s.includes('import transformers'))).toBe(false);
    expect(executor.requests.filter((r) => r.entry === 'probe.py')).toHaveLength(1);
  });

  it('switches to the next context bundle after 5 failures on one', async () => {
    const context: ContextResult = {
      bundles: [
        {
          rank: 1,
          tokens: 10,
          chunks: [
            {
              path: 'a.py',
              startLine: 1,
              endLine: 2,
              kind: 'function',
              symbol: 'first',
              score: 1,
              reasons: ['bm25 rank 1'],
              text: 'def first_bundle_code(): pass',
            },
          ],
        },
        {
          rank: 2,
          tokens: 10,
          chunks: [
            {
              path: 'b.py',
              startLine: 1,
              endLine: 2,
              kind: 'function',
              symbol: 'second',
              score: 0.5,
              reasons: ['bm25 rank 2'],
              text: 'def second_bundle_code(): pass',
            },
          ],
        },
      ],
      trainingLoops: [],
      semantic: 'off: test',
      timings: {},
    };
    const llm = await llmOver([...Array.from({ length: 5 }, () => answer(WRONG_SCRIPT)), answer(GOOD_SCRIPT)]);
    const { outcome, evidence } = await reproduce({ llm, repoDir: '/nonexistent-repo', deps: { buildContext: async () => context } });
    expect(outcome.status).toBe('reproduced');
    expect(outcome.attempts.map((a) => a.bundle)).toEqual([1, 1, 1, 1, 1, 2]);
    expect(promptOf(4)).toContain('first_bundle_code');
    expect(promptOf(5)).toContain('second_bundle_code');
    expect(promptOf(5)).not.toContain('first_bundle_code');
    expect(evidence.context).toMatchObject({ bundles: 2, ranks: [1, 2] });
  });

  it('moves to the next bundle when the prompt is too long for the model', async () => {
    const chunk = (rank: number, text: string) => ({
      rank,
      tokens: 10,
      chunks: [{ path: `m${rank}.py`, startLine: 1, endLine: 1, kind: 'function' as const, score: 1, reasons: ['bm25'], text }],
    });
    const context: ContextResult = {
      bundles: [chunk(1, 'def huge_bundle(): pass'), chunk(2, 'def small_bundle(): pass')],
      trainingLoops: [],
      semantic: 'off',
      timings: {},
    };
    const llm = await llmOver([{ error: 'request_too_large' }, answer(GOOD_SCRIPT)]);
    const { outcome } = await reproduce({ llm, repoDir: '/repo', deps: { buildContext: async () => context } });
    expect(outcome.attempts.map((a) => [a.bundle, a.outcome])).toEqual([
      [1, 'llm_error'],
      [2, 'reproduced'],
    ]);
    expect(outcome.attempts[0]?.feedback).toMatch(/too long for the model .*; next bundle/);
    expect(outcome.status).toBe('reproduced');
  });

  it('a failing context builder is said and skipped, not fatal', async () => {
    const llm = await llmOver([answer(GOOD_SCRIPT)]);
    const { outcome } = await reproduce({
      llm,
      repoDir: '/x',
      deps: {
        buildContext: async () => {
          throw new Error('repo is not a directory');
        },
      },
    });
    expect(outcome.status).toBe('reproduced');
    expect(outcome.notes?.join('\n')).toMatch(/context building failed \(repo is not a directory\)/);
  });
});

describe('runRepro: a model that answers garbage or nothing', () => {
  it('feeds a malformed answer back once, then counts a failed attempt — never a crash', async () => {
    const llm = await llmOver(['I am sorry, I cannot write that.', '', { raw: '{not json', status: 200 }, answer(GOOD_SCRIPT)]);
    const { outcome } = await reproduce({ llm });
    expect(outcome.attempts.map((a) => a.outcome)).toEqual(['llm_malformed', 'llm_malformed', 'reproduced']);
    expect(promptOf(1)).toMatch(/could not be used: it has no ```python code block/);
    expect(outcome.status).toBe('reproduced');
  });

  it('ends not_reproduced when every answer is empty', async () => {
    const llm = await llmOver(Array.from({ length: 10 }, () => ''));
    const { outcome } = await reproduce({ llm });
    expect(outcome.status).toBe('not_reproduced');
    expect(outcome.attempts.map((a) => a.outcome)).toEqual(Array(5).fill('llm_malformed'));
  });
});

describe('runRepro: cancellation', () => {
  it('throws CancelledError mid-run and stops the executor', async () => {
    const llm = await llmOver([answer(GOOD_SCRIPT)]);
    const controller = new AbortController();
    // The script's run never ends on its own: it is aborted as soon as it starts, so only the cancellation ends it.
    const respond: FakeResponder = (req, script) => {
      if (req.entry !== 'repro.py') return simulate(req, script);
      queueMicrotask(() => controller.abort());
      return { ...simulate(req, script), until: new Promise(() => undefined) };
    };
    await expect(reproduce({ llm, respond }, controller.signal)).rejects.toBeInstanceOf(CancelledError);
  });

  it('throws CancelledError when the model call is in flight', async () => {
    const llm = await llmOver([{ hang: true }]);
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 300);
    await expect(reproduce({ llm }, controller.signal)).rejects.toBeInstanceOf(CancelledError);
  });
});

describe('runRepro: the late pylint -E check (default checker)', () => {
  const withCode = (script: string) => `${CRASH_ISSUE}\n\`\`\`python\n${script}\`\`\`\n`;

  it('is aborted, its process killed and its findings unused, when tier 0 reproduces', async () => {
    // The fake pylint would answer after an hour, long past the test's timeout: the run ends only if it is not waited for.
    const lint = fakeStaticPython(3600);
    try {
      // Tier 0's run waits until pylint has started, so that there is a pylint process to abort.
      const executor = new FakeExecutor(simulate);
      const run = executor.run.bind(executor);
      executor.run = async (input: RunRequestInput, sig?: AbortSignal) => {
        if (input.entry === 'repro.py') await waitFor(() => lint.started().some((t) => t.tool === 'pylint'), { what: 'pylint started' });
        return run(input, sig);
      };
      const { outcome, evidence } = await reproduce({
        issue: withCode(GOOD_SCRIPT),
        settings: { pylint: true, staticPython: lint.python },
        deps: { checker: undefined, executor },
      });
      expect(outcome.status).toBe('reproduced');
      expect(outcome.attempts[0]).toMatchObject({ tier: 0, outcome: 'reproduced' });
      const pylint = lint.started().find((t) => t.tool === 'pylint');
      expect(pylint).toBeDefined();
      expect(lint.alive(pylint!.pid)).toBe(false);
      expect(evidence.tier0?.staticTools).toEqual(['pyflakes']);
      expect(outcome.notes).toContain("pylint -E skipped: the run reproduced the bug; the static report is pyflakes' alone");
    } finally {
      lint.cleanup();
    }
  });

  it('still lands, and its finding decides, when tier 0 does not reproduce and there is no model', async () => {
    const lint = fakeStaticPython(0.3);
    try {
      const { outcome, evidence } = await reproduce({
        issue: withCode(WRONG_SCRIPT),
        settings: { pylint: true, staticPython: lint.python },
        deps: { checker: undefined },
      });
      expect(outcome.attempts[0]).toMatchObject({ tier: 0, outcome: 'run_mismatch' });
      expect(evidence.tier0?.staticTools).toEqual(['pyflakes', 'pylint -E']);
      expect(outcome.status).toBe('needs_info');
      expect(outcome.summary).toMatch(/does not compile as posted/);
      expect(outcome.needsInfo.join('\n')).toContain(FAKE_PYLINT_FINDING);
      expect(outcome.notes?.some((n) => n.startsWith('pylint -E skipped'))).toBe(false);
    } finally {
      lint.cleanup();
    }
  });
});

describe("runRepro: the environment probe under the report's setup lines", () => {
  const respond: FakeResponder = (req) => (req.entry === 'probe.py' ? probeRun() : { stdout: 'ok\n', exitCode: 0 });
  const code = '```python\nimport keras\nprint(keras.layers.Dense(2))\n```\n';

  it("imports Keras on the backend the report's words name when its code sets none, as the env's proof does", async () => {
    const { executor } = await reproduce({ issue: `Dense is wrong with the torch backend.\n\n${code}`, respond });
    const probes = executor.requests.filter((r) => r.entry === 'probe.py');
    expect(probes.length).toBeGreaterThan(0);
    expect(probes.every((r) => r.env?.KERAS_BACKEND === 'torch')).toBe(true);
  });

  it("tier 0 runs the report's code with that backend set before its imports, and says so", async () => {
    const { executor, outcome } = await reproduce({ issue: `Dense is wrong with the torch backend.\n\n${code}`, respond });
    const run = executor.requests.find((r) => r.entry === 'repro.py');
    const script = run?.files?.find((f) => f.path === 'repro.py')?.content ?? '';
    expect(script.split('\n').slice(0, 3)).toEqual([
      'import os  # added by RepGen',
      'os.environ.setdefault("KERAS_BACKEND", "torch")  # added by RepGen',
      'import keras',
    ]);
    expect(outcome.attempts[0]?.edits).toContain(
      'set KERAS_BACKEND=torch before the imports: the report names it in words, its code sets none',
    );
  });

  it('sets no backend where the report names none', async () => {
    const { executor } = await reproduce({ issue: `Dense is wrong.\n\n${code}`, respond });
    const probes = executor.requests.filter((r) => r.entry === 'probe.py');
    expect(probes.length).toBeGreaterThan(0);
    expect(probes.some((r) => r.env && 'KERAS_BACKEND' in r.env)).toBe(false);
    const script = executor.requests.find((r) => r.entry === 'repro.py')?.files?.find((f) => f.path === 'repro.py')?.content ?? '';
    expect(script).not.toMatch(/KERAS_BACKEND/);
  });
});
