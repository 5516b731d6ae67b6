import { describe, expect, it } from 'vitest';
import { extractFacts } from '../../src/report/extract-facts.js';
import { readReport } from '../../src/symptoms/index.js';

async function facts(md: string) {
  return extractFacts(md, readReport(md));
}

/** Kornia's issue template puts the reproduction in a ```bash fence. */
const KORNIA = `### Describe the bug

RandomAffine fails when the batch size changes between calls.

### Reproduction steps

\`\`\`bash
import torch
import kornia.augmentation as K

aug = K.RandomAffine(degrees=10.0, p=1.0)
aug(torch.rand(2, 3, 8, 8))
out = aug(torch.rand(4, 3, 8, 8), params=aug._params)
\`\`\`

### Expected behavior

No error.

### Environment

\`\`\`shell
pip install kornia==0.7.2
$ python collect_env.py
\`\`\`
`;

/** A diffusers-style report: the snippet under ```sh, the install line under ```sh too. */
const DIFFUSERS = `# UNet2DModel ignores norm_num_groups

\`\`\`sh
pip install diffusers==0.27.0 torch
\`\`\`

\`\`\`sh
from diffusers import UNet2DModel

model = UNet2DModel(sample_size=32, norm_num_groups=8)
print(model.conv_norm_out.num_groups)
\`\`\`

Prints 32, expected 8.
`;

describe('extractFacts: Python is recognised by parsing, whatever the fence label (issue 40, item 6a)', () => {
  it('reads the Python of a ```bash fence as Python, and the real shell block as shell (kornia)', async () => {
    const f = await facts(KORNIA);
    expect(f.pythonBlocks).toHaveLength(1);
    expect(f.pythonBlocks[0]).toMatch(/^import torch\nimport kornia\.augmentation as K/);
    expect(f.otherLanguageBlocks).toEqual([{ lang: 'shell', firstLine: 'pip install kornia==0.7.2' }]);
    expect(f.frameworks).toEqual(['torch']);
  });

  it('does the same for ```sh (diffusers): the install line stays shell', async () => {
    const f = await facts(DIFFUSERS);
    expect(f.pythonBlocks).toEqual([
      'from diffusers import UNet2DModel\n\nmodel = UNet2DModel(sample_size=32, norm_num_groups=8)\nprint(model.conv_norm_out.num_groups)',
    ]);
    expect(f.otherLanguageBlocks.map((b) => b.firstLine)).toEqual(['pip install diffusers==0.27.0 torch']);
  });

  it('keeps shell commands, prompts and other languages out of the Python', async () => {
    const blocks: [string, string][] = [
      ['bash', '$ python repro.py --batch 4'],
      ['bash', 'export CUDA_VISIBLE_DEVICES=0\npython train.py --lr 0.1'],
      ['sh', 'python -c "import torch; print(torch.__version__)"'],
      ['shell', 'torchrun --nproc_per_node 2 train.py'],
      ['cpp', '#include <torch/torch.h>\nint main() { return 0; }'],
      ['js', 'const x = require("y");'],
    ];
    for (const [lang, code] of blocks) {
      const f = await facts(`# t\n\n\`\`\`${lang}\n${code}\n\`\`\`\n`);
      expect(f.pythonBlocks, `${lang}: ${code}`).toEqual([]);
      expect(f.otherLanguageBlocks, `${lang}: ${code}`).toHaveLength(1);
    }
  });
});
