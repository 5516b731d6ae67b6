import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { changedLines, compareWithRealFix, enclosingFunction } from '../../../../src/pipeline/stages/candidate-fix/compare-fix.js';
import type { CandidateFixRecord } from '../../../../src/pipeline/stages/candidate-fix/types.js';
import { makeTempDir } from '../../../helpers/temp-dir.js';

const SRC =
  'import os\n\nclass Block:\n    def widen(self, xs, out):\n        body = xs\n\n        return body\n\ndef helper():\n    return 1\n';

describe('the candidate beside the real fix (issue 41 item 5)', () => {
  it('finds the enclosing def or class of a line by indentation', () => {
    expect(enclosingFunction(SRC, 5)).toBe('Block.widen');
    expect(enclosingFunction(SRC, 6)).toBe('Block.widen');
    expect(enclosingFunction(SRC, 4)).toBe('Block.widen');
    expect(enclosingFunction(SRC, 10)).toBe('helper');
    expect(enclosingFunction(SRC, 1)).toBe('<module>');
  });

  it('reads the changed lines of the old text: replaced, removed, and where an insertion goes', () => {
    expect(changedLines('a\nb\nc\n', 'a\nB\nc\n')).toEqual([2]);
    expect(changedLines('a\nb\nc\n', 'a\nc\n')).toEqual([2]);
    expect(changedLines('a\nb\nc\n', 'a\nb\nx\nc\n')).toEqual([2]);
    expect(changedLines('same\n', 'same\n')).toEqual([]);
  });

  it('compares files and functions from the two trees and the candidate diff, with both verdicts', async () => {
    const buggy = makeTempDir('repgen-cmp-buggy-');
    const fixed = makeTempDir('repgen-cmp-fixed-');
    for (const root of [buggy, fixed]) {
      mkdirSync(join(root, 'toylib'));
      writeFileSync(join(root, 'toylib', 'other.py'), 'x = 1\n');
    }
    writeFileSync(join(buggy, 'toylib', 'blocks.py'), SRC);
    writeFileSync(join(fixed, 'toylib', 'blocks.py'), SRC.replace('body = xs', 'body = xs + [0] * out').replace('return 1', 'return 2'));
    const record: CandidateFixRecord = {
      answer: 'yes',
      result: 'fix_sensitive',
      summary: '',
      diff: null,
      usage: { inputTokens: 0, outputTokens: 0, costUsd: 0 },
      durationMs: 0,
      attempts: [
        {
          n: 1,
          result: 'fix_sensitive',
          noEvidence: null,
          reason: '',
          diff: '--- a/toylib/blocks.py\n+++ b/toylib/blocks.py\n@@ -5,1 +5,1 @@\n-        body = xs\n+        body = list(xs) + [0] * (out - len(xs))\n',
          files: ['toylib/blocks.py'],
          runs: [],
          check: null,
          importFailure: null,
        },
      ],
    };
    const c = await compareWithRealFix(record, { buggy, fixed, ref: 'fix-ref', fixVerdict: 'fixed' });
    expect(c).toEqual({
      ref: 'fix-ref',
      fixFiles: ['toylib/blocks.py'],
      candidateFiles: ['toylib/blocks.py'],
      sameFiles: ['toylib/blocks.py'],
      fixFunctions: ['toylib/blocks.py:Block.widen', 'toylib/blocks.py:helper'],
      candidateFunctions: ['toylib/blocks.py:Block.widen'],
      sameFunctions: ['toylib/blocks.py:Block.widen'],
      fixVerdict: 'fixed',
      candidateResult: 'fix_sensitive',
    });
  });

  it('reads the candidate\u2019s functions where its hunks apply, not at the line its header names', async () => {
    const buggy = makeTempDir('repgen-cmp-buggy-');
    const fixed = makeTempDir('repgen-cmp-fixed-');
    mkdirSync(join(buggy, 'toylib'));
    mkdirSync(join(fixed, 'toylib'));
    writeFileSync(join(buggy, 'toylib', 'blocks.py'), SRC);
    writeFileSync(join(fixed, 'toylib', 'blocks.py'), SRC.replace('return 1', 'return 2'));
    // The header says line 4 (inside Block.widen); the hunk's lines are helper's, at line 9.
    const diff = '--- a/toylib/blocks.py\n+++ b/toylib/blocks.py\n@@ -4,2 +4,2 @@\n def helper():\n-    return 1\n+    return 2\n';
    const record: CandidateFixRecord = {
      answer: 'yes',
      result: 'fix_sensitive',
      summary: '',
      diff: null,
      usage: { inputTokens: 0, outputTokens: 0, costUsd: 0 },
      durationMs: 0,
      attempts: [
        {
          n: 1,
          result: 'fix_sensitive',
          noEvidence: null,
          reason: '',
          diff,
          files: ['toylib/blocks.py'],
          runs: [],
          check: null,
          importFailure: null,
        },
      ],
    };
    const c = await compareWithRealFix(record, { buggy, fixed, ref: 'fix-ref', fixVerdict: 'fixed' });
    expect(c?.candidateFunctions).toEqual(['toylib/blocks.py:helper']);
    expect(c?.sameFunctions).toEqual(['toylib/blocks.py:helper']);
  });
});
