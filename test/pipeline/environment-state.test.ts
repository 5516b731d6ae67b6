import { describe, expect, it } from 'vitest';
import { createPyflakesChecker } from '../../src/agent/pyflakes-checker.js';
import { silentLogger } from '../../src/log.js';
import { environmentState } from '../../src/pipeline/environment-state.js';
import { runReproWithEvidence } from '../../src/pipeline/run-repro.js';
import { ReproSettings } from '../../src/pipeline/settings.js';
import { buildResultComment } from '../../src/publish/build-result-comment.js';
import { FakeExecutor } from '../fakes/fake-executor.js';
import { makeTempDir } from '../helpers/temp-dir.js';

// Issue 25, item 7: a project that fails to import is an environment failure, said once: the headline, the summary
// and the Environment line agree (never "No model configured" over it, never "importable as installed").

const FAILED = "AttributeError: module 'numpy' has no attribute 'float'";

describe('environmentState', () => {
  it('a project package that fails to import: a failure, and the project line says it fails to import', () => {
    const s = environmentState({ importErrors: { fairseq: FAILED } }, { project: 'fairseq @ 0123abcd', packages: ['fairseq'] });
    expect(s.failure).toBe(`the project \`fairseq\` is installed but fails to import (${FAILED})`);
    expect(s.projectLine).toMatch(/^fairseq @ 0123abcd: fails to import here \(fairseq: AttributeError/);
    expect(s.projectLine).not.toContain('importable');
  });

  it('a dependency installed but broken is a failure too; a clean probe is none and the project imports', () => {
    expect(environmentState({ importErrors: { apex: 'ImportError: libcudart.so.11' } }, null).failure).toMatch(/^the dependency `apex`/);
    const clean = environmentState({ importErrors: {} }, { project: 'p', packages: ['p'] });
    expect(clean).toMatchObject({ failed: [], failure: null });
    expect(clean.projectLine).toMatch(/^p: importable as installed/);
  });
});

describe('a run whose project fails to import', () => {
  it('headlines an environment failure (not "No model configured") and never calls the project importable', async () => {
    const executor = new FakeExecutor((req) =>
      req.entry === 'probe.py'
        ? {
            stdout: `REPGEN_PROBE ${JSON.stringify({
              python: '3.11.2',
              executable: '/usr/bin/python3',
              platform: 'Linux',
              modules: { torch: '2.1.0', fairseq: null },
              importErrors: { fairseq: FAILED },
              cuda: false,
              cudaVersion: null,
            })}\n`,
          }
        : { stderr: `Traceback (most recent call last):\n  File "repro.py", line 1, in <module>\n${FAILED}\n`, exitCode: 1 },
    );
    const body =
      '# TypeError in the trainer\n\n```python\nimport torch\nimport fairseq\nout = model(torch.zeros(2))\n```\n\n```\nTypeError: cannot unpack non-iterable NoneType object\n```\n\ntorch==2.1.0\n';
    const hostPath = makeTempDir('repgen-envstate-');
    const ev = await runReproWithEvidence(
      {
        issue: { title: '', body },
        settings: ReproSettings.parse({ pylint: false, confirmRuns: 0 }),
        workspace: { hostPath, project: 'fairseq @ 0123abcd', packages: ['fairseq'] },
      },
      {
        executor,
        llm: null,
        llmReason: 'no LLM: chosen with --llm none',
        checker: createPyflakesChecker({ pylint: false }),
        log: silentLogger,
        progress: () => undefined,
      },
    );
    // The project's own import fails and the report shows no such failure: the run stops there, exit_env.
    expect(ev.outcome).toMatchObject({ status: 'exit_env', verdict: 'environment_failed' });
    expect(ev.outcome.summary).toMatch(
      /^The project does not import in this environment, so no run could show the bug: `import fairseq` fails/,
    );
    const comment = buildResultComment(ev.outcome);
    expect(comment).toContain('### RepGen: ⚠️ Environment failure');
    expect(comment).not.toContain('No model configured');
    expect(comment).not.toContain('importable as installed');
    expect(comment).toMatch(/\*\*Environment:\*\*.*fails to import here/);
  });
});
