// @vitest-environment happy-dom
// happy-dom only for Mermaid's own parser (it wants a DOM for its sanitiser); the comment builder is pure.
import { describe, expect, it } from 'vitest';
import { buildResultComment } from '../../src/publish/build-result-comment.js';
import { chartAxis, metricChart, plainNumber } from '../../src/publish/metric-chart.js';
import type { ReproOutcome } from '../../src/pipeline/types.js';
import type { Symptom } from '../../src/symptoms/types.js';

const shape: Symptom = {
  kind: 'shape_mismatch',
  category: 'crash',
  evidence: 'RuntimeError: mat1 and mat2',
  exception: { type: 'RuntimeError', message: 'mat1 and mat2 shapes cannot be multiplied (19x1 and 19x1)' },
};
const TRACEBACK = [
  ...Array.from({ length: 40 }, (_, i) => `tensor([[${i}.0000, 0.1000]])`),
  'Traceback (most recent call last):',
  '  File "/tmp/repgen-run-x/repro.py", line 18, in <module>',
  '    output = lr(X)',
  '  File "/usr/lib/python3/dist-packages/torch/nn/modules/linear.py", line 114, in forward',
  '    return F.linear(input, self.weight, self.bias)',
  'RuntimeError: mat1 and mat2 shapes cannot be multiplied (19x1 and 19x1)',
].join('\n');

function base(over: Partial<ReproOutcome>): ReproOutcome {
  return {
    status: 'reproduced',
    verdict: 'reproduced',
    summary: 'Reproduced RuntimeError with the report’s own code, completed by 2 recorded edits, in 3 of 3 seeded re-runs.',
    script:
      'import torch  # added by RepGen\nimport numpy as np  # added by RepGen\nX = torch.ones(19, 1)\nlr = torch.nn.Linear(19, 1)\noutput = lr(X)\n',
    scriptRan: true,
    confirmation: { reproducedRuns: 3, totalRuns: 3 },
    expected: [shape],
    observed: [shape],
    match: {
      verdict: 'reproduced',
      score: 1,
      reasons: ['same exception RuntimeError (shape_mismatch), message overlap 1.00'],
      compared: [
        {
          what: 'the exception',
          report: 'RuntimeError: mat1 and mat2 shapes cannot be multiplied (19x1 and 19x1)',
          run: 'RuntimeError: mat1 and mat2 shapes cannot be multiplied (19x1 and 19x1)',
          basis: 'determined',
          agree: true,
          note: 'same class; message word overlap 1.00 (0.6 needed)',
        },
      ],
    },
    metrics: [],
    outputExcerpt: `${TRACEBACK}\n`,
    environment: { executor: 'local', python: '3.11.2', torch: '1.13.0a0', numpy: '1.24.2', cuda: 'no', sandbox: 'bwrap' },
    reportVersions: [{ name: 'torch', version: '2.4.0' }],
    reporterExpected: 'the linear layer to take the 19 samples',
    reportedOutput: 'RuntimeError: mat1 and mat2 shapes cannot be multiplied (19x1 and 19x1)',
    attempts: [
      {
        n: 1,
        tier: 0,
        bundle: null,
        outcome: 'reproduced',
        feedback: 'added `import torch` (the report uses `torch` without importing it)\nreproduced: same exception',
        script: 'x',
      },
    ],
    needsInfo: [],
    usage: { inputTokens: 0, outputTokens: 0, costUsd: 0 },
    durationMs: 30_900,
    ...over,
  };
}

