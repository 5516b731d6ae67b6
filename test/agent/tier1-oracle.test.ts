import { afterEach, describe, expect, it } from 'vitest';
import { createPyflakesChecker } from '../../src/agent/pyflakes-checker.js';
import { createLlmClient } from '../../src/llm/index.js';
import type { LlmClient } from '../../src/llm/types.js';
import { silentLogger } from '../../src/log.js';
import { runReproWithEvidence } from '../../src/pipeline/run-repro.js';
import { ReproSettings } from '../../src/pipeline/settings.js';
import { buildResultComment } from '../../src/publish/build-result-comment.js';
import { startScriptedAnthropicServer, type ScriptedServer } from '../helpers/anthropic-wire-server.js';
import { FakeExecutor, type FakeRun } from '../fakes/fake-executor.js';
import { answer, probeRun } from '../fakes/repro-fixtures.js';

/**
 * Tier 1 on a behavioural bug (issue 28): the report has code and says in words what it saw and what it expected,
 * with no crash. The model's script asserts the expectation; the loop must take that failing assertion as the
 * reproduction (it used to reject it as "the run crashed where the report shows no crash"), and must refuse an
 * assertion of a value the report never states, saying so in the feedback.
 */
const ISSUE = `# AvgPool1d with ceil_mode drops the last window

\`\`\`python
import torch
pool = torch.nn.AvgPool1d(2, ceil_mode=True)
y = pool(torch.zeros(1, 1, 7))
print(y.shape[-1])
\`\`\`

The pooled length returns 3, expected 4.
`;

const REPORT_ANSWER =
  '```json\n' +
  JSON.stringify({
    coreProblem: 'AvgPool1d with ceil_mode=True gives 3 windows for length 7',
    observed: 'the pooled length returns 3',
    expected: 'expected 4',
    steps: ['pool a length-7 signal with AvgPool1d(2, ceil_mode=True)'],
    environment: { framework: 'pytorch', hardware: 'not stated', data: 'zeros' },
  }) +
  '\n```';

const oracleScript = (value: string): string => `import torch

pool = torch.nn.AvgPool1d(2, ceil_mode=True)
n = pool(torch.zeros(1, 1, 7)).shape[-1]
print(f"pooled length = {n}")
assert n == ${value}, f"pooled length is {n}, the report expects ${value}"
`;

/** What Python prints for these scripts with the bug there (n is 3): the assertion on line 6 fails. */
function run(script: string): FakeRun {
  const m = /^assert n == (\d+).*$/m.exec(script);
  if (!m) return { stdout: 'pooled length = 3\n', exitCode: 0 };
  const line = script.split('\n').findIndex((l) => l.startsWith('assert')) + 1;
  return {
    stdout: 'pooled length = 3\n',
    stderr: `Traceback (most recent call last):\n  File "/tmp/repgen-run-x/repro.py", line ${line}, in <module>\n    ${m[0]}\nAssertionError: pooled length is 3, the report expects ${m[1]}\n`,
    exitCode: 1,
  };
}

let server: ScriptedServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function llmOver(responses: string[]): Promise<LlmClient> {
  server = await startScriptedAnthropicServer([REPORT_ANSWER, ...responses]);
  const llm = await createLlmClient({
    provider: 'anthropic',
    apiKey: 'sk-test',
    baseURL: server.url,
    maxRetries: 0,
    initialBackoffMs: 1,
    timeoutMs: 5_000,
  });
  if (!llm) throw new Error('expected a client');
  return llm;
}

function promptOf(i: number): string {
  const body = server?.requests[i + 1]?.body as { messages: { content: string }[] } | undefined;
  return body?.messages.map((m) => m.content).join('\n---\n') ?? '';
}

describe('tier 1 on a behavioural bug: the oracle assertion', () => {
  it('refuses an assertion of a value the report never states, then takes the failing assertion of the expected value as the reproduction', async () => {
    const llm = await llmOver([answer(oracleScript('5')), answer(oracleScript('4'))]);
    const executor = new FakeExecutor((req, script) => (req.entry === 'probe.py' ? probeRun() : run(script)));
    const evidence = await runReproWithEvidence(
      { issue: { title: '', body: ISSUE }, settings: ReproSettings.parse({ pylint: false, tier0: false }) },
      { executor, llm, checker: createPyflakesChecker({ pylint: false }), log: silentLogger, progress: () => undefined },
    );
    const o = evidence.outcome;
    // The generation prompt hands the model the expectation, its values and the report's words.
    expect(promptOf(0)).toMatch(/- value: expected 4, observed 3 — "returns 3, expected 4"/);
    expect(promptOf(0)).toMatch(/message that shows it/);
    expect(o.attempts.map((a) => a.outcome)).toEqual(['run_mismatch', 'reproduced']);
    expect(o.attempts[0]?.feedback).toMatch(/holds n to 5, which the report never states \(the report states: 4/);
    expect(o.attempts[0]?.feedback).not.toMatch(/crashed where the report shows no crash|shaped like the report's last line/);
    // The refine prompt carries that feedback to the model.
    expect(promptOf(1)).toMatch(/which the report never states/);
    expect(o.status).toBe('reproduced');
    expect(o.confirmation).toEqual({ reproducedRuns: 3, totalRuns: 3 });
    expect(o.match?.oracle).toMatchObject({
      expected: '4',
      reportObserved: '3',
      observed: 'pooled length is 3, the report expects 4',
      held: false,
    });
    const comment = buildResultComment(o);
    expect(comment).toContain('assert n == 4');
    expect(comment).toMatch(/\| \*\*Expected value\*\* \(from the report: “returns 3, expected 4”\) \| `4` \|/);
    expect(o.summary).toMatch(/^Reproduced the report's expectation failing \(expected 4, the report saw 3\) with a generated script/);
  });
});
