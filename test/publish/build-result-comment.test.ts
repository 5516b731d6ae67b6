import { describe, expect, it } from 'vitest';
import { buildProgressComment, buildResultComment, GITHUB_COMMENT_LIMIT } from '../../src/publish/build-result-comment.js';
import { metricChart } from '../../src/publish/metric-chart.js';
import type { ReproOutcome } from '../../src/pipeline/types.js';

function outcome(over: Partial<ReproOutcome> = {}): ReproOutcome {
  return {
    status: 'reproduced',
    summary: 'Reproduced the RuntimeError the report shows (cc @alice, see #12).',
    script: 'import torch\ntorch.zeros(2) @ torch.zeros(3)\n',
    confirmation: { reproducedRuns: 3, totalRuns: 3 },
    expected: [
      {
        kind: 'shape_mismatch',
        category: 'crash',
        evidence: 'RuntimeError: mat1 and mat2',
        exception: { type: 'RuntimeError', message: 'mat1 and mat2 shapes cannot be multiplied (19x1 and 19x1)' },
      },
    ],
    observed: [
      {
        kind: 'shape_mismatch',
        category: 'crash',
        evidence: 'RuntimeError: mat1 and mat2',
        exception: { type: 'RuntimeError', message: 'mat1 and mat2 shapes cannot be multiplied (19x1 and 19x1)' },
      },
    ],
    match: { verdict: 'reproduced', score: 1, reasons: ['same exception class RuntimeError'] },
    metrics: [],
    outputExcerpt: 'Traceback (most recent call last):\nRuntimeError: mat1 and mat2 shapes cannot be multiplied (19x1 and 19x1)\n',
    environment: { python: '3.11.2', torch: '1.13.0', cuda: 'no' },
    attempts: [{ n: 1, tier: 0, bundle: null, outcome: 'reproduced', feedback: 'added `import torch`; ping @bob about #7', script: 'x' }],
    needsInfo: [],
    usage: { inputTokens: 0, outputTokens: 0, costUsd: 0 },
    durationMs: 4200,
    ...over,
  };
}

