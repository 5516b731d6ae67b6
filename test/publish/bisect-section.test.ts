import { describe, expect, it } from 'vitest';
import type { BisectResult } from '../../src/bisect/types.js';
import type { ReproOutcome } from '../../src/pipeline/types.js';
import { bisectSection } from '../../src/publish/bisect-section.js';

const BAD_SHA = '43e6143befbc3704bf99d7e2dc57e9e18d366dff';
const GOOD_SHA = '1e0b34722772b6612ceab18cfe43d2e6a10c204e';

function outcome(bisect: BisectResult): ReproOutcome {
  return { status: 'reproduced', summary: 's', script: 'import timm\n', attempts: [], bisect } as unknown as ReproOutcome;
}

function result(over: Partial<BisectResult>): BisectResult {
  return {
    status: 'found',
    reason: 'r',
    good: { ref: 'v0.8.10dev0', sha: GOOD_SHA, why: 'asked to bisect from v0.8.10dev0' },
    bad: { ref: BAD_SHA, sha: BAD_SHA },
    firstBad: null,
    candidates: [],
    steps: [],
    commitsInRange: 32,
    expectedSteps: 5,
    wallMs: 1000,
    ...over,
  };
}

const step = (verdict: 'good' | 'bad' | 'skip', why: string) => ({
  sha: GOOD_SHA,
  subject: 'v0.8.10dev0 (GOOD)',
  verdict,
  why,
  runs: 1,
  durationMs: 10,
});

describe('bisectSection', () => {
  it('a bisection that stopped at GOOD says it did not bisect, counts one run in the singular, and shortens a full SHA ref', () => {
    const text = bisectSection(
      outcome(
        result({
          status: 'not_regression',
          reason: 'the reproduction fails at v0.8.10dev0 too (the reported bug shows in 1/1 run): no regression between the two refs',
          steps: [step('bad', 'the reported bug shows in 1/1 run')],
        }),
      ),
    );
    expect(text).toMatch(/^\*\*Not bisected\*\* `v0\.8\.10dev0`\.\.`43e6143befbc` /);
    expect(text).toContain('1 run over 32 first-parent commits (log2: 5)');
    expect(text).not.toContain(BAD_SHA);
    expect(text).toContain('no regression between the two refs');
  });

  it('a found first bad commit is "Bisected", with its PR, the files it touches and the runs in the plural', () => {
    const text = bisectSection(
      outcome(
        result({
          steps: [
            step('good', 'ok'),
            step('bad', 'bug'),
            step('skip', 'the reproduction fails for another reason than the reported bug: ValueError: x'),
          ],
          firstBad: {
            sha: BAD_SHA,
            subject: 'Merge pull request #53 from someone/branch',
            pr: 53,
            changedFiles: ['timm/models/conv2d_layers.py'],
            touchesImported: ['timm/models/conv2d_layers.py'],
            inTraceback: ['timm/models/conv2d_layers.py'],
          },
        }),
      ),
    );
    expect(text).toMatch(/^\*\*Bisected\*\* /);
    expect(text).toContain('3 runs over 32');
    expect(text).toContain('first bad commit `43e6143befbc` Merge pull request #\u200d53 from someone/branch (#53)');
    expect(text).toContain("it changes `timm/models/conv2d_layers.py`, where the failing run's traceback at it passes (innermost first)");
    expect(text).toContain('skipped `1e0b34722772`: the reproduction fails for another reason than the reported bug: ValueError: x');
  });

  it('counts the distinct environments the steps ran in, and says nothing of envs when the steps had none of their own', () => {
    const withEnv = (verdict: 'good' | 'bad', env: string) => ({ ...step(verdict, 'x'), env });
    const text = bisectSection(
      outcome(
        result({
          status: 'ceiling',
          steps: [
            withEnv('good', 'lock aaaaaaaaaaaa, built'),
            withEnv('bad', 'lock aaaaaaaaaaaa, reused'),
            withEnv('bad', 'lock bbbbbbbbbbbb, built'),
          ],
        }),
      ),
    );
    expect(text).toContain("- each step ran in its commit's own environment: 2 distinct locks (evidence.json names each step's)");
    expect(bisectSection(outcome(result({ status: 'ceiling', steps: [step('good', 'x')] })))).not.toContain('environment');
  });
});
