import { afterEach, describe, expect, it } from 'vitest';
import { createLlmClient } from '../../src/llm/index.js';
import { silentLogger } from '../../src/log.js';
import { loadPrompts } from '../../src/prompts/load-prompts.js';
import { runReport } from '../../src/report/index.js';
import { startScriptedAnthropicServer, type AnthropicResponse, type ScriptedServer } from '../helpers/anthropic-wire-server.js';
import { CRASH_ISSUE } from '../fakes/repro-fixtures.js';

let server: ScriptedServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const settings = { maxIssueChars: 200_000, maxLlmIssueChars: 30_000 };

async function withLlm(responses: AnthropicResponse[]) {
  server = await startScriptedAnthropicServer(responses);
  const llm = await createLlmClient({
    provider: 'anthropic',
    apiKey: 'sk-test-key',
    baseURL: server.url,
    maxRetries: 0,
    initialBackoffMs: 1,
  });
  const p = await loadPrompts(['report', 'format-error'] as const);
  return { llm, prompts: { report: p.report, formatError: p['format-error'] } };
}

const GPU_ISSUE = `# Loss is NaN on my RTX 3090

Training on an RTX 3090 with CUDA 11.8, my dataset is 50,000 images of shape (3, 224, 224).
I expected the loss to go down. Weights are here: https://example.com/files/model.pth and the notebook
https://github.com/user-attachments/files/123/repro.ipynb

\`\`\`python
import torch
x = torch.load('/home/me/data/batch.pt').cuda()
\`\`\`

\`\`\`cpp
#include <torch/torch.h>
int main() { return 0; }
\`\`\`

\`\`\`
epoch 1 loss: nan
epoch 2 loss: nan
\`\`\`
`;

describe('runReport without a model (deterministic)', () => {
  it('extracts code, hardware hints, data descriptions, attachments and other-language blocks', async () => {
    const r = await runReport({ issue: { title: '', body: GPU_ISSUE }, settings }, { llm: null, log: silentLogger });
    expect(r.facts.pythonBlocks).toHaveLength(1);
    expect(r.facts.otherLanguageBlocks).toEqual([{ lang: 'cpp', firstLine: '#include <torch/torch.h>' }]);
    expect(r.facts.hardwareHints).toEqual(expect.arrayContaining(['RTX 3090', 'CUDA 11.8', '.cuda()']));
    expect(r.facts.dataDescriptions.join('\n')).toMatch(/50,000 images of shape \(3, 224, 224\)/);
    expect(r.facts.dataDescriptions.join('\n')).toMatch(/code loads data: `torch\.load\('\/home\/me\/data\/batch\.pt'\)`/);
    expect(r.facts.attachments.map((a) => a.kind)).toEqual(['weights', 'notebook']);
    expect(r.bug).toMatchObject({
      source: 'deterministic',
      coreProblem: 'Loss is NaN on my RTX 3090',
      expected: 'I expected the loss to go down.',
    });
    expect(r.bug.environment.hardware).toMatch(/RTX 3090/);
    expect(r.reading.expected.map((s) => s.kind)).toContain('nan_inf');
  });

  it('reads a 5 MB issue by its first part and says so', async () => {
    const huge = `${CRASH_ISSUE}\n${'lorem ipsum dolor sit amet '.repeat(200_000)}`;
    expect(huge.length).toBeGreaterThan(5_000_000);
    const r = await runReport({ issue: { title: '', body: huge }, settings }, { llm: null, log: silentLogger });
    expect(r.facts.truncated).toBe(true);
    expect(r.notes[0]).toMatch(/characters long; only the first \d+ were read/);
    expect(r.reading.expected[0]?.exception?.type).toBe('RuntimeError');
  });
});

