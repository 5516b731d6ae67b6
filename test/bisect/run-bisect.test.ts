import { chmod, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runBisect } from '../../src/bisect/run-bisect.js';
import { createLocalExecutor } from '../../src/exec/local/executor.js';
import type { ScriptExecutor } from '../../src/exec/types.js';
import { readReport } from '../../src/symptoms/read-report.js';
import { gitBisectSource } from '../../src/bisect/git-bisect-source.js';
import { BAD_CODE, git, makeRegressionRepo } from '../helpers/git.js';
import { makeTempDir } from '../helpers/temp-dir.js';

// A real bisection: a synthetic repository, real checkouts, the real sandboxed executor and symptom matcher.
const SCRIPT = 'import toylib\nv = toylib.value()\nassert v == 1, f"value is {v}, expected 1"\nprint("ok")\n';
const REPORT = readReport(
  [
    'toylib.value() returns 2 since the last release; it worked in v1.0.',
    '```python',
    SCRIPT,
    '```',
    '```',
    'Traceback (most recent call last):',
    '  File "repro.py", line 3, in <module>',
    'AssertionError: value is 2, expected 1',
    '```',
  ].join('\n'),
);
/** A bug that raises inside the project: the first bad commit changes the file the traceback ends in. */
const RAISING_CODE = 'def value():\n    raise ValueError("value() is broken since the rework")\n';
const RAISING_REPORT = readReport(
  [
    'toylib.value() raises since the last release; it worked in v1.0.',
    '```python',
    SCRIPT,
    '```',
    '```',
    'Traceback (most recent call last):',
    '  File "repro.py", line 2, in <module>',
    '  File "/site-packages/toylib/__init__.py", line 2, in value',
    'ValueError: value() is broken since the rework',
    '```',
  ].join('\n'),
);
/** The bug shows only for some seeds (the confirmation's second seed, 1007, not the first, 7). */
const FLAKY_CODE = 'import os\ndef value():\n    return 2 if (int(os.environ.get("REPGEN_SEED", "0")) // 1000) % 2 else 1\n';

let root: string;
let executor: ScriptExecutor;

function source(repo: string, head: string, good = 'v1.0', bad = 'main') {
  return gitBisectSource({
    repoDir: repo,
    repo: repo,
    good: { ref: good, sha: git(repo, 'rev-parse', `${good}^{commit}`), why: `the report says it worked in ${good}` },
    bad: { ref: bad, sha: bad === 'main' ? head : git(repo, 'rev-parse', `${bad}^{commit}`) },
    cacheDir: join(root, 'checkouts'),
    python: '/usr/bin/python3',
  });
}

const settings = { runTimeoutMs: 60_000, runMemoryMb: 1024 };

beforeAll(async () => {
  root = makeTempDir('repgen-bisect-');
  // The sandbox's uid walks to its work folder and to the checkouts it mounts.
  await chmod(root, 0o755);
  executor = createLocalExecutor({ workRoot: join(root, 'work') });
});
afterAll(async () => {
  await executor.close?.();
  await rm(root, { recursive: true, force: true });
});

