import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildResultComment } from '../../src/publish/build-result-comment.js';
import { cutAtBoundary, tableCell } from '../../src/publish/neutralize.js';
import type { ReproOutcome } from '../../src/pipeline/types.js';
import { makeTempDir } from '../helpers/temp-dir.js';

/** Issue 40, item 6 (c, d, e): the comment says the fix check, a hand rerun that works, and cuts no word or code span. */
function outcome(over: Partial<ReproOutcome> = {}): ReproOutcome {
  return {
    status: 'reproduced',
    summary: 'Reproduced RuntimeError with the report’s own code in 3 of 3 seeded re-runs.',
    script: 'import srcpkg\nprint(srcpkg.VALUE)\n',
    confirmation: { reproducedRuns: 3, totalRuns: 3 },
    expected: [],
    observed: [],
    match: { verdict: 'reproduced', score: 1, reasons: ['same exception class RuntimeError'] },
    metrics: [],
    outputExcerpt: 'Traceback (most recent call last):\nRuntimeError: boom\n',
    environment: {
      python: '3.11.2',
      project: 'kornia: importable as installed (the checkout is on PYTHONPATH, read-only); import it as the report does',
    },
    attempts: [{ n: 1, tier: 0, bundle: null, outcome: 'reproduced', feedback: 'ran', script: 'x' }],
    needsInfo: [],
    usage: { inputTokens: 0, outputTokens: 0, costUsd: 0 },
    durationMs: 4200,
    ...over,
  };
}

describe('the fix check in the comment (6c)', () => {
  it('says the fix check result when one ran, and nothing when none did', () => {
    const fixed = buildResultComment(
      outcome({
        fixCheck: { ref: 'v0.7.3', sha: '0123456789abcdef', verdict: 'fixed', reason: 'the bug showed in none of 2 runs at the fix' },
      }),
    );
    expect(fixed).toContain('**Fix check** at `v0.7.3` (0123456789ab): ✅ fixed — the bug showed in none of 2 runs at the fix.');
    const still = buildResultComment(
      outcome({ fixCheck: { ref: 'pr-12', sha: null, verdict: 'still_reproduces', reason: '2 of 2 runs still show it' } }),
    );
    expect(still).toContain('**Fix check** at `pr-12`: ❌ still reproduces — 2 of 2 runs still show it.');
    expect(buildResultComment(outcome())).not.toContain('Fix check');
  });
});

describe('the hand-rerun line (6d): it works for a flat layout and a src/ layout alike', () => {
  const root = makeTempDir('repgen-rerun-');
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  /** Runs the comment's command in a scratch folder with `<checkout>` replaced, as a maintainer would. */
  function runByHand(command: string, checkout: string, script: string): number | null {
    const scratch = mkdtempSync(join(root, 'scratch-'));
    writeFileSync(join(scratch, 'repro.py'), script);
    const line = command.replaceAll('<checkout>', checkout).replace(/\bpython\b/, 'python3');
    return spawnSync('bash', ['-c', line], { cwd: scratch, encoding: 'utf8' }).status;
  }

  function commandOf(md: string): string {
    const m = /Run it by hand.*`(PYTHONPATH=[^`]+)`/.exec(md);
    if (!m?.[1]) throw new Error(`no PYTHONPATH rerun line in:\n${md}`);
    return m[1];
  }

  it('imports the project from a src/ layout (where PYTHONPATH=<checkout> alone fails) and from a flat one', () => {
    const src = join(root, 'src-layout');
    mkdirSync(join(src, 'src', 'srcpkg'), { recursive: true });
    writeFileSync(join(src, 'src', 'srcpkg', '__init__.py'), 'VALUE = 1\n');
    writeFileSync(join(src, 'pyproject.toml'), '[project]\nname = "srcpkg"\n');
    const flat = join(root, 'flat-layout');
    mkdirSync(join(flat, 'flatpkg'), { recursive: true });
    writeFileSync(join(flat, 'flatpkg', '__init__.py'), 'VALUE = 2\n');

    const command = commandOf(buildResultComment(outcome()));
    expect(runByHand(command, src, 'import srcpkg\nprint(srcpkg.VALUE)\n')).toBe(0);
    expect(runByHand(command, flat, 'import flatpkg\nprint(flatpkg.VALUE)\n')).toBe(0);
    // The line once documented does not import a src/ layout: why the comment's line names both roots.
    expect(runByHand('PYTHONPATH=<checkout> python repro.py', src, 'import srcpkg\n')).not.toBe(0);
  });

  it('names the installed-project route for an env, and only `python repro.py` for a report with no project', () => {
    const env = {
      python: '/envs/x/bin/python',
      lockHash: 'a'.repeat(64),
      pins: { torch: '2.3.0' },
      substitutions: [],
      cached: true,
      buildMs: 0,
      lock: 'torch==2.3.0\n',
      failure: null,
    };
    expect(buildResultComment(outcome({ env }))).toMatch(
      /`python repro\.py` in an environment where the project is installed \(`pip install -e <checkout>` with the packages of `requirements-repro\.txt`\)/,
    );
    expect(buildResultComment(outcome({ environment: { python: '3.11.2' } }))).toContain('Run it by hand: `python repro.py`.');
  });
});

describe('cuts at a word or segment boundary (6e)', () => {
  it('never leaves the Environment line cut inside a word', () => {
    const md = buildResultComment(outcome());
    const line = md.split('\n').find((l) => l.startsWith('**Environment:**')) ?? '';
    expect(line).toContain('`kornia: importable as installed (the checkout is on PYTHONPATH, read-only);…`');
    expect(line).not.toMatch(/ impo…/);
  });

  it('cuts table cells and inline code at a boundary and closes an open code span', () => {
    expect(cutAtBoundary('the run raised `torch.nn.functional.interpolate(x, size=(3, 4))` at line 4', 40)).toBe(
      'the run raised `torch.nn.functional.…`',
    );
    expect(tableCell('RandomAffine fails when the batch size changes between calls', 30)).toBe('RandomAffine fails when the…');
    // A single long token has no boundary: it is cut where it must be.
    expect(cutAtBoundary('x'.repeat(50), 20)).toBe(`${'x'.repeat(18)}…`);
  });
});
