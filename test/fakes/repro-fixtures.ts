import type { RunRequest } from '../../src/exec/types.js';
import type { FakeRun } from './fake-executor.js';

/** A crash report with a traceback but no code: tier 0 has nothing to run, tier 1 must write the script. */
export const CRASH_ISSUE = `# RuntimeError: mat1 and mat2 shapes cannot be multiplied (4x3 and 5x2)

I build a small linear layer and call it on my batch, and it fails.

\`\`\`
Traceback (most recent call last):
  File "train.py", line 9, in <module>
    out = layer(x)
  File "/usr/lib/python3/dist-packages/torch/nn/modules/module.py", line 1194, in _call_impl
    return forward_call(*input, **kwargs)
  File "/usr/lib/python3/dist-packages/torch/nn/modules/linear.py", line 114, in forward
    return F.linear(input, self.weight, self.bias)
RuntimeError: mat1 and mat2 shapes cannot be multiplied (4x3 and 5x2)
\`\`\`

torch==2.4.0
`;

/** What a correct script produces (the library raising it), as the local executor would report it. */
export const CRASH_OUTPUT = `Traceback (most recent call last):
  File "/tmp/repgen-run-x/repro.py", line 6, in <module>
    out = layer(x)
  File "/usr/lib/python3/dist-packages/torch/nn/modules/module.py", line 1194, in _call_impl
    return forward_call(*input, **kwargs)
  File "/usr/lib/python3/dist-packages/torch/nn/modules/linear.py", line 114, in forward
    return F.linear(input, self.weight, self.bias)
RuntimeError: mat1 and mat2 shapes cannot be multiplied (4x3 and 5x2)
`;

export const WRONG_OUTPUT = `Traceback (most recent call last):
  File "/tmp/repgen-run-x/repro.py", line 6, in <module>
    out = layer(x.long())
RuntimeError: expected scalar type Long but found Float
`;

export const GOOD_SCRIPT = `import os
import torch
import torch.nn as nn

torch.manual_seed(int(os.environ.get("REPGEN_SEED", "0")))
layer = nn.Linear(5, 2)
x = torch.randn(4, 3)
out = layer(x)
print(out.shape)
`;

export const WRONG_SCRIPT = GOOD_SCRIPT.replace('out = layer(x)', 'out = layer(x.long())  # WRONG');

export const SYNTAX_ERROR_SCRIPT = `import torch
import torch.nn as nn
def build(:
    return nn.Linear(5, 2)
layer = build()
`;

export const STATIC_ERROR_SCRIPT = `import torch
import torch.nn as nn
layer = nn.Linear(5, 2)
x = torch.from_numpy(np.zeros((4, 3), dtype=np.float32))
out = layer(x)
`;

export const FAKED_SCRIPT = `import torch
import torch.nn as nn
layer = nn.Linear(5, 2)
x = torch.randn(4, 3)
raise RuntimeError("mat1 and mat2 shapes cannot be multiplied (4x3 and 5x2)")
`;

export const IRRELEVANT_SCRIPT = `import torch
print(torch.ones(3).sum())
`;

/** A model answer wrapping a script the way models do. */
export function answer(script: string): string {
  return `Here is a script that reproduces the problem.\n\n\`\`\`python\n${script}\`\`\`\n`;
}

/** The environment probe's answer, as the probe script prints it. */
export function probeRun(missing: string[] = []): FakeRun {
  const modules: Record<string, string | null> = { torch: '1.13.0', numpy: '1.24.2', transformers: null };
  for (const m of missing) modules[m] = null;
  return {
    stdout: `REPGEN_PROBE ${JSON.stringify({ python: '3.11.2', executable: '/usr/bin/python3', platform: 'Linux', modules, cuda: false, cudaVersion: null })}\n`,
  };
}

/**
 * What the fake executor "runs": the probe answers like the real one; a script calling the layer on
 * a (4, 3) batch crashes like torch does; the WRONG variant crashes differently; anything else prints.
 */
export function simulate(request: RunRequest, script: string): FakeRun {
  if (request.entry === 'probe.py') return probeRun();
  if (script.includes('# WRONG')) return { stderr: WRONG_OUTPUT, exitCode: 1 };
  if (script.includes('nn.Linear(5, 2)') && script.includes('torch.randn(4, 3)') && script.includes('layer(x)'))
    return { stderr: CRASH_OUTPUT, exitCode: 1 };
  return { stdout: 'torch.Size([4, 2])\n', exitCode: 0 };
}

/** A report of a U-Net-like model whose crash depends on the input size: tier 0 tries several sizes. */
export const SIZES_ISSUE = `# RuntimeError: Sizes of tensors must match except in dimension 1. Expected size 5 but got size 4 for tensor number 1 in the list.

\`\`\`python
import torch
import torch.nn as nn

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3)

    def forward(self, x):
        return self.conv(x)
\`\`\`

\`\`\`
Traceback (most recent call last):
  File "main.py", line 20, in <module>
    model(x)
  File "/usr/lib/python3/dist-packages/torch/nn/modules/module.py", line 1194, in _call_impl
    return forward_call(*input, **kwargs)
  File "main.py", line 11, in forward
    return torch.cat([a, b], 1)
RuntimeError: Sizes of tensors must match except in dimension 1. Expected size 5 but got size 4 for tensor number 1 in the list.
\`\`\`
`;

/** What the size-256 candidate of SIZES_ISSUE prints when it reproduces. */
export const SIZES_CRASH = `Traceback (most recent call last):\n  File "/tmp/r/repro.py", line 30, in <module>\n    out = model(x)\n  File "/usr/lib/python3/dist-packages/torch/nn/modules/module.py", line 1194, in _call_impl\n    return forward_call(*input, **kwargs)\n  File "/tmp/r/repro.py", line 11, in forward\n    return torch.cat([a, b], 1)\nRuntimeError: Sizes of tensors must match except in dimension 1. Expected size 9 but got size 8 for tensor number 1 in the list.\n`;