describe('buildResultComment', () => {
  it('gives one verdict with k/n runs, the script in <details>, the three named rows, environment and cost', () => {
    const md = buildResultComment(outcome());
    expect(md).toContain('### RepGen: ✅ Reproduced (3 of 3 seeded runs)');
    expect(md.match(/Reproduced/g)).toHaveLength(2); // the headline and the one-sentence summary
    expect(md).toMatch(/<details><summary>Reproduction script[\s\S]*```python\nimport torch/);
    expect(md).toContain(
      '| **The reporter saw** | a shape mismatch: `RuntimeError: mat1 and mat2 shapes cannot be multiplied (19x1 and 19x1)` |',
    );
    expect(md).not.toMatch(/shape_mismatch|run_mismatch|wrong_values/);
    expect(md).toContain('**Environment:**');
    expect(md).toContain('tokens 0 in / 0 out · cost $0.0000');
    expect(md).toContain('What was tried (1 attempt)');
  });

  it('neutralises @mentions and #refs copied from the report and the run', () => {
    const md = buildResultComment(outcome());
    expect(md).not.toMatch(/@alice|@bob|#12\b|#7\b/);
    expect(md).toContain('@\u200Dalice');
    expect(md).toContain('#\u200D12');
  });

  it('never echoes secrets, by shape or by literal value', () => {
    const token = `ghp_${'a'.repeat(36)}`;
    const md = buildResultComment(outcome({ outputExcerpt: `token=${token}\nkey=hunter2-very-secret\n` }), {
      secrets: ['hunter2-very-secret'],
    });
    expect(md).not.toContain(token);
    expect(md).not.toContain('hunter2-very-secret');
    expect(md).toContain('[redacted]');
  });

  it("stays under GitHub's limit and says what it cut", () => {
    const huge = 'print("x")\n'.repeat(20_000);
    const md = buildResultComment(outcome({ script: huge, outputExcerpt: 'y'.repeat(200_000) }));
    expect(md.length).toBeLessThanOrEqual(GITHUB_COMMENT_LIMIT);
    expect(md).toMatch(/Script truncated: \d+ of \d+ characters left out/);
    expect(md).toMatch(/Output truncated/);
    const tiny = buildResultComment(outcome({ script: huge }), { maxChars: 3000 });
    expect(tiny.length).toBeLessThanOrEqual(3000);
    expect(tiny).toContain('truncated');
  });

  it('cannot be broken out of its code fence by backticks in the script', () => {
    const md = buildResultComment(outcome({ script: 'x = """\n```\n@carol\n"""\n' }));
    expect(md).toContain('````python');
  });

  it('draws the observed metric series of a silent bug as a Mermaid xychart', () => {
    const md = buildResultComment(
      outcome({
        expected: [{ kind: 'loss_not_decreasing', category: 'silent', evidence: 'loss 1.09', metric: 'loss' }],
        observed: [{ kind: 'loss_not_decreasing', category: 'silent', evidence: 'loss 1.09', metric: 'loss' }],
        metrics: [{ name: 'loss', values: [1.0986, 1.0986, 1.0986, 1.0985] }],
      }),
    );
    expect(md).toContain('```mermaid\nxychart-beta');
    expect(md).toContain('line [1.0986, 1.0986, 1.0986, 1.0985]');
    expect(md).toContain('y-axis "loss" 1.04362 --> 1.15348'); // a flat line stays flat: the span is at least 10 % of the values
    expect(metricChart({ name: 'acc', values: [1] })).toBeNull();
  });

  it('lists exactly what a needs_info report lacks', () => {
    const md = buildResultComment(
      outcome({ status: 'needs_info', confirmation: null, script: null, needsInfo: ['the full code: `TransitionLayer` is never defined'] }),
    );
    expect(md).toContain('ℹ️ Needs more information');
    expect(md).toContain('- the full code: `TransitionLayer` is never defined');
    expect(md).not.toContain('Reproduction script');
  });
});

describe('buildProgressComment', () => {
  it('shows one line per stage with its state', () => {
    const md = buildProgressComment([
      { stage: 'intake', state: 'done' },
      { stage: 'agent', state: 'running', note: 'attempt 2, tier 1 @dave' },
      { stage: 'confirm', state: 'pending' },
    ]);
    expect(md).toContain('- ✅ **intake**');
    expect(md).toContain('- ⏳ **agent** — attempt 2, tier 1 @\u200Ddave');
    expect(md).toContain('- ⬜ **confirm**');
  });
});

describe('buildResultComment: the candidate fix (issue 41)', () => {
  const diff =
    '--- a/toylib/blocks.py\n+++ b/toylib/blocks.py\n@@ -3 +3 @@\n-    shortcut = list(xs)\n+    shortcut = list(xs) + [0] * (out - len(xs))\n';
  const row = (text: string) => `| **A candidate change makes this reproduction pass** | ${text} |`;

  it('yes: the row says fix-sensitive, and the diff is folded as generated and not reviewed', () => {
    const text = buildResultComment(
      outcome({ candidateFix: { answer: 'yes', result: 'fix_sensitive', summary: '1 candidate change: …', diff } }),
    );
    expect(text).toContain(row('yes: it passes with the generated change below and fails without it (fix-sensitive)'));
    expect(text).toContain(
      `<details><summary>A change that makes this reproduction pass (generated, not reviewed)</summary>\n\n\`\`\`diff\n${diff}\`\`\`\n\n</details>`,
    );
  });

  it('no, with a suspect oracle: the row says why, and the diff is titled as one the reproduction does not pass with', () => {
    const text = buildResultComment(
      outcome({ candidateFix: { answer: 'no', result: 'oracle_suspect', summary: '1 candidate change: …', diff } }),
    );
    expect(text).toContain(
      "no: it still fails with a generated change under which an independent check of the report's expectation passes",
    );
    expect(text).toContain(
      '<summary>A change the model proposed (generated, not reviewed; the reproduction does not pass with it)</summary>',
    );
  });

  it('no evidence and not tried: said as such, never as a no; no diff without one that ran', () => {
    const none = buildResultComment(
      outcome({
        candidateFix: {
          answer: 'no_evidence',
          result: 'no_evidence',
          summary:
            '2 candidate changes, no evidence either way: the patch is refused: setup.py is a build or setup file; the patch does not apply: hunk 1 of a.py (at line 2) does not match the file: its context or removed lines are not there',
          diff: null,
        },
      }),
    );
    expect(none).toContain(
      row(
        'no evidence either way: the patch is refused: setup.py is a build or setup file; the patch does not apply: hunk 1 of a.py (at line 2) does not match the file: its context or removed lines are not there',
      ),
    );
    expect(none).not.toContain('<summary>A change');
    const notTried = buildResultComment(
      outcome({
        candidateFix: { answer: 'not_tried', result: null, summary: 'no candidate fix: the model did not answer (overloaded)', diff: null },
      }),
    );
    expect(notTried).toContain(row('not tried: the model did not answer (overloaded)'));
    expect(buildResultComment(outcome())).not.toContain('candidate change');
  });

  it('a diff with backticks and a mention stays inside its fence', () => {
    const hostile = '--- a/m.py\n+++ b/m.py\n@@ -1 +1 @@\n-x = 1\n+x = "```\\n@alice"\n';
    const text = buildResultComment(outcome({ candidateFix: { answer: 'yes', result: 'fix_sensitive', summary: '', diff: hostile } }));
    expect(text).toContain('````diff\n');
  });
});
