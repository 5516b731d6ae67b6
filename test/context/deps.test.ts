import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { chunkRepo } from '../../src/context/index/build-index.js';
import { buildGraph, dependencyClosure, resolveCall } from '../../src/context/deps.js';
import { walkRepo } from '../../src/context/walk-repo.js';

const REPO = fileURLToPath(new URL('../../fixtures/repos/vision-classifier', import.meta.url));

async function graph() {
  const { files } = await walkRepo(REPO, { maxFileBytes: 1_000_000 });
  const { chunks, infos } = await chunkRepo(files);
  return buildGraph(chunks, infos);
}

const name = (g: Awaited<ReturnType<typeof graph>>, id: number): string =>
  `${g.chunks[id]!.path}::${g.chunks[id]!.symbol ?? g.chunks[id]!.kind}`;

describe('dependency closure', () => {
  it('resolves calls across modules: relative imports, package re-exports, self methods and classes', async () => {
    const g = await graph();
    const find = (path: string, symbol: string) => g.chunks.find((c) => c.path === path && c.symbol === symbol)!;
    const main = find('train.py', 'main');
    // `from vision.models import create_model` goes through vision/models/__init__.py's re-export.
    expect(resolveCall(g, main, 'create_model').map((id) => name(g, id))).toEqual(['vision/models/factory.py::create_model']);
    expect(resolveCall(g, main, 'StepScheduler').map((id) => name(g, id))).toEqual([
      'vision/optim/scheduler.py::StepScheduler',
      'vision/optim/scheduler.py::StepScheduler.__init__',
    ]);
    const block = find('vision/models/convnet.py', 'ConvBlock.__init__');
    expect(resolveCall(g, block, 'GroupNorm').map((id) => name(g, id))).toContain('vision/layers/norm.py::GroupNorm.__init__');
    const features = find('vision/models/convnet.py', 'ConvNet.forward');
    expect(resolveCall(g, features, 'self.forward_features').map((id) => name(g, id))).toEqual([
      'vision/models/convnet.py::ConvNet.forward_features',
    ]);
    expect(resolveCall(g, features, 'torch.cat')).toEqual([]);
  });

  it('follows calls to the given depth and stops at the token budget', async () => {
    const g = await graph();
    const main = g.chunks.find((c) => c.path === 'train.py' && c.symbol === 'main')!;
    const shallow = dependencyClosure(g, main, { depth: 1, tokenBudget: 10_000 }).map((d) => name(g, d.id));
    expect(shallow).toEqual(
      expect.arrayContaining([
        'train.py::module',
        'train.py::train_one_epoch',
        'train.py::validate',
        'vision/models/factory.py::create_model',
      ]),
    );
    expect(shallow).not.toContain('vision/utils/metrics.py::accuracy');
    const deep = dependencyClosure(g, main, { depth: 2, tokenBudget: 10_000 }).map((d) => name(g, d.id));
    expect(deep).toContain('vision/utils/metrics.py::accuracy');
    const tight = dependencyClosure(g, main, { depth: 2, tokenBudget: 200 });
    const spent = tight.reduce((n, d) => n + Math.ceil(g.chunks[d.id]!.text.length / 4), 0);
    expect(spent).toBeLessThanOrEqual(200);
    expect(tight.length).toBeLessThan(deep.length);
  });
});
