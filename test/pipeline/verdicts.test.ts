import { describe, expect, it } from 'vitest';
import { createPyflakesChecker } from '../../src/agent/pyflakes-checker.js';
import type { LlmClient, LlmRequest } from '../../src/llm/types.js';
import { silentLogger } from '../../src/log.js';
import { runReproWithEvidence } from '../../src/pipeline/run-repro.js';
import { ReproSettings } from '../../src/pipeline/settings.js';
import { confirmedByMajority, describeOddRuns } from '../../src/pipeline/stages/outcome/index.js';
import { FakeExecutor, type FakeResponder } from '../fakes/fake-executor.js';
import { CRASH_OUTPUT, probeRun } from '../fakes/repro-fixtures.js';

/**
 * The verdict rules of docs/verdicts.md through the whole pipeline (tier 0 with no model, and tier 1 with a scripted
 * one for the random-state case): the majority rule of the
 * confirmation stage, "pattern reproduced" for values of the reporter's random state, "no model" never asking the
 * reporter, and the reporter's own data asked for politely.
 */
const checker = createPyflakesChecker({ pylint: false });

const CRASH_REPORT = `# RuntimeError: mat1 and mat2 shapes cannot be multiplied (4x3 and 5x2)

\`\`\`python
import torch
import torch.nn as nn
layer = nn.Linear(5, 2)
x = torch.randn(4, 3)
out = layer(x)
\`\`\`

\`\`\`
${CRASH_OUTPUT}\`\`\`

It should give a (4, 2) output.

torch==2.4.0
`;

async function reproduce(body: string, respond: FakeResponder) {
  const executor = new FakeExecutor((req, script) => (req.entry === 'probe.py' ? probeRun() : respond(req, script)));
  const ev = await runReproWithEvidence(
    { issue: { title: '', body }, settings: ReproSettings.parse({ pylint: false, confirmRuns: 3 }) },
    { executor, llm: null, llmReason: 'no LLM: chosen with --llm none', checker, log: silentLogger, progress: () => undefined },
  );
  return { outcome: ev.outcome, executor };
}

/** Crashes for the given seeds, runs clean for the others. */
function crashOnSeeds(seeds: number[]): FakeResponder {
  return (req) => (seeds.includes(req.seed ?? 0) ? { stderr: CRASH_OUTPUT, exitCode: 1 } : { stdout: 'torch.Size([4, 2])\n', exitCode: 0 });
}

describe('confirmation: reproduced only when a majority of the seeded runs show it', () => {
  it('the rule itself: strictly more than half', () => {
    expect([0, 1, 2, 3].map((k) => confirmedByMajority({ reproducedRuns: k, totalRuns: 3 }))).toEqual([false, false, true, true]);
    expect(confirmedByMajority({ reproducedRuns: 2, totalRuns: 4 })).toBe(false);
  });

  it('3/3: reproduced, and the summary says in how many runs', async () => {
    const { outcome } = await reproduce(CRASH_REPORT, crashOnSeeds([0, 1, 1001, 2001]));
    expect(outcome).toMatchObject({ status: 'reproduced', verdict: 'reproduced', confirmation: { reproducedRuns: 3, totalRuns: 3 } });
    expect(outcome.summary).toMatch(/in 3 of 3 seeded re-runs\.$/);
  });

  it('2/3: reproduced, and what the odd run did is said', async () => {
    const { outcome } = await reproduce(CRASH_REPORT, crashOnSeeds([0, 1, 1001]));
    expect(outcome).toMatchObject({ status: 'reproduced', verdict: 'reproduced' });
    expect(outcome.summary).toMatch(
      /in 2 of 3 seeded re-runs\. The other: seed 2001: not \(no exception in the run; the report shows RuntimeError\)\.$/,
    );
    expect(outcome.confirmationRuns?.map((r) => r.verdict)).toEqual(['reproduced', 'reproduced', 'not_reproduced']);
  });

  it('1/3: "flaky 1/3", not reproduced, with what the two other runs did', async () => {
    const { outcome } = await reproduce(CRASH_REPORT, crashOnSeeds([0, 1]));
    expect(outcome).toMatchObject({ status: 'not_reproduced', verdict: 'flaky' });
    expect(outcome.summary).toMatch(
      /^Flaky 1\/3: .*only 1 of 3 seeded re-runs showed it again \(a majority is needed\)\. The others: seed 1001: not \(no exception in the run; the report shows RuntimeError\); seed 2001: not/,
    );
  });

  it('describeOddRuns keeps each phrase short', () => {
    const long = 'x'.repeat(500);
    const text = describeOddRuns({
      reproducedRuns: 0,
      totalRuns: 1,
      infra: null,
      runs: [{ seed: 7, verdict: 'partial', exitCode: 0, durationMs: 1, reasons: [long] }],
    });
    expect(text.length).toBeLessThan(200);
    expect(text).toMatch(/^seed 7: partly \(x+…\)$/);
  });
});