const flatLoss: Symptom = {
  kind: 'loss_not_decreasing',
  category: 'silent',
  metric: 'train_loss',
  evidence: 'Train Loss: 1.1121\nTrain Loss: 1.1130',
};
const SCENARIOS: Record<string, ReproOutcome> = {
  crash: base({}),
  silent: base({
    summary: 'Reproduced a loss that does not decrease with a generated script (attempt 2), in 3 of 3 seeded re-runs.',
    expected: [{ ...flatLoss, evidence: 'epoch: 3 Train Loss : 1.2345' }],
    observed: [flatLoss],
    reportedOutput: 'epoch: 3 Train Loss : 1.2345',
    reporterExpected: 'the loss to go down',
    match: {
      verdict: 'reproduced',
      score: 1,
      reasons: ['same symptom: loss_not_decreasing on train_loss'],
      compared: [
        {
          what: "the report's last output line",
          report: 'epoch: 3 Train Loss : 1.2345',
          run: 'epoch: 3 Train Loss : 1.1130',
          basis: 'random_state',
          agree: true,
          note: "pattern agrees; 1.2345 not compared: the values depend on the reporter's random state: random weight initialisation (`nn.Linear`) with no seed",
          notCompared: ['1.2345'],
        },
      ],
    },
    metrics: [{ name: 'train_loss', values: [1.1121, 1.1125, 1.1127, 1.113] }],
    outputExcerpt: 'epoch: 1 Train Loss : 1.1121\nepoch: 2 Train Loss : 1.1125\nepoch: 3 Train Loss : 1.1130\n',
    script: 'import torch\nmodel = torch.nn.Linear(10, 3)\n# …\n',
    attempts: [
      {
        n: 1,
        tier: 0,
        bundle: null,
        outcome: 'incomplete_code',
        feedback: 'not run: the report’s code uses `loader` without defining it',
        script: null,
      },
      { n: 2, tier: 1, bundle: 1, outcome: 'reproduced', feedback: 'reproduced: same symptom', script: 'x' },
    ],
  }),
  flaky: base({
    status: 'not_reproduced',
    verdict: 'flaky',
    confirmation: { reproducedRuns: 1, totalRuns: 3 },
    summary:
      'Flaky 1/3: the bug showed with a generated script (attempt 1), but only 1 of 3 seeded re-runs showed it again (a majority is needed). The others: seed 1001: not (no exception in the run; the report shows RuntimeError); seed 2001: not (no exception in the run; the report shows RuntimeError).',
    confirmationRuns: [
      { seed: 1, verdict: 'reproduced', reasons: [] },
      { seed: 1001, verdict: 'not_reproduced', reasons: ['no exception in the run; the report shows RuntimeError'] },
      { seed: 2001, verdict: 'not_reproduced', reasons: ['no exception in the run; the report shows RuntimeError'] },
    ],
  }),
  nan: base({
    summary: 'Reproduced NaN or infinite values with the report’s own code, in 3 of 3 seeded re-runs.',
    expected: [{ kind: 'nan_inf', category: 'silent', metric: 'loss', evidence: 'step 4 loss: nan' }],
    observed: [{ kind: 'nan_inf', category: 'silent', metric: 'loss', evidence: 'step 4 loss: nan' }],
    reportedOutput: 'step 4 loss: nan',
    reporterExpected: '',
    match: {
      verdict: 'reproduced',
      score: 1,
      reasons: ['same symptom: nan_inf on loss'],
      compared: [
        {
          what: "the report's last output line",
          report: 'step 4 loss: nan',
          run: 'step 4 loss: nan',
          basis: 'random_state',
          agree: true,
          note: 'pattern agrees (NaN where the report has it); every other number is equal',
        },
      ],
    },
    metrics: [{ name: 'loss', values: [2.31, 5.2035e31, 8.1e33], nonFinite: 3 }],
    outputExcerpt:
      'step 1 loss: 2.31\nstep 2 loss: 5.2035e+31\nstep 3 loss: 8.1e+33\nstep 4 loss: nan\nstep 5 loss: nan\nstep 6 loss: inf\n',
    script: 'import torch  # added by RepGen\nprint("step 1 loss: 2.31")\n',
  }),
  'needs-info': base({
    status: 'needs_info',
    verdict: 'needs_info',
    summary: 'Needs more information: the report shows no error, traceback or output, so there is nothing a run could be checked against.',
    script: 'print("never ran")\n',
    scriptRan: false,
    confirmation: null,
    expected: [],
    observed: [],
    match: null,
    outputExcerpt: '',
    reportedOutput: '',
    reporterExpected: 'not stated',
    needsInfo: [
      'what the bug looks like: the full error message with its traceback, or the printed output/metrics that show it',
      'versions: the framework and Python versions',
    ],
    attempts: [],
  }),
  'not-reproduced': base({
    status: 'not_reproduced',
    verdict: 'not_reproduced',
    summary: 'Not reproduced: no attempt reproduced the bug (5 tier-1 attempts over the report alone).',
    confirmation: null,
    observed: [],
    match: {
      verdict: 'not_reproduced',
      score: 0,
      reasons: ['no exception in the run; the report shows RuntimeError'],
      compared: [
        {
          what: 'the exception',
          report: 'RuntimeError: mat1 and mat2 shapes cannot be multiplied (19x1 and 19x1)',
          run: 'no exception',
          basis: 'determined',
          agree: false,
          note: 'the run raised no exception',
        },
      ],
    },
    outputExcerpt: 'torch.Size([19, 1])\n',
    attempts: Array.from({ length: 5 }, (_, i) => ({
      n: i + 1,
      tier: 1 as const,
      bundle: null,
      outcome: i === 2 ? 'faked_bug' : 'run_mismatch',
      feedback: 'Expected: RuntimeError: mat1 and mat2\nObserved: no symptom (the run finished normally); exit code 0',
      script: 'x',
    })),
    script: 'import torch\nprint(torch.nn.Linear(1, 1)(torch.ones(19, 1)).shape)\n',
  }),
  'no-model': base({
    status: 'not_reproduced',
    verdict: 'no_model',
    summary:
      'No model configured: the report’s code is incomplete (TransitionLayer, weights_init never defined), and filling such gaps is tier 1’s work, which needs a model (no LLM: chosen with --llm none). Nothing is asked of the reporter.',
    scriptRan: false,
    confirmation: null,
    observed: [],
    match: null,
    outputExcerpt: '',
    attempts: [
      {
        n: 1,
        tier: 0,
        bundle: null,
        outcome: 'incomplete_code',
        feedback: 'not run: the report’s code uses `TransitionLayer`, `weights_init` without defining them',
        script: 'x',
      },
    ],
  }),
  behavioural: base({
    summary:
      "Reproduced the report's expectation failing (expected 0.0238, the report saw 1.0) with a generated script (attempt 2) in 3 of 3 seeded re-runs.",
    script:
      'import timm\nfrom timm.optim import param_groups_layer_decay\nm = timm.create_model("vit_tiny_patch16_224")\n' +
      'groups = param_groups_layer_decay(m, layer_decay=0.75)\nscale = next(g["lr_scale"] for g in groups if "pos_embed" in g["param_names"])\n' +
      'print(f"pos_embed lr_scale = {scale}")\nassert abs(scale - 0.0238) < 1e-3, f"pos_embed lr_scale is {scale}, the report expects 0.0238"\n',
    expected: [{ kind: 'wrong_values', category: 'silent', evidence: 'lr_scale=1.0 instead of 0.0238' }],
    observed: [
      {
        kind: 'other_crash',
        category: 'crash',
        evidence: 'AssertionError: pos_embed lr_scale is 1.0, the report expects 0.0238',
        exception: { type: 'AssertionError', message: 'pos_embed lr_scale is 1.0, the report expects 0.0238' },
      },
    ],
    reportedOutput: '',
    reporterExpected: 'pos_embed gets the lr_scale of the cls_token group, 0.0238',
    reportVersions: [],
    match: {
      verdict: 'reproduced',
      score: 0.95,
      reasons: [
        'the report\'s expectation fails as reported: `assert abs(scale - 0.0238) < 1e-3, …` (expected 0.0238, from the report: "lr_scale=1.0 instead of 0.0238"); the run shows 1.0, as the report saw',
      ],
      oracle: {
        form: 'compare',
        assertion: 'assert abs(scale - 0.0238) < 1e-3, f"pos_embed lr_scale is {scale}, the report expects 0.0238"',
        line: 7,
        expected: '0.0238',
        quote: 'lr_scale=1.0 instead of 0.0238',
        reportObserved: '1.0',
        observed: 'pos_embed lr_scale is 1.0, the report expects 0.0238',
        held: false,
      },
    },
    metrics: [],
    outputExcerpt:
      'pos_embed lr_scale = 1.0\nTraceback (most recent call last):\n  File "/tmp/repgen-run-x/repro.py", line 7, in <module>\n' +
      '    assert abs(scale - 0.0238) < 1e-3, f"pos_embed lr_scale is {scale}, the report expects 0.0238"\n' +
      'AssertionError: pos_embed lr_scale is 1.0, the report expects 0.0238\n',
    attempts: [
      {
        n: 1,
        tier: 0,
        bundle: null,
        outcome: 'run_mismatch',
        feedback: 'Observed: no symptom (the run finished normally); exit code 0.',
        script: 'x',
      },
      { n: 2, tier: 1, bundle: 1, outcome: 'reproduced', feedback: "reproduced: the report's expectation fails as reported", script: 'x' },
    ],
  }),
  'behavioural-raises': base({
    summary:
      "Reproduced the report's expectation failing (expected ValueError) with a generated script (attempt 1) in 3 of 3 seeded re-runs.",
    script:
      'from diffusers import DDIMScheduler\ns = DDIMScheduler()\ns.set_timesteps(10)\nsample = __import__("torch").zeros(1, 3, 8, 8)\n' +
      'try:\n    s.step(sample, 999, sample, eta=-1.0)\nexcept ValueError as e:\n    print("raised:", e)\nelse:\n' +
      '    raise AssertionError("step(eta=-1.0) did not raise; the report expects a ValueError")\n',
    expected: [{ kind: 'wrong_values', category: 'silent', evidence: 'the API documents eta in [0, 1] and should reject -1' }],
    observed: [
      {
        kind: 'other_crash',
        category: 'crash',
        evidence: 'AssertionError: step(eta=-1.0) did not raise; the report expects a ValueError',
        exception: { type: 'AssertionError', message: 'step(eta=-1.0) did not raise; the report expects a ValueError' },
      },
    ],
    reportedOutput: '',
    reporterExpected: 'a ValueError for eta outside [0, 1]',
    reportVersions: [],
    match: {
      verdict: 'reproduced',
      score: 0.95,
      reasons: ["the report's expectation fails as reported"],
      oracle: {
        form: 'raises',
        assertion: 'raise AssertionError("step(eta=-1.0) did not raise; the report expects a ValueError")',
        line: 5,
        expected: 'ValueError',
        quote: 'The API documents eta ∈ [0, 1] and should reject -1.',
        observed: 'step(eta=-1.0) did not raise; the report expects a ValueError',
        held: false,
      },
    },
    metrics: [],
    outputExcerpt:
      'Traceback (most recent call last):\n  File "/tmp/repgen-run-x/repro.py", line 10, in <module>\n' +
      '    raise AssertionError("step(eta=-1.0) did not raise; the report expects a ValueError")\n' +
      'AssertionError: step(eta=-1.0) did not raise; the report expects a ValueError\n',
    attempts: [
      {
        n: 1,
        tier: 1,
        bundle: null,
        outcome: 'reproduced',
        feedback: "reproduced: the report's expectation fails as reported",
        script: 'x',
      },
    ],
  }),
  'needs-data': base({
    status: 'needs_info',
    verdict: 'needs_data',
    summary: 'RepGen could not run the report’s code: it reads data that only the reporter has.',
    scriptRan: false,
    confirmation: null,
    observed: [],
    match: null,
    outputExcerpt: '',
    needsInfo: [
      'a small sample of the data (`/kaggle/input/catsndogsorg/hymenoptera_data`), or its shape and dtype so that synthetic data can stand in for it',
    ],
    attempts: [{ n: 1, tier: 0, bundle: null, outcome: 'unavailable_here', feedback: 'not run: the report’s data', script: 'x' }],
  }),
};

