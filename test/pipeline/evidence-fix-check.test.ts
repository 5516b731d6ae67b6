import { describe, expect, it } from 'vitest';
import { createPyflakesChecker } from '../../src/agent/pyflakes-checker.js';
import { silentLogger } from '../../src/log.js';
import { checkFix } from '../../src/pipeline/evidence.js';
import { runReproWithEvidence } from '../../src/pipeline/run-repro.js';
import { ReproSettings } from '../../src/pipeline/settings.js';
import { buildResultComment } from '../../src/publish/build-result-comment.js';
import { FakeExecutor } from '../fakes/fake-executor.js';
import { CRASH_ISSUE, simulate } from '../fakes/repro-fixtures.js';

describe('checkFix: the fix check reaches the published comment (issue 40, item 6c)', () => {
  it("puts the check's verdict in the outcome, so the comment says it, not only evidence.json", async () => {
    const executor = new FakeExecutor(simulate);
    const evidence = await runReproWithEvidence(
      { issue: { title: '', body: CRASH_ISSUE }, settings: ReproSettings.parse({ pylint: false }) },
      { executor, llm: null, checker: createPyflakesChecker({ pylint: false }), log: silentLogger, progress: () => undefined },
    );
    expect(evidence.outcome.status).not.toBe('reproduced');
    const checked = await checkFix(evidence, {
      ref: 'fix-branch',
      sha: 'fedcba9876543210',
      workspace: { hostPath: '/nonexistent-checkout' },
      settings: { runTimeoutMs: 10_000, runMemoryMb: 512, confirmRuns: 2 },
      executor,
    });
    expect(checked.outcome.fixCheck).toEqual({
      ref: 'fix-branch',
      sha: 'fedcba9876543210',
      verdict: 'inconclusive',
      reason: expect.stringMatching(/^nothing was reproduced/),
    });
    expect(buildResultComment(checked.outcome)).toMatch(
      /\*\*Fix check\*\* at `fix-branch` \(fedcba987654\): ➖ inconclusive — nothing was reproduced/,
    );
  });
});
