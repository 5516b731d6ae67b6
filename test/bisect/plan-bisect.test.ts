import { describe, expect, it } from 'vitest';
import {
  filesInImportedPackages,
  nextBisectStep,
  pullRequestOf,
  shortRef,
  stepVerdict,
  tracebackFilesIn,
  type BisectCommit,
  type StepRecord,
} from '../../src/bisect/plan-bisect.js';

const commits: BisectCommit[] = Array.from({ length: 10 }, (_, i) => ({ sha: `c${i}`, subject: `commit ${i}` }));

/** Drives the planner against a known first bad index, skipping `broken` commits; returns the tested order. */
function bisect(firstBad: number, broken: number[] = []): { tested: string[]; end: ReturnType<typeof nextBisectStep> } {
  const records = new Map<string, StepRecord>();
  const tested: string[] = [];
  for (;;) {
    const next = nextBisectStep(commits, records);
    if (next.kind !== 'test') return { tested, end: next };
    const i = commits.findIndex((c) => c.sha === next.sha);
    tested.push(next.sha);
    const verdict = broken.includes(i) ? 'skip' : i >= firstBad ? 'bad' : 'good';
    records.set(next.sha, { verdict, why: '' });
  }
}

describe('nextBisectStep', () => {
  it('finds every first bad commit of a 10-commit range in at most ceil(log2(10)) = 4 steps', () => {
    for (let bad = 0; bad < 10; bad++) {
      const { tested, end } = bisect(bad);
      expect(end).toEqual({ kind: 'found', sha: `c${bad}` });
      expect(tested.length).toBeLessThanOrEqual(4);
    }
  });

  it('steps around a skipped commit and still finds the first bad one when the skip is not next to it', () => {
    const { tested, end } = bisect(7, [4]);
    expect(end).toEqual({ kind: 'found', sha: 'c7' });
    expect(tested).toContain('c4');
  });

  it('says which commits it could be when skipped commits sit right before the first bad one (never blames a skip)', () => {
    const { end } = bisect(5, [3, 4]);
    expect(end).toEqual({ kind: 'ambiguous', candidates: ['c3', 'c4', 'c5'] });
  });

  it('counts the suspects and the steps left', () => {
    expect(nextBisectStep(commits, new Map())).toMatchObject({ kind: 'test', left: 10, steps: 4 });
  });

  it('a range of one commit is that commit', () => {
    expect(nextBisectStep([{ sha: 'x', subject: '' }], new Map())).toEqual({ kind: 'found', sha: 'x' });
  });
});

describe('stepVerdict', () => {
  it('the reported bug in any seeded run is bad (a flaky bug shows in some seeds only)', () => {
    expect(stepVerdict(['passed', 'reproduces']).verdict).toBe('bad');
  });
  it('all runs passing is good', () => {
    expect(stepVerdict(['passed', 'passed'])).toEqual({ verdict: 'good', why: 'the reproduction exits 0 in 2/2 runs' });
  });
  it('another failure (an import error at a broken commit) is a skip with its reason, never bad', () => {
    const r = stepVerdict(['fails_otherwise'], ['ImportError: cannot import name x']);
    expect(r.verdict).toBe('skip');
    expect(r.why).toContain('ImportError: cannot import name x');
    expect(stepVerdict(['passed', 'fails_otherwise']).verdict).toBe('skip');
    expect(stepVerdict(['infra'], ['timeout: no runner']).verdict).toBe('skip');
    expect(stepVerdict([]).verdict).toBe('skip');
  });
});

describe('pullRequestOf', () => {
  it.each([
    ['Merge pull request #1234 from user/branch', 1234],
    ['Fix convnext stem for in_chans != 3 (#1701)', 1701],
    ['Fix convnext stem', null],
    ['Revert #12 partially', null],
  ])('%s → %s', (subject, pr) => {
    expect(pullRequestOf(subject)).toBe(pr);
  });
});

describe('filesInImportedPackages', () => {
  it('keeps code files inside a package the repro imports, flat or src/ layout', () => {
    const changed = [
      'timm/models/convnext.py',
      'README.md',
      'tests/test_models.py',
      'src/lightning/pytorch/trainer.py',
      'setup.py',
      'toy.py',
    ];
    expect(filesInImportedPackages(changed, ['timm.models', 'torch', 'lightning', 'toy'])).toEqual([
      'timm/models/convnext.py',
      'src/lightning/pytorch/trainer.py',
      'toy.py',
    ]);
    expect(filesInImportedPackages(['docs/x.py'], ['timm'])).toEqual([]);
  });
});

describe('tracebackFilesIn', () => {
  it('reads the project files of the frames, relative to where the run saw the checkout, even with the header cut off', () => {
    const output = [
      'ckages/timm/__init__.py", line 2',
      '  File "/workspace/timm/__init__.py", line 2, in <module>',
      '    from .models import create_model',
      '  File "/workspace/timm/models/maxxvit.py", line 216, in <module>',
      '  File "/usr/lib/python3.11/dataclasses.py", line 1221, in dataclass',
      '  File "/tmp/checkouts/abc/timm/layers/helpers.py", line 6, in <module>',
      '  File "/workspace-other/x.py", line 1, in <module>',
      "ValueError: mutable default <class 'timm.models.maxxvit.MaxxVitConvCfg'> for field conv_cfg is not allowed",
    ].join('\n');
    expect([...tracebackFilesIn(output, ['/workspace', '/tmp/checkouts/abc'])]).toEqual([
      'timm/__init__.py',
      'timm/models/maxxvit.py',
      'timm/layers/helpers.py',
    ]);
    expect(tracebackFilesIn('no traceback here', ['/workspace']).size).toBe(0);
  });
});

describe('shortRef', () => {
  it('cuts a full SHA to 12 characters and leaves tags and short SHAs alone', () => {
    expect(shortRef('43e6143befbc3704bf99d7e2dc57e9e18d366dff')).toBe('43e6143befbc');
    expect(shortRef('v0.6.12')).toBe('v0.6.12');
    expect(shortRef('43e6143b')).toBe('43e6143b');
  });
});
