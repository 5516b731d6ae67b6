import { describe, expect, it } from 'vitest';
import { crashProvenance } from '../../src/agent/crash-provenance.js';
import { readReport, readRun } from '../../src/symptoms/index.js';

const report = readReport(`# ConvBlock fails when in != out

\`\`\`python
import torch
from toylib.blocks import ConvBlock
model = ConvBlock(in_chs=64, out_chs=128)
res = model(torch.zeros((1, 64, 8, 8)))
\`\`\`

\`\`\`
RuntimeError: The size of tensor a (128) must match the size of tensor b (64) at non-singleton dimension 1
\`\`\`
`);

const opts = { projectRoots: ['/workspace'], scriptFile: 'repro.py' };

function tb(frames: Array<[string, number, string, string]>): ReturnType<typeof readRun>['traceback'] {
  const text = [
    'Traceback (most recent call last):',
    ...frames.flatMap(([f, l, fn, code]) => [`  File "${f}", line ${l}, in ${fn}`, `    ${code}`]),
    'RuntimeError: The size of tensor a (128) must match the size of tensor b (64) at non-singleton dimension 1',
  ].join('\n');
  return readRun(text, { exitCode: 1 }).traceback;
}

describe('crashProvenance', () => {
  it('accepts a crash that passes through the project', () => {
    const t = tb([
      ['/tmp/run-1/repro.py', 9, '<module>', 'out = block(x)'],
      ['/usr/lib/python3/dist-packages/torch/nn/modules/module.py', 1194, '_call_impl', 'return forward_call(*input, **kwargs)'],
      ['/workspace/toylib/blocks.py', 42, 'forward', 'x = self.drop_path(x) + shortcut'],
    ]);
    expect(crashProvenance(t, report, opts)).toMatchObject({ ok: true, reason: expect.stringContaining('/workspace/toylib/blocks.py:42') });
  });

  it("accepts a crash raised by a line of the report's own code", () => {
    const t = tb([['/tmp/run-1/repro.py', 4, '<module>', 'res = model(torch.zeros((1, 64, 8, 8)))']]);
    expect(crashProvenance(t, report, opts).ok).toBe(true);
  });

  it('rejects the same exception raised by code the script wrote around plain torch', () => {
    const t = tb([['/tmp/run-1/repro.py', 3, '<module>', 'torch.zeros(1, 128) + torch.zeros(1, 64)']]);
    const p = crashProvenance(t, report, opts);
    expect(p.ok).toBe(false);
    expect(p.reason).toMatch(/neither in the project's code nor by the report's own code/);
  });

  it('a folder that merely starts like the root is not the project', () => {
    const t = tb([['/workspace-evil/toylib/blocks.py', 1, 'f', 'x = 1 + y']]);
    expect(crashProvenance(t, report, opts).ok).toBe(false);
  });

  it('a native crash without a traceback cannot be checked and is left to the matcher', () => {
    expect(crashProvenance(null, report, opts).ok).toBe(true);
  });
});
