import { describe, expect, it } from 'vitest';
import { createPyflakesChecker } from '../../src/agent/pyflakes-checker.js';
import { silentLogger } from '../../src/log.js';
import { runReproWithEvidence } from '../../src/pipeline/run-repro.js';
import { ReproSettings } from '../../src/pipeline/settings.js';
import { FakeExecutor } from '../fakes/fake-executor.js';
import { CRASH_ISSUE, simulate } from '../fakes/repro-fixtures.js';

const checker = createPyflakesChecker({ pylint: false });

async function reproduce(body: string) {
  const executor = new FakeExecutor(simulate);
  const ev = await runReproWithEvidence(
    { issue: { title: '', body }, settings: ReproSettings.parse({ pylint: false }) },
    { executor, llm: null, llmReason: 'no LLM: chosen with --llm none', checker, log: silentLogger, progress: () => undefined },
  );
  return { outcome: ev.outcome, executor, evidence: ev };
}

describe('bad input ends in a clear status, never a crash', () => {
  it('an issue with no code at all', async () => {
    const { outcome } = await reproduce(
      '# Training is slow and gives an error\n\nRuntimeError: CUDA error: device-side assert triggered\n\nAny idea?\n',
    );
    expect(outcome.status).toBe('needs_info');
    expect(outcome.summary).toMatch(/no Python code to run/);
    expect(outcome.needsInfo[0]).toMatch(/a minimal Python snippet/);
  });

  it('an issue whose code is in another language', async () => {
    const { outcome, executor } = await reproduce(
      '# RuntimeError: expected scalar type Float\n\n```cpp\n#include <torch/torch.h>\nint main() { auto x = torch::ones({2}); return 0; }\n```\n\n```\nRuntimeError: expected scalar type Float but found Double\n```\n',
    );
    expect(outcome.status).toBe('needs_info');
    expect(outcome.needsInfo[0]).toMatch(/not Python \(cpp: `#include <torch\/torch.h>`\)/);
    expect(executor.requests.filter((r) => r.entry === 'repro.py')).toHaveLength(0);
  });

  it('a 5 MB issue', async () => {
    const { outcome } = await reproduce(`${CRASH_ISSUE}\n${'x'.repeat(5 * 1024 * 1024)}\n`);
    expect(outcome.status).toBe('needs_info');
    expect(outcome.notes?.join()).toMatch(/only the first \d+ were read/);
  });

  it('a binary attachment link: recorded, never downloaded, named in what the report lacks', async () => {
    const { outcome, evidence } = await reproduce(
      `${CRASH_ISSUE}\nMy weights: https://github.com/user-attachments/files/99/weights.pth and data https://example.com/data.zip\n`,
    );
    expect(evidence.report?.facts.attachments).toEqual([
      { url: 'https://github.com/user-attachments/files/99/weights.pth', kind: 'weights' },
      { url: 'https://example.com/data.zip', kind: 'archive' },
    ]);
    expect(outcome.status).toBe('needs_info');
    expect(outcome.needsInfo.join('\n')).toMatch(/never downloads attachments/);
  });

  it('a binary body', async () => {
    const { outcome } = await reproduce('\u0000\u0001PK\u0003\u0004binary\u0000junk');
    expect(outcome.status).toBe('needs_info');
    expect(outcome.summary).toMatch(/binary data, not text/);
  });

  it('an empty issue', async () => {
    const { outcome } = await reproduce('   ');
    expect(outcome.status).toBe('needs_info');
    expect(outcome.summary).toMatch(/the issue is empty/);
  });

  it('code that needs a package missing here says so — not a false success; its dataset download is synthetic data (issue 40)', async () => {
    const body =
      "# RuntimeError: shape '[-1, 784]' is invalid\n\n```python\nimport torch\nimport transformers\nfrom torchvision import datasets\nds = datasets.MNIST('.', download=True)\nx = ds[0][0].view(-1, 784)\n```\n\n```\nRuntimeError: shape '[-1, 784]' is invalid for input of size 100\n```\n\ntorch==2.4.0\n";
    const { outcome, executor } = await reproduce(body);
    expect(outcome.status).toBe('not_reproduced');
    // The symptom is a crash (structural): MNIST's download became FakeData of the same shapes, so it blocks nothing.
    expect(outcome.summary).not.toMatch(/dataset download/);
    expect(outcome.summary).toMatch(/package `transformers` is not installed in this runner's Python/);
    expect(outcome.blockers?.length).toBe(1);
    expect(executor.requests.filter((r) => r.entry === 'repro.py')).toHaveLength(0);
  });
});
