import { describe, expect, it, onTestFinished } from 'vitest';
import {
  COMMON_MODULES,
  environmentRecord,
  importedModules,
  localDataNeeds,
  missingModules,
  networkNeeds,
  probeEnvironment,
  referencedModules,
  runPlan,
} from '../../src/plan/index.js';
import { FakeExecutor } from '../fakes/fake-executor.js';
import { createExecutor, readExecConfig } from '../../src/exec/index.js';
import { silentLogger } from '../../src/log.js';
import { runReport } from '../../src/report/index.js';
import type { EnvironmentProbe } from '../../src/plan/types.js';

const probe: EnvironmentProbe = {
  python: '3.11.2',
  executable: '/usr/bin/python3',
  platform: 'Linux',
  modules: { torch: '1.13.0', numpy: '1.24.2', torchvision: null, transformers: null },
  cuda: false,
  cudaVersion: null,
};

async function report(body: string) {
  const r = await runReport(
    { issue: { title: '', body }, settings: { maxIssueChars: 200_000, maxLlmIssueChars: 30_000 } },
    { llm: null, log: silentLogger },
  );
  return { reading: r.reading, facts: r.facts, bug: r.bug, notes: r.notes };
}

describe('runPlan', () => {
  it('plans environment, data, model, run and assertion steps', async () => {
    const r = await report('# RuntimeError: boom\n\n```python\nimport torch\nx = torch.ones(2)\n```\n\n```\nRuntimeError: boom\n```\n');
    const plan = runPlan({ report: r, code: r.facts.pythonBlocks.join('\n'), probe });
    expect(plan.steps.map((s) => s.kind)).toEqual(['environment', 'data', 'model', 'run', 'assertion']);
    expect(plan.assertion).toBe('the run ends with RuntimeError: boom');
    expect(plan.blockers).toEqual([]);
    expect(plan.dataStrategy).toBe('report_code');
  });

  it("says what this runner cannot give: downloads, missing packages, the reporter's data files", async () => {
    const code =
      "import torchvision\nimport transformers\nds = torchvision.datasets.MNIST('.', download=True)\nm = transformers.AutoModel.from_pretrained('bert-base-uncased')\nimg = Image.open('/content/drive/MyDrive/cat.jpg')\n";
    const r = await report(`# ValueError: x\n\n\`\`\`python\n${code}\`\`\`\n\n\`\`\`\nValueError: x\n\`\`\`\n`);
    const plan = runPlan({ report: r, code, probe });
    expect(plan.missingModules).toEqual(['torchvision', 'transformers']);
    expect(plan.blockers.map((b) => b.kind)).toEqual(['network', 'network', 'missing_package', 'missing_package', 'data']);
    expect(plan.blockers.map((b) => b.what).join('\n')).toMatch(
      /torchvision dataset download \(download=True\); runs here have no network/,
    );
    expect(plan.dataStrategy).toBe('synthetic');
  });

  it('never steers towards a package the interpreter cannot import', async () => {
    const code =
      'import torch\nfrom torch.utils.data import DataLoader\ntrain_ds = torchvision.datasets.FakeData(size=8, transform=transforms.ToTensor())\nloader = DataLoader(train_ds, batch_size=4)\nfor x, y in tqdm(loader):\n    print(x.shape)\n';
    const r = await report(`# ValueError: x\n\n\`\`\`python\n${code}\`\`\`\n\n\`\`\`\nValueError: x\n\`\`\`\n`);
    const plan = runPlan({ report: r, code, probe: { ...probe, modules: { ...probe.modules, tqdm: null, pandas: '1.5.3' } } });
    expect(plan.missingModules).toEqual(['torchvision', 'tqdm']);
    expect(plan.dataStrategy).toBe('synthetic');
    const text = plan.steps.map((s) => `${s.kind}: ${s.description}`).join('\n');
    expect(text).not.toMatch(/Use the data the report's code builds itself/);
    expect(text).toMatch(/data: Do not use the report's own data path \(it needs `torchvision`, `tqdm`, which are not installed here[;)]/);
    expect(text).toMatch(/model: .*never import `torchvision`, `tqdm`/);
    expect(text).toMatch(/Not installed here, never import: torchvision, transformers, tqdm\./);
    expect(text).toMatch(/pandas 1\.5\.3/);
  });

  it("keeps the report's own data when it builds it with what is installed", async () => {
    const code = 'import torch\nX = torch.tensor([[1., 2.], [3., 4.]])\nprint(X.mean())\n';
    const r = await report(`# ValueError: x\n\n\`\`\`python\n${code}\`\`\`\n\n\`\`\`\nValueError: x\n\`\`\`\n`);
    const plan = runPlan({ report: r, code, probe });
    expect(plan.dataStrategy).toBe('report_code');
    expect(plan.steps.find((s) => s.kind === 'data')?.description).toMatch(
      /Use the data the report's code builds itself \(code builds data: `X = torch\.tensor/,
    );
  });

  it('reads imports, network needs and data paths from code (pure)', () => {
    expect(importedModules('import os, torch.nn as nn\nfrom sklearn.metrics import f1\nfrom . import x\n')).toEqual(['torch', 'sklearn']);
    expect(networkNeeds("load_dataset('imdb')")).toEqual(['a Hugging Face datasets download (load_dataset)']);
    expect(localDataNeeds("df = pd.read_csv('/kaggle/input/train.csv')")).toEqual(['/kaggle/input/train.csv']);
    expect(localDataNeeds('x = torch.randn(3)')).toEqual([]);
    expect(
      referencedModules("x = transforms.ToTensor()\ndf = pd.read_csv('a.csv')  # plt.plot\ns = 'tf.constant'\nm.transforms.x\n"),
    ).toEqual(['torchvision', 'pandas']);
    // `keras.` reaches TensorFlow only where the code does not import keras itself (Keras 3 is a package of its own).
    expect(referencedModules('keras.layers.Dense(2)\n')).toEqual(['tensorflow']);
    expect(referencedModules('import keras\nkeras.layers.Dense(2)\n')).toEqual([]);
  });
});

describe('probeEnvironment caches what each interpreter can import', () => {
  it('probes once per executor, then only modules it was not asked about; broken imports count as missing', async () => {
    const asked: string[][] = [];
    const executor = new FakeExecutor((req) => {
      const mods = JSON.parse(req.args?.[0] ?? '[]') as string[];
      asked.push(mods);
      const modules = Object.fromEntries(
        mods.map((m) => [m, m === 'torch' ? '1.13.0' : m === 'brokenpkg' ? null : m === 'numpy' ? '1.24.2' : null]),
      );
      return {
        stdout: `REPGEN_PROBE ${JSON.stringify({ python: '3.11.2', executable: '/usr/bin/python3', platform: 'Linux', modules, importErrors: { brokenpkg: 'ImportError: built against another torch' }, cuda: false, cudaVersion: null })}\n`,
      };
    });
    const first = await probeEnvironment(executor, ['torch', 'brokenpkg']);
    expect(asked[0]).toEqual(expect.arrayContaining(['torch', 'numpy', 'brokenpkg', ...COMMON_MODULES]));
    expect(first.probe?.modules.brokenpkg).toBeNull();
    expect(first.probe?.importErrors?.brokenpkg).toMatch(/another torch/);
    await probeEnvironment(executor, ['torch']);
    expect(asked).toHaveLength(1);
    expect(await missingModules(executor, ['torch', 'brokenpkg', 'newpkg'])).toEqual(['brokenpkg', 'newpkg']);
    expect(asked).toHaveLength(2);
    expect(asked[1]).toEqual(['newpkg']);
    expect(await missingModules(executor, ['newpkg', 'torch'])).toEqual(['newpkg']);
    expect(asked).toHaveLength(2);
  });
});

describe('probeEnvironment (real local executor)', () => {
  it('records the interpreter, torch/numpy versions, CUDA, and which modules are missing', async () => {
    const executor = await createExecutor(readExecConfig({}), { log: silentLogger });
    // Its warm servers keep their run folders until it is closed.
    onTestFinished(() => executor.close?.());
    const { probe: p, error } = await probeEnvironment(executor, ['torch', 'numpy', 'surely_not_installed_pkg']);
    expect(error).toBeNull();
    expect(p?.python).toMatch(/^3\./);
    expect(p?.modules.torch).toMatch(/^\d/);
    expect(p?.modules.surely_not_installed_pkg).toBeNull();
    const record = environmentRecord(p, 'local');
    expect(record).toMatchObject({ executor: 'local', interpreter: '/usr/bin/python3', cuda: 'no' });
    expect(record.torch).toBeDefined();
  });
});
