import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { completeCode } from '../../src/complete/index.js';
import { createLocalExecutor } from '../../src/exec/local/executor.js';
import { extractFacts } from '../../src/report/index.js';
import { matchRun, readReport, readRun } from '../../src/symptoms/index.js';

/**
 * fixtures/complete/probes: one small report per kind of code that used to end "not run" (free names tier 0 could
 * not read). Each must now complete and run, and the symptom matcher must accept one of its candidates, as tier 0's
 * search would.
 */
const PROBES = join(import.meta.dirname, '../../fixtures/complete/probes');
const executor = createLocalExecutor({ python: '/usr/bin/python3' });
// Its warm servers hold their run folders until it is closed.
afterAll(() => executor.close?.());

async function firstReproducing(probe: string): Promise<{ index: number; script: string; added: string[]; missing: string[] }> {
  const body = await readFile(join(PROBES, probe), 'utf8');
  const reading = readReport(body);
  const facts = await extractFacts(body, reading);
  const c = await completeCode({ blocks: facts.pythonBlocks, tracebackModuleLines: facts.tracebackModuleLines, reportText: body });
  for (const [index, k] of c.candidates.entries()) {
    const r = await executor.run({ files: [{ path: 'main.py', content: k.script }], entry: 'main.py', limits: { timeoutMs: 120_000 } });
    const m = matchRun(reading, readRun(r.output, r), { script: k.script, output: r.output });
    if (m.verdict === 'reproduced') return { index, script: k.script, added: k.added, missing: c.missing.map((x) => x.name) };
  }
  return { index: -1, script: '', added: [], missing: c.missing.map((x) => x.name) };
}

describe('probes: unseen kinds of report run with no model', { timeout: 300_000 }, () => {
  it('attention: query, key and value shaped (L, N, E) by the MultiheadAttention that consumes them', async () => {
    const r = await firstReproducing('attention.md');
    expect(r.index).toBe(0);
    expect(r.added).toEqual(
      expect.arrayContaining(['query = repgen_example_input(attn, batch=4)', 'value = repgen_example_input(attn, batch=4)']),
    );
  });

  it("cross-entropy: both free arguments of F.cross_entropy get its signature's shapes", async () => {
    const r = await firstReproducing('cross-entropy.md');
    expect(r.index).toBe(0);
    expect(r.added).toEqual(expect.arrayContaining(['input_tensor = torch.randn(4, 10)', 'target_tensor = torch.randint(0, 10, (4,))']));
  });

  it('tensor-dataset: X_train and y_train followed through from_numpy, TensorDataset and the loader to the model and loss', async () => {
    const r = await firstReproducing('tensor-dataset.md');
    expect(r.index).toBe(0);
    // `model` is bound below the data set: its constructor shapes the rows where they are needed.
    const model = 'nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Linear(64, 1))';
    expect(r.added).toContain(`X_train = repgen_numpy(repgen_example_input(${model}, batch=64))`);
    expect(r.added).toContain(`y_train = repgen_numpy(repgen_targets_like(repgen_output(${model}, X_train), 'float'))`);
  });

  it('undefined-net: a model the report never shows gets a stand-in when the traceback fails outside it', async () => {
    const r = await firstReproducing('undefined-net.md');
    expect(r.index).toBe(0);
    expect(r.added.some((l) => /^net = nn\.Sequential\(nn\.Flatten\(\), nn\.LazyLinear\(\d+\)\)$/.test(l))).toBe(true);
  });

  it('method-body: pasted __init__ lines and forward go back into an nn.Module, which the harness runs', async () => {
    const r = await firstReproducing('method-body.md');
    expect(r.index).toBeGreaterThanOrEqual(0);
    expect(r.script).toMatch(/^class Model\(nn\.Module\): {2}# added by RepGen\n {4}def __init__\(self\): {2}# added by RepGen$/m);
    expect(r.script).toContain('\n        self.conv1 = nn.Conv2d(3, 16, 3, padding=1)\n');
    expect(r.added).toContain('model = Model()');
  });

  it('two-input-forward: each input of forward(self, token_ids, features) shaped by the sub-layer it goes into', async () => {
    const r = await firstReproducing('two-input-forward.md');
    expect(r.index).toBe(0);
    expect(r.added).toEqual(
      expect.arrayContaining([
        'token_ids = repgen_example_input(model.embed, batch=2, size=32)',
        'features = repgen_example_input(model.numeric, batch=2, size=32)',
        'out = model(token_ids, features)',
      ]),
    );
  });

  it('unpacked-batch: `for step, batch in enumerate(dl)` then `feats, target = batch`, and a free loss called on the output', async () => {
    const r = await firstReproducing('unpacked-batch.md');
    expect(r.index).toBe(0);
    expect(r.added).toEqual(
      expect.arrayContaining([
        'cost = nn.CrossEntropyLoss()',
        'train_dl = DataLoader(TensorDataset(train_dl_x, train_dl_y), batch_size=16)',
      ]),
    );
  });

  it('after-reported-line: names used only after the statement the traceback ends in block nothing', async () => {
    const r = await firstReproducing('after-reported-line.md');
    expect(r.index).toBe(0);
    expect(r.missing).toEqual(['causal_mask']);
  });
});
