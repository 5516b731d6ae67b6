import { afterEach, describe, expect, it, onTestFinished } from 'vitest';
import { createPyflakesChecker } from '../../src/agent/pyflakes-checker.js';
import { createExecutor, readExecConfig } from '../../src/exec/index.js';
import { createLlmClient } from '../../src/llm/index.js';
import { silentLogger } from '../../src/log.js';
import { runReproWithEvidence } from '../../src/pipeline/run-repro.js';
import { ReproSettings } from '../../src/pipeline/settings.js';
import { startScriptedAnthropicServer, type ScriptedServer } from '../helpers/anthropic-wire-server.js';
import { answer, CRASH_ISSUE, GOOD_SCRIPT, WRONG_SCRIPT } from '../fakes/repro-fixtures.js';

let server: ScriptedServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

// Real Python runs (Debian's torch, the local sandbox): one confirmation run keeps these to a few runs each.
const settings = ReproSettings.parse({ pylint: false, confirmRuns: 1 });
const checker = createPyflakesChecker({ pylint: false });

describe('runRepro on the real local executor', { timeout: 180_000 }, () => {
  it("tier 0 reproduces a crash from the report's own snippet (import added, judged on real output)", async () => {
    const executor = await createExecutor(readExecConfig({}), { log: silentLogger });
    // Its warm servers keep their run folders until it is closed.
    onTestFinished(() => executor.close?.());
    const body =
      '# RuntimeError: mean(): could not infer output dtype\n\n```python\ntns = torch.tensor([1,0,1])\ntns.mean()\n```\n\n```\nTraceback (most recent call last):\n  File "main.py", line 4, in <module>\n    tns.mean()\nRuntimeError: mean(): could not infer output dtype. Input dtype must be either a floating point or complex dtype. Got: Long\n```\n';
    const ev = await runReproWithEvidence(
      { issue: { title: '', body }, settings },
      { executor, llm: null, checker, log: silentLogger, progress: () => undefined },
    );
    expect(ev.outcome.status).toBe('reproduced');
    expect(ev.outcome.confirmation).toEqual({ reproducedRuns: 1, totalRuns: 1 });
    expect(ev.outcome.attempts[0]).toMatchObject({
      tier: 0,
      outcome: 'reproduced',
      edits: ['added `import torch` (the code uses `torch` without importing it)'],
    });
    expect(ev.finalRun?.output).toMatch(/RuntimeError: mean\(\): could not infer output dtype/);
    expect(ev.outcome.environment.python).toMatch(/^3\./);
  });

  it('tier 1 refines a wrong script into one that really crashes the same way', async () => {
    const executor = await createExecutor(readExecConfig({}), { log: silentLogger });
    // Its warm servers keep their run folders until it is closed.
    onTestFinished(() => executor.close?.());
    server = await startScriptedAnthropicServer(['```json\n{}\n```', answer(WRONG_SCRIPT), answer(GOOD_SCRIPT)]);
    const llm = await createLlmClient({
      provider: 'anthropic',
      apiKey: 'sk-test-key',
      baseURL: server.url,
      maxRetries: 0,
      initialBackoffMs: 1,
    });
    const ev = await runReproWithEvidence(
      { issue: { title: '', body: CRASH_ISSUE }, settings },
      { executor, llm, checker, log: silentLogger, progress: () => undefined },
    );
    expect(ev.outcome.attempts.map((a) => a.outcome)).toEqual(['run_mismatch', 'reproduced']);
    expect(ev.outcome.attempts[0]?.feedback).toMatch(/Observed: .*(Long|dtype|scalar type)/s);
    expect(ev.outcome.status).toBe('reproduced');
    expect(ev.finalRun?.output).toMatch(/RuntimeError: mat1 and mat2 shapes cannot be multiplied \(4x3 and 5x2\)/);
  });
});
