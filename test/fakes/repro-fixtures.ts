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
