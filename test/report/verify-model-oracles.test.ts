import { afterEach, describe, expect, it } from 'vitest';
import { createLlmClient } from '../../src/llm/index.js';
import { silentLogger } from '../../src/log.js';
import { loadPrompts } from '../../src/prompts/load-prompts.js';
import { hasEvidence, modelOracles, runReport } from '../../src/report/index.js';
import { matchRun, readReport, readRun } from '../../src/symptoms/index.js';
import { startScriptedAnthropicServer, type ScriptedServer } from '../helpers/anthropic-wire-server.js';

// Issue 40 item 3: the model's restructured report is a source of oracles, checked against the report's words.

let server: ScriptedServer | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
});

const ACCELERATE = [
  '# infer_auto_device_map maps the wrong layers',
  '',
  '```python',
  'from accelerate import infer_auto_device_map',
  'device_map = infer_auto_device_map(model, no_split_module_classes=["Block"])',
  'print(device_map)',
  '```',
  '',
  'With 15 blocks, layers 10–14 are mapped to `layers.1` by a substring match, so they land on the wrong device.',
].join('\n');

const KERAS = [
  '# Linear regression does not fit',
  '',
  '```python',
  'import numpy as np, keras',
  'x = np.arange(10.0); y = 11 * x',
  'model = keras.Sequential([keras.layers.Dense(1)])',
  'model.compile("sgd", "mse"); model.fit(x, y, epochs=100)',
  'print(model.predict(np.array([10.0])))',
  '```',
  'After training, the prediction is far from 110.',
].join('\n');

const TIMM_PROSE = [
  '# features_only resnet no longer scriptable',
  '',
  '```python',
  'import timm, torch',
  "torch.jit.script(timm.create_model('resnet18', features_only=True))",
  '```',
  'Since 1.0.7 scripting says revious return statement returned a value of type Dict[str, Tensor] but this return statement returns ' +
    'a value of type List[Tensor], which used to work.',
].join('\n');

const llmBug = (observed: string, expected: string) => ({ source: 'llm' as const, observed, expected });

describe('modelOracles', () => {
  it("accelerate: the model's observed span that the report contains becomes the symptom; its paraphrase never does", () => {
    const reading = readReport(ACCELERATE);
    expect(reading.expected).toEqual([]);
    const got = modelOracles(
      llmBug('Layers 10-14 are mapped to `layers.1` by a substring match.', 'Each block gets its own entry in the map.'),
      ACCELERATE,
      reading,
    );
    expect(got.spans).toEqual(['Layers 10-14 are mapped to `layers.1` by a substring match']);
    expect(got.symptoms).toHaveLength(1);
    expect(got.expectations[0]).toMatchObject({ kind: 'stated' });
    const paraphrase = modelOracles(llmBug('The device map is wrong for deep models.', 'not stated'), ACCELERATE, reading);
    expect(paraphrase.symptoms).toEqual([]);
  });

  it('keras: a stated sentence with no mechanism ("far from 110") is held to; the deterministic report adds nothing', () => {
    const reading = readReport(KERAS);
    expect(reading.expected).toEqual([]);
    const got = modelOracles(llmBug('the prediction is far from 110', 'a prediction close to 110'), KERAS, reading);
    expect(got.symptoms.map((s) => s.evidence)).toEqual(['the prediction is far from 110']);
    expect(modelOracles({ ...llmBug('the prediction is far from 110', ''), source: 'deterministic' }, KERAS, reading).symptoms).toEqual([]);
  });

  it("timm: a message the model quotes from the prose is a quoted message a TorchScript run's words are matched against", () => {
    const reading = readReport(TIMM_PROSE);
    expect(reading.expected).toEqual([]);
    const got = modelOracles(
      llmBug(
        'torch.jit.script fails: "revious return statement returned a value of type Dict[str, Tensor] but this return statement returns a value of type List[Tensor]"',
        'the model is still script-able',
      ),
      TIMM_PROSE,
      reading,
    );
    expect(got.symptoms[0]?.quoted).toMatch(/^revious return statement/);
    const report = { ...reading, expected: got.symptoms, expectations: [...(reading.expectations ?? []), ...got.expectations] };
    const out = [
      'Traceback (most recent call last):',
      '  File "/tmp/w/repro.py", line 2, in <module>',
      "    torch.jit.script(timm.create_model('resnet18', features_only=True))",
      '  File "/x/site-packages/torch/jit/_script.py", line 1324, in script',
      '    return torch.jit._recursive.create_script_module(obj, torch.jit._recursive.infer_methods_to_compile)',
      'RuntimeError: ',
      'Previous return statement returned a value of type Dict[str, Tensor] but this return statement returns a value of type List[Tensor]:',
      '  File "/work/checkout/timm/models/_features.py", line 352',
      '        return list(out.values())',
      '        ~~~~~~~~~~~~~~~~~~~~~~~~ <--- HERE',
      '',
    ].join('\n');
    expect(matchRun(report, readRun(out), { output: out }).verdict).toBe('reproduced');
  });
});

describe('runReport with a model: oracles from its restructured report', () => {
  it('adds the verified spans to the reading and says so in a note', async () => {
    server = await startScriptedAnthropicServer([
      '```json\n{"coreProblem":"substring match in the device map","observed":"layers 10–14 are mapped to `layers.1` by a substring match",' +
        '"expected":"not stated","steps":[],"environment":{"framework":"pytorch","hardware":"CPU","data":"not stated"}}\n```',
    ]);
    const llm = await createLlmClient({
      provider: 'anthropic',
      apiKey: 'sk-test-key',
      baseURL: server.url,
      maxRetries: 0,
      initialBackoffMs: 1,
    });
    const p = await loadPrompts(['report', 'format-error'] as const);
    const r = await runReport(
      { issue: { title: '', body: ACCELERATE }, settings: { maxIssueChars: 200_000, maxLlmIssueChars: 30_000 } },
      { llm, log: silentLogger, prompts: { report: p.report, formatError: p['format-error'] } },
    );
    expect(r.reading.expected.map((s) => s.evidence)).toEqual(['layers 10–14 are mapped to `layers.1` by a substring match']);
    expect(r.notes.join('\n')).toMatch(/read from the model's restructured report, checked against the report's words/);
  });
});

describe('hasEvidence: what starts tier 1', () => {
  const base = (body: string) => {
    const reading = readReport(body);
    return {
      reading,
      facts: { pythonBlocks: reading.codeBlocks.map((b) => b.code) } as never,
      bug: { expected: 'not stated' } as never,
    };
  };
  it('code, output or a stated expectation each start it; a report with none of them does not', () => {
    expect(hasEvidence(base(ACCELERATE))).toBe(true);
    expect(hasEvidence(base('# weird\n\nIt is weird, please help.'))).toBe(false);
    expect(hasEvidence(base('# scripting\n\nThe model should still be script-able after the change.'))).toBe(true);
  });
});
