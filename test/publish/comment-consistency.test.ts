import { describe, expect, it } from 'vitest';
import { ReproOutcome } from '../../src/pipeline/types.js';
import { runOutcome } from '../../src/pipeline/stages/outcome/index.js';
import { buildResultComment } from '../../src/publish/build-result-comment.js';
import { tableCell } from '../../src/publish/neutralize.js';
import { extractFacts } from '../../src/report/extract-facts.js';
import { deterministicBugReport, statedExpectation } from '../../src/report/restructure.js';
import { readReport } from '../../src/symptoms/read-report.js';

// Issue 25, item 7: the comment never contradicts itself, and every sentence in it comes from the report or the run,
// said once. Fixtures shaped like the cases the issue names (so-063: a silent softmax bug whose report states no
// expectation; so-042: a loss that does not decrease, read off one output line by two symptoms).

const LOSS_LINE = 'epoch 5 loss 2.3026';
const loss = { kind: 'loss_not_decreasing', category: 'silent', evidence: LOSS_LINE, metric: 'loss' } as const;

function outcome(over: Partial<ReproOutcome> = {}): ReproOutcome {
  return ReproOutcome.parse({
    status: 'not_reproduced',
    summary: 'Not reproduced: the run finished normally.',
    script: 'import torch\nprint(torch.zeros(2))\n',
    confirmation: null,
    expected: [],
    observed: [],
    match: { verdict: 'not_reproduced', score: 0, reasons: ['no symptom'] },
    environment: { python: '3.11' },
    attempts: [{ n: 1, tier: 0, bundle: null, outcome: 'run_mismatch', feedback: 'ran, without the bug', script: 'x' }],
    usage: { inputTokens: 0, outputTokens: 0, costUsd: 0 },
    durationMs: 10,
    scriptRan: true,
    ...over,
  });
}

describe('table cells', () => {
  it('a cut never falls inside a code span: the span is closed', () => {
    const cell = tableCell(`the values \`[[10.${'0, 1.'.repeat(80)}]]\` differ`, 40);
    expect(cell.length).toBeLessThanOrEqual(41);
    expect((cell.match(/`/g) ?? []).length % 2).toBe(0);
    expect(cell).toMatch(/…`$/);
  });

  it('no stray "> ": a quote marker pasted with the reporter\'s line is not quoted back', () => {
    const body = buildResultComment(
      outcome({ expected: [loss], reportedOutput: `> ${LOSS_LINE}`, reporterExpected: '> the loss should go down' }),
    );
    expect(body).not.toMatch(/`>|\| > /);
    expect(body).toContain(`\`${LOSS_LINE}\``);
    expect(body).toContain('| **They expected** | the loss should go down |');
  });
});

describe('the script section', () => {
  it('a script that ran and did not reproduce is "Script that was run", never "Reproduction script"', () => {
    const body = buildResultComment(outcome());
    expect(body).toContain('<summary>Script that was run (<code>repro.py</code>');
    expect(body).not.toContain('Reproduction script');
  });

  it('a reproduction is still "Reproduction script"', () => {
    const body = buildResultComment(outcome({ status: 'reproduced', verdict: 'reproduced', observed: [loss], expected: [loss] }));
    expect(body).toContain('<summary>Reproduction script');
  });
});

describe('said once, from the report or the run', () => {
  it('so-063 shaped: a silent report that states no expectation gets "not stated", never an invented one', async () => {
    const md =
      '# softmax gives equal values\n\n```python\nimport torch\nx = torch.ones(2, 3)\np = torch.exp(x) / torch.exp(x).sum()\nprint(p)\n```\n\n' +
      '```\ntensor([[0.1667, 0.1667, 0.1667],\n        [0.1667, 0.1667, 0.1667]])\n```\n';
    const reading = readReport(md);
    const bug = deterministicBugReport(
      'softmax gives equal values',
      md,
      reading,
      await extractFacts(md, reading, { bodyChars: md.length, truncated: false }),
    );
    expect(statedExpectation(bug.expected)).toBe('');
    expect(statedExpectation('training behaves normally (the metrics improve)')).toBe('');
    expect(statedExpectation('the rows should sum to 1')).toBe('the rows should sum to 1');
    const body = buildResultComment(outcome({ reporterExpected: statedExpectation(bug.expected) }));
    expect(body).toContain('| **They expected** | _not stated in the report_ |');
    expect(body).not.toContain('behaves normally');
  });

  it('so-042 shaped: "Reproduced loss not decreasing" once, and the output line quoted once in its cell', () => {
    const symptoms = [loss, { ...loss, metric: 'train_loss' }];
    const decision = runOutcome({
      rejection: null,
      report: {
        reading: { expected: symptoms, versions: [] },
        facts: { pythonBlocks: [{}], otherLanguageBlocks: [], dataDescriptions: [], attachments: [] },
      },
      plan: null,
      snippet: null,
      agent: { status: 'reproduced', tier: 0, attempts: [], final: { reading: { exception: null, symptoms } } },
      confirm: null,
      llm: { available: false, reason: 'none' },
      infra: null,
    } as unknown as Parameters<typeof runOutcome>[0]);
    expect(decision.summary).toMatch(/^Reproduced loss not decreasing with/);
    expect(decision.summary).not.toMatch(/loss not decreasing, loss not decreasing/);
    const compared = [
      { what: "the report's last output line", report: LOSS_LINE, run: LOSS_LINE, basis: 'determined' as const, agree: true, note: 'same' },
    ];
    const body = buildResultComment(
      outcome({
        status: 'reproduced',
        verdict: 'reproduced',
        observed: symptoms,
        expected: symptoms,
        match: { verdict: 'reproduced', score: 1, reasons: [], compared },
      }),
    );
    const cell = body.split('\n').find((l) => l.startsWith("| **RepGen's run showed**")) ?? '';
    expect(cell.split(LOSS_LINE)).toHaveLength(2);
  });
});