describe("silent bugs whose values are the reporter's random state", () => {
  const body = `# Train set: Loss: 0.9857, Accuracy: 0/100 (0%)

\`\`\`python
import torch
import torch.nn as nn
model = nn.Linear(10, 1)
x = torch.randn(100, 10)
y = torch.randn(100, 1)
out = model(x)
loss = nn.MSELoss()(out, y)
correct = out.max(1, keepdim=True)[1].eq(y.view_as(out)).sum().item()
print('Train set: Loss: {:.4f}, Accuracy: {}/{} ({:.0f}%)'.format(loss.item(), correct, 100, 100. * correct / 100))
\`\`\`

\`\`\`
Train set: Loss: 0.9857, Accuracy: 0/100 (0%)
\`\`\`
`;

  it('"pattern reproduced": one run, no confirmation, not counted as reproduced, the loss named as not comparable', async () => {
    const { outcome, executor } = await reproduce(body, () => ({ stdout: 'Train set: Loss: 1.1121, Accuracy: 0/100 (0%)\n', exitCode: 0 }));
    expect(outcome).toMatchObject({ status: 'not_reproduced', verdict: 'pattern_reproduced' });
    expect(outcome.summary).toMatch(
      /^Pattern reproduced: .* but 0\.9857 cannot be compared because they depend on the reporter's random state: random tensors \(`torch\.randn`\), random weight initialisation \(`nn\.Linear`\) with no seed/,
    );
    expect(outcome.attempts.map((a) => a.outcome)).toEqual(['pattern_reproduced']);
    expect(executor.requests.filter((r) => r.entry === 'repro.py')).toHaveLength(1);
  });

  /** A model that answers in order and keeps what it was asked; the first answer is the restructured report. */
  function scriptedModel(answers: string[]): LlmClient & { asked: LlmRequest[] } {
    const asked: LlmRequest[] = [];
    return {
      provider: 'openai',
      model: 'scripted',
      asked,
      complete: async (req) => {
        asked.push(req);
        const text = answers[asked.length - 1];
        if (text === undefined) throw new Error(`asked a ${asked.length}th time`);
        return { text, model: 'scripted', stopReason: 'stop', usage: { inputTokens: 10, outputTokens: 5, costUsd: 0 } };
      },
    };
  }
  const reportAnswer =
    '```json\n' +
    JSON.stringify({
      coreProblem: 'accuracy is 0/100 on a regression model',
      observed: 'Train set: Loss: 0.9857, Accuracy: 0/100 (0%)',
      expected: 'not stated',
      steps: ['build nn.Linear(10, 1)', 'compare argmax over one column with the targets'],
      environment: { framework: 'pytorch', hardware: 'not stated', data: 'random tensors' },
    }) +
    '\n```';
  // The report's own computation; what it prints is decided by the fake executor below.
  const script = body.split('```python\n')[1]?.split('```')[0] ?? '';
  const reply = `Here is the script.\n\n\`\`\`python\n${script}\`\`\`\n`;
  const printing = (lines: string[]): FakeResponder => {
    let i = 0;
    return () => ({ stdout: `${lines[Math.min(i++, lines.length - 1)]}\n`, exitCode: 0 });
  };
  async function reproduceTier1(llm: LlmClient, respond: FakeResponder) {
    const executor = new FakeExecutor((req, s) => (req.entry === 'probe.py' ? probeRun() : respond(req, s)));
    const ev = await runReproWithEvidence(
      { issue: { title: '', body }, settings: ReproSettings.parse({ pylint: false, confirmRuns: 3, tier0: false }) },
      { executor, llm, llmReason: 'scripted', checker, log: silentLogger, progress: () => undefined },
    );
    return { outcome: ev.outcome, executor };
  }

  it("tier 1: the model's first script shows the pattern with other numbers; the loop stops there, asking the model nothing more", async () => {
    const llm = scriptedModel([reportAnswer, reply, reply, reply]);
    const { outcome, executor } = await reproduceTier1(llm, printing(['Train set: Loss: 1.1121, Accuracy: 0/100 (0%)']));
    expect(outcome).toMatchObject({ status: 'not_reproduced', verdict: 'pattern_reproduced', confirmation: null });
    expect(outcome.attempts.map((a) => `${a.tier} ${a.outcome}`)).toEqual(['1 pattern_reproduced']);
    // The report, one script: no refine call chasing 0.9857, and no seeded re-runs of a result that is not a reproduction.
    expect(llm.asked).toHaveLength(2);
    expect(executor.requests.filter((r) => r.entry === 'repro.py')).toHaveLength(1);
    expect(outcome.summary).toMatch(/0\.9857 cannot be compared because they depend on the reporter's random state/);
  });

  it('tier 1: a script whose pattern differs (57 % where the report has 0) is refined on the pattern, never asked to hit the loss', async () => {
    const llm = scriptedModel([reportAnswer, reply, reply, reply]);
    const { outcome } = await reproduceTier1(
      llm,
      printing(['Train set: Loss: 1.1121, Accuracy: 57/100 (57%)', 'Train set: Loss: 1.2044, Accuracy: 0/100 (0%)']),
    );
    expect(outcome.attempts.map((a) => a.outcome)).toEqual(['run_mismatch', 'pattern_reproduced']);
    expect(llm.asked).toHaveLength(3);
    const feedback = llm.asked[2]?.messages.at(-1)?.content ?? '';
    expect(feedback).toMatch(/the pattern differs \(the report shows zero\)/);
    // The only loss named is the run's own: the feedback never sets the reporter's random-state value as a target.
    expect(feedback).not.toContain('0.9857');
  });
});

describe('what the reporter is asked for', () => {
  it('no model and incomplete code: "No model configured", never needs_info, nothing asked of the reporter', async () => {
    const body =
      // The traceback fails inside the reporter's model, which the report never shows: no stand-in can stand for it.
      '# RuntimeError: boom\n\n```python\nimport torch\nout = model(torch.zeros(2))\n```\n\n```\nTraceback (most recent call last):\n' +
      '  File "run.py", line 2, in <module>\n  File "net.py", line 9, in forward\nRuntimeError: boom\n```\n\ntorch==2.4.0\n';
    const { outcome } = await reproduce(body, crashOnSeeds([]));
    expect(outcome).toMatchObject({ status: 'not_reproduced', verdict: 'no_model', needsInfo: [] });
    expect(outcome.summary).toMatch(/^No model configured: .*model never defined/);
  });

  it("code that reads the reporter's own files: needs_info with a polite ask for a sample or its shape", async () => {
    const body =
      "# Best val Acc: 1.830065\n\n```python\nimport torch\nimport pandas as pd\ndf = pd.read_csv('/kaggle/input/mydata/train.csv')\nprint('Best val Acc: {:4f}'.format(float(df.mean().mean())))\n```\n\n```\nBest val Acc: 1.830065\n```\n\ntorch==2.4.0\n";
    const { outcome, executor } = await reproduce(body, crashOnSeeds([]));
    expect(outcome).toMatchObject({ status: 'needs_info', verdict: 'needs_data' });
    expect(outcome.needsInfo).toHaveLength(1);
    expect(outcome.needsInfo[0]).toMatch(/^a small sample of the data \(`\/kaggle\/input\/mydata\/train\.csv`\), or its shape and dtype/);
    expect(executor.requests.filter((r) => r.entry === 'repro.py')).toHaveLength(0);
  });
});