describe.concurrent('runBisect on a synthetic repository (real checkouts, real sandboxed runs)', () => {
  it('finds the merge commit that brought the bug, along first parents, skipping the commit whose import fails', async () => {
    const { repo, shas, head } = await makeRegressionRepo(join(root, 'plain'), BAD_CODE);
    const progress: string[] = [];
    const r = await runBisect(
      { script: SCRIPT, report: REPORT, imports: ['toylib'], runsPerStep: 1, maxSteps: 20, maxMs: 600_000, settings },
      { executor, source: source(repo, head), progress: (m) => progress.push(m) },
    );
    expect(r.status).toBe('found');
    expect(r.firstBad).toMatchObject({ sha: shas[7], subject: 'Merge pull request #42 from someone/side', pr: 42 });
    expect(r.firstBad?.touchesImported).toEqual(['toylib/__init__.py']);
    expect(r.commitsInRange).toBe(12);
    expect(r.expectedSteps).toBe(4);
    // GOOD is checked first; the side branch's own commits are never tested.
    expect(r.steps[0]).toMatchObject({ verdict: 'good', subject: 'v1.0 (GOOD)' });
    const side = git(repo, 'rev-list', `${shas[7]}^2`, '-n', '2').split('\n');
    expect(r.steps.map((s) => s.sha)).not.toContain(side[0]);
    expect(r.steps.map((s) => s.sha)).not.toContain(side[1]);
    expect(r.steps.length).toBeLessThanOrEqual(1 + r.expectedSteps + 1);
    for (const s of r.steps.filter((x) => x.verdict === 'skip')) expect(s.why).toMatch(/ModuleNotFoundError|another reason/);
    expect(progress.some((m) => /^bisecting: \d+ commits left, ~\d+ steps?$/.test(m))).toBe(true);
  }, 300_000);

  it('names the changed file the failing run raises in, for a crash inside the project', async () => {
    const { repo, shas, head } = await makeRegressionRepo(join(root, 'raising'), RAISING_CODE);
    const r = await runBisect(
      { script: SCRIPT, report: RAISING_REPORT, imports: ['toylib'], runsPerStep: 1, maxSteps: 20, maxMs: 600_000, settings },
      { executor, source: source(repo, head) },
    );
    expect(r.status).toBe('found');
    expect(r.firstBad).toMatchObject({ sha: shas[7], inTraceback: ['toylib/__init__.py'] });
    expect(r.reason).toContain("toylib/__init__.py, where the failing run's traceback passes");
  }, 300_000);

  it('a flaky bug is found with seeded re-runs; one run a step would have passed a bad commit as good', async () => {
    const { repo, shas, head } = await makeRegressionRepo(join(root, 'flaky'), FLAKY_CODE);
    const r = await runBisect(
      { script: SCRIPT, report: REPORT, imports: ['toylib'], runsPerStep: 2, maxSteps: 20, maxMs: 600_000, settings },
      { executor, source: source(repo, head) },
    );
    expect(r.status).toBe('found');
    expect(r.firstBad?.sha).toBe(shas[7]);
    expect(r.steps.filter((s) => s.verdict === 'bad').every((s) => s.why.includes('1/2 runs'))).toBe(true);
    const once = await runBisect(
      { script: SCRIPT, report: REPORT, imports: ['toylib'], runsPerStep: 1, maxSteps: 20, maxMs: 600_000, settings },
      { executor, source: source(repo, head) },
    );
    expect(once.firstBad?.sha).not.toBe(shas[7]);
  }, 300_000);

  it('says so when the reproduction fails at GOOD too, and when GOOD is not on the first-parent line', async () => {
    const { repo, head } = await makeRegressionRepo(join(root, 'always'), BAD_CODE);
    const r = await runBisect(
      { script: SCRIPT, report: REPORT, imports: ['toylib'], runsPerStep: 1, maxSteps: 20, maxMs: 600_000, settings },
      { executor, source: source(repo, head, 'HEAD~1') },
    );
    expect(r.status).toBe('not_regression');
    expect(r.reason).toContain('fails at HEAD~1 too');
    const r2 = await runBisect(
      { script: SCRIPT, report: REPORT, imports: ['toylib'], runsPerStep: 1, maxSteps: 20, maxMs: 600_000, settings },
      { executor, source: source(repo, head, 'side', 'v1.0') },
    );
    expect(r2.status).toBe('no_commits');
  }, 300_000);

  it('stops at the step ceiling and names the commits still suspect', async () => {
    const { repo, head } = await makeRegressionRepo(join(root, 'ceiling'), BAD_CODE);
    const r = await runBisect(
      { script: SCRIPT, report: REPORT, imports: ['toylib'], runsPerStep: 1, maxSteps: 2, maxMs: 600_000, settings },
      { executor, source: source(repo, head) },
    );
    expect(r.status).toBe('ceiling');
    expect(r.steps).toHaveLength(2);
    expect(r.candidates.length).toBeGreaterThan(1);
    expect(r.reason).toContain('step ceiling (2)');
  }, 300_000);

  it('runs each step in its commit’s own environment and skips a commit whose environment cannot be built', async () => {
    const { repo, shas, head } = await makeRegressionRepo(join(root, 'envs'), BAD_CODE);
    const unbuildable = shas[5]!;
    const asked: string[] = [];
    const executorAt = async (workspace: { hostPath: string }) => {
      const sha = git(workspace.hostPath, 'rev-parse', 'HEAD');
      asked.push(sha);
      return sha === unbuildable
        ? { skip: 'the environment could not be built at this commit: resolve of numpy failed (No solution found)' }
        : { executor, env: `lock ${sha.slice(0, 12)}, built` };
    };
    const r = await runBisect(
      { script: SCRIPT, report: REPORT, imports: ['toylib'], runsPerStep: 1, maxSteps: 20, maxMs: 600_000, settings },
      { executor, source: source(repo, head), executorAt },
    );
    expect(r.status).toBe('found');
    expect(r.firstBad?.sha).toBe(shas[7]);
    expect(asked).toEqual(r.steps.map((s) => s.sha));
    const skipped = r.steps.find((s) => s.sha === unbuildable);
    expect(skipped).toMatchObject({
      verdict: 'skip',
      runs: 0,
      why: expect.stringMatching(/^the environment could not be built at this commit/),
    });
    expect(skipped?.env).toBeUndefined();
    for (const s of r.steps.filter((x) => x.sha !== unbuildable)) expect(s.env).toBe(`lock ${s.sha.slice(0, 12)}, built`);
  }, 300_000);
});
