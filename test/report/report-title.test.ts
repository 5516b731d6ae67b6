import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/log.js';
import { runReport } from '../../src/report/index.js';

const settings = { maxIssueChars: 200_000, maxLlmIssueChars: 30_000 };

async function titleOf(body: string, title = ''): Promise<string> {
  const r = await runReport({ issue: { title, body }, settings }, { llm: null, log: silentLogger });
  return r.bug.title;
}

/** Issue 40, item 6f: a report with no `# ` heading (a file given to the CLI) keeps its first line as its title. */
describe('runReport: the title of a report without a heading', () => {
  it('reads the first non-empty line as the title, for reports of several projects', async () => {
    expect(await titleOf('RandomAffine fails when the batch size changes\n\n```python\nimport kornia\n```\n')).toBe(
      'RandomAffine fails when the batch size changes',
    );
    expect(await titleOf('\n\n  einops.rearrange error names the wrong side\nThe message says left.\n')).toBe(
      'einops.rearrange error names the wrong side',
    );
    expect(await titleOf('## Bug: MulticlassAccuracy ignores ignore_index\n\nRepro below.\n')).toBe(
      'Bug: MulticlassAccuracy ignores ignore_index',
    );
  });

  it('keeps a `# ` heading and an issue title as they were, and reads no title from a code fence', async () => {
    expect(await titleOf('\n# UNet2DModel ignores norm_num_groups\n\nbody\n')).toBe('UNet2DModel ignores norm_num_groups');
    expect(await titleOf('Some first line\n', 'The issue title')).toBe('The issue title');
    expect(await titleOf('```python\nimport torch\n```\n')).toBe('');
  });
});
