import { describe, expect, it } from 'vitest';
import { createPyflakesChecker } from '../../src/agent/pyflakes-checker.js';
import { completeSnippet, mapCudaToCpu } from '../../src/agent/tier0.js';

const checker = createPyflakesChecker({ pylint: false });

describe('completeSnippet (tier 0) with real pyflakes', () => {
  it('adds conventional imports and stated hyper-parameter defaults, each recorded', async () => {
    const r = await completeSnippet(
      { blocks: ['class LR(nn.Module):\n    def forward(self, x):\n        return F.relu(x)\n\nmodel = LR()\nopt = optim.SGD(model.parameters(), lr=learn_rate)\n'] },
      { checker },
    );
    expect(r.unresolved).toEqual([]);
    expect(r.script).toMatch(/^import torch\.nn as nn\nimport torch\.nn\.functional as F\nimport torch\.optim as optim\n/);
    expect(r.script).toContain('learn_rate = 0.01');
    expect(r.edits.map((e) => e.action)).toEqual(['add_import', 'add_import', 'add_import', 'define_default']);
    expect(r.edits[3]?.detail).toMatch(/used but never set in the report; stated default/);
    expect(r.static.undefinedNames).toEqual([]);
  });

  it('joins the report\'s blocks in order and strips REPL prompts', async () => {
    const r = await completeSnippet({ blocks: ['>>> import torch\n>>> t = torch.tensor([1, 0, 1])\n', '>>> t.mean()\nTraceback (most recent call last):\n'] }, { checker });
    expect(r.script).toBe('import torch\nt = torch.tensor([1, 0, 1])\nt.mean()\n');
    expect(r.edits.map((e) => e.action)).toEqual(['join_blocks', 'strip_prompts']);
  });

  it('leaves names it cannot know unresolved (what the report would have to supply)', async () => {
    const r = await completeSnippet({ blocks: ['import torch\nblock = TransitionLayer(3)\nmodel.apply(weights_init)\n'] }, { checker });
    expect(r.unresolved).toEqual(['TransitionLayer', 'model', 'weights_init']);
  });

  it('defines a name from the value the report compares it with, and synthesises data from the report\'s sizes', async () => {
    const r = await completeSnippet(
      { blocks: ['import torch.nn as nn\nif loss == "MSE":\n    criterion = nn.MSELoss()\nmodel = nn.Linear(input_size, output_size)\nprint(criterion(model(train_features), train_targets))\n'] },
      { checker },
    );
    expect(r.unresolved).toEqual([]);
    expect(r.script).toContain('loss = "MSE"');
    expect(r.script).toContain('train_features = torch.randn(100, input_size)');
    expect(r.script).toContain('train_targets = torch.randn(100, output_size)');
    expect(r.script).toMatch(/^import torch\n/);
  });

  it('calls a function the report defines but never calls, binding its parameters to the snippet\'s values', async () => {
    const r = await completeSnippet({ blocks: ['import torch\na, b = 1, 2\ndata = torch.ones(3)\n\ndef part(self, data, s, e):\n    return data[s:e]\n'] }, { checker });
    expect(r.script.trimEnd().endsWith('print(part(None, data, a, b))')).toBe(true);
    expect(r.edits.at(-1)?.action).toBe('call_entry');
  });

  it('appends the module-level statement of the report\'s traceback when it runs something never called', async () => {
    const r = await completeSnippet({ blocks: ['import torch\ndef run():\n    return torch.ones(2) @ torch.ones(3)\n'], tracebackModuleLines: ['run()'] }, { checker });
    expect(r.script).toContain('\n\nrun()');
    expect(r.edits.map((e) => e.action)).toContain('append_traceback_line');
  });

  it('maps CUDA devices to the CPU as a recorded edit, and leaves CUDA-free code alone', async () => {
    const r = await completeSnippet({ blocks: ["import torch\nm = torch.nn.Linear(2, 2).to('cuda')\nx = torch.ones(1, 2).cuda()\ndev = torch.device(\"cuda:0\" if torch.cuda.is_available() else \"cpu\")\n"] }, { checker });
    const cpu = mapCudaToCpu(r);
    expect(cpu?.script).toContain("m = torch.nn.Linear(2, 2).to('cpu')");
    expect(cpu?.script).toContain("x = torch.ones(1, 2).to('cpu')");
    expect(cpu?.script).toContain("torch.device('cpu' if torch.cuda.is_available() else \"cpu\")");
    expect(cpu?.edits.at(-1)?.action).toBe('cpu_fallback');
    expect(mapCudaToCpu({ ...r, script: 'import torch\n' })).toBeNull();
  });
});