describe('runReport with a model (LLM restructuring)', () => {
  it("takes the model's restructured report and keeps the deterministic versions", async () => {
    const { llm, prompts } = await withLlm([
      '```json\n{"coreProblem":"Linear layer gets 3 features, expects 5","observed":"RuntimeError mat1 and mat2","expected":"no error","steps":["make x (4,3)","call Linear(5,2)"],"environment":{"framework":"pytorch","hardware":"CPU","data":"random (4,3)"}}\n```',
    ]);
    const r = await runReport({ issue: { title: '', body: CRASH_ISSUE }, settings }, { llm, log: silentLogger, prompts });
    expect(r.bug).toMatchObject({
      source: 'llm',
      coreProblem: 'Linear layer gets 3 features, expects 5',
      steps: ['make x (4,3)', 'call Linear(5,2)'],
    });
    expect(r.bug.environment.versions).toEqual([{ name: 'torch', version: '2.4.0' }]);
    expect(r.usage.inputTokens).toBeGreaterThan(0);
    const sent = JSON.stringify(server?.requests[0]?.body);
    expect(sent).toContain('mat1 and mat2 shapes cannot be multiplied');
  });

  it('falls back to the deterministic report when the model answers garbage twice, and says so', async () => {
    const { llm, prompts } = await withLlm(['no json here', '']);
    const r = await runReport({ issue: { title: '', body: CRASH_ISSUE }, settings }, { llm, log: silentLogger, prompts });
    expect(r.bug.source).toBe('deterministic');
    expect(r.notes.join()).toMatch(/unusable twice/);
    expect(server?.requests).toHaveLength(2);
  });

  it('falls back when the model is down, without failing the stage', async () => {
    const { llm, prompts } = await withLlm([{ error: 'overloaded_error' }]);
    const r = await runReport({ issue: { title: '', body: CRASH_ISSUE }, settings }, { llm, log: silentLogger, prompts });
    expect(r.bug.source).toBe('deterministic');
    expect(r.notes.join()).toMatch(/could not restructure the report/);
  });
});

describe("data presence is read from the report's code", () => {
  const issue = (code: string) =>
    `# loss does not decrease\n\n\`\`\`python\n${code}\`\`\`\n\n\`\`\`\nepoch 1 loss 0.6931\nepoch 2 loss 0.6931\n\`\`\`\n`;

  it('says the code builds its data instead of "not stated"', async () => {
    const r = await runReport(
      {
        issue: {
          title: '',
          body: issue(
            'import numpy as np\nimport torch\nX = np.asarray([1, 2, 3, 4])\ny = torch.randn(4, 1)\nmodel = torch.nn.Linear(1, 1)\n',
          ),
        },
        settings,
      },
      { llm: null, log: silentLogger },
    );
    expect(r.bug.environment.data).toMatch(
      /^code builds data: `X = np\.asarray\(\[1, 2, 3, 4\]\)`; code builds data: `y = torch\.randn\(4, 1\)`/,
    );
  });

  it('says which data the code uses without showing it, and not for attributes, keyword arguments, strings or comments', async () => {
    const code =
      'def train(model, train_loader):\n    for x, y in train_loader:  # iterate over data\n        model(x)\nlayer = nn.Linear(in_features=3, out_features=2)\nself_features = "data/features"\nm.features(x)\ntrain(model, val_loader)\n';
    const r = await runReport({ issue: { title: '', body: issue(code) }, settings }, { llm: null, log: silentLogger });
    expect(r.facts.dataDescriptions).toContain('code uses data it does not show: `train_loader`, `val_loader`');
  });

  it('keeps "not stated" when the code shows no data at all', async () => {
    const r = await runReport(
      {
        issue: {
          title: '',
          body: issue('import torch.nn as nn\nclass Net(nn.Module):\n    def forward(self, x):\n        return torch.cat([x, x], 1)\n'),
        },
        settings,
      },
      { llm: null, log: silentLogger },
    );
    expect(r.bug.environment.data).toBe('not stated');
  });

  it('a model answering "not stated" for the data does not hide what the code shows', async () => {
    const { llm, prompts } = await withLlm([
      '```json\n{"coreProblem":"x","observed":"y","expected":"z","steps":[],"environment":{"framework":"pytorch","hardware":"CPU","data":"Not stated."}}\n```',
    ]);
    const r = await runReport(
      { issue: { title: '', body: issue('import torch\nX = torch.tensor([[1., 2.], [3., 4.]])\n') }, settings },
      { llm, log: silentLogger, prompts },
    );
    expect(r.bug.source).toBe('llm');
    expect(r.bug.environment.data).toMatch(/^code builds data: `X = torch\.tensor/);
  });
});