function mermaidBlocks(md: string): string[] {
  return [...md.matchAll(/```mermaid\n([\s\S]*?)```/g)].map((m) => m[1] ?? '');
}

describe('rendered result comments (snapshots)', () => {
  it.each(Object.keys(SCENARIOS))('%s', async (name) => {
    const md = buildResultComment(SCENARIOS[name]!);
    await expect(md).toMatchFileSnapshot(`./__snapshots__/comment-${name}.md`);
    // What every comment must hold, whatever the snapshot says.
    expect(md.match(/^### RepGen: /gm)).toHaveLength(1);
    expect(md).not.toMatch(/\b(wrong_values|run_mismatch|shape_mismatch|loss_not_decreasing|nan_inf|incomplete_code|faked_bug)\b/);
    expect(md).toMatch(/\| \*\*The reporter saw\*\* \|/);
    expect(md).toMatch(/\| \*\*They expected\*\* \|/);
    expect(md).toMatch(/\| \*\*RepGen's run showed\*\* \|/);
    expect(mermaidBlocks(md).length).toBeLessThanOrEqual(1);
  });

  it('a behavioural reproduction shows the assertion, the expected value with the report words, and the observed one', () => {
    const md = buildResultComment(SCENARIOS.behavioural!);
    expect(md).toContain("**The report's expectation, asserted** (`repro.py` line 7):");
    expect(md).toMatch(/\| \*\*Expected value\*\* \(from the report: “lr_scale=1\.0 instead of 0\.0238”\) \| `0\.0238` \|/);
    expect(md).toMatch(/\| \*\*The report saw\*\* \| `1\.0` \|/);
    expect(md).toMatch(/\| \*\*This run\*\* \| `pos_embed lr_scale is 1\.0, the report expects 0\.0238` \|/);
    expect(md).toMatch(/\| \*\*RepGen's run showed\*\* \| the report's expectation failed:/);
    expect(buildResultComment(SCENARIOS['behavioural-raises']!)).toMatch(/\| \*\*This run\*\* \| no ValueError was raised:/);
  });

  it('the script is shown only when it ran; additions are counted and explained', () => {
    expect(buildResultComment(SCENARIOS['needs-info']!)).not.toContain('never ran');
    expect(buildResultComment(SCENARIOS['no-model']!)).not.toContain('Reproduction script');
    const crash = buildResultComment(SCENARIOS.crash!);
    expect(crash).toContain('Reproduction script (<code>repro.py</code>, 6 lines, 2 added by RepGen)');
    expect(crash).toContain("Lines marked `# added by RepGen` are RepGen's");
  });

  it('the output is trimmed to the traceback, with the rest in a "Full output" fold', () => {
    const md = buildResultComment(SCENARIOS.crash!);
    const shown = md.slice(md.indexOf('**Output**'), md.indexOf('<details><summary>Full output'));
    expect(shown).toContain('Traceback (most recent call last)');
    expect(shown).not.toContain('tensor([[3.0000');
    expect(md).toContain('<details><summary>Full output</summary>');
  });

  it('flags a version difference that could matter; the compared values are stated', () => {
    const md = buildResultComment(SCENARIOS.crash!);
    expect(md).toContain('⚠️ torch 2.4.0 in the report, 1.13.0a0 here: a different major version');
    expect(md).toMatch(/\*\*Compared:\*\*\n- the exception: report `RuntimeError: mat1/);
    expect(buildResultComment(SCENARIOS.silent!)).toMatch(
      /- the report's last output line: report `epoch: 3 Train Loss : 1\.2345`, run `epoch: 3 Train Loss : 1\.1130` — agree: pattern agrees; 1\.2345 not compared/,
    );
  });

  it('no model: said as such, and nothing is asked of the reporter; their data: asked for politely, never "Not reproduced"', () => {
    const none = buildResultComment(SCENARIOS['no-model']!);
    expect(none).toContain('### RepGen: ℹ️ No model configured');
    expect(none).not.toMatch(/Could you|Needs more information/);
    const data = buildResultComment(SCENARIOS['needs-data']!);
    expect(data).toContain('### RepGen: 📎 Could you share your data?');
    expect(data).toContain('To run it here, could you add one of these to the issue?');
    expect(data).not.toContain('Not reproduced');
  });

  it('a NaN run says how many values were NaN/inf instead of plotting them as 0', () => {
    const md = buildResultComment(SCENARIOS.nan!);
    expect(md).toContain('3 NaN/inf values not drawn');
    expect(md).toContain('3 of 6 printed values were NaN or infinite');
    expect(mermaidBlocks(md)[0]).not.toMatch(/\d[eE][+-]?\d/);
  });
});

describe("charts that cannot lie, accepted by Mermaid's own parser", () => {
  const SERIES = [
    { name: 'train_loss', values: [1.1121, 1.1125, 1.1127, 1.113] },
    { name: 'train_accuracy', values: [0, 0, 0, 0, 0] },
    { name: 'loss', values: [2.31, 5.2035e31, 8.1e33], nonFinite: 3 },
    { name: 'grad_norm', values: [1e-9, 3e-12, 0.5] },
    { name: 'val_loss', values: Array.from({ length: 500 }, (_, i) => 2 / (1 + i)) },
    { name: 'reward', values: [-5, -3.2, -10.75, 4] },
    { name: 'loss"]\n  line [1', values: [1, 2] },
    { name: 'accuracy', values: [93.1, 93.4, 93.2] },
  ];

  async function parses(chart: string): Promise<void> {
    const { default: mermaid } = await import('mermaid');
    await mermaid.parse(chart.replace(/^```mermaid\n|```$/g, ''));
  }

  it.each(SERIES.map((s) => [s.name.slice(0, 20), s] as const))('%s parses', async (_name, series) => {
    const chart = metricChart(series);
    expect(chart).not.toBeNull();
    expect(chart).not.toMatch(/\d[eE][+-]?\d/);
    await parses(chart!);
  });

  it('the parser is real: it rejects the exponent form we used to emit', async () => {
    await expect(parses('xychart-beta\n  y-axis "loss" 0 --> 5.2035e+31\n  line [1, 5.2035e+31]\n')).rejects.toThrow();
  });

  it('every chart in every snapshot comment parses', async () => {
    for (const o of Object.values(SCENARIOS)) for (const block of mermaidBlocks(buildResultComment(o))) await parses(block);
  });

  it('axes: 0 for a loss or accuracy near it, the data far from 0 kept, a flat line never zoomed into a slope', () => {
    expect(chartAxis('loss', [2.3, 1.0])).toEqual({ min: 0, max: 2.365 });
    expect(chartAxis('train_accuracy', [0, 0])).toEqual({ min: 0, max: 0.5 });
    const flat = chartAxis('train_loss', [1.1121, 1.113]);
    expect(flat.max - flat.min).toBeGreaterThanOrEqual(0.1 * 1.113 - 1e-9);
    const far = chartAxis('accuracy', [93.1, 93.4]);
    expect(far.min).toBeGreaterThan(80);
    expect(chartAxis('reward', [-5, 4]).min).toBeLessThan(-5);
    expect(plainNumber(5.2035e31)).toBe('52035000000000000000000000000000');
    expect(plainNumber(3e-12)).toBe('0');
  });
});
