import { describe, expect, it } from 'vitest';
import { createPyflakesChecker } from '../../src/agent/pyflakes-checker.js';
import { silentLogger } from '../../src/log.js';
import { envImportFailure, type EnvImportInput } from '../../src/pipeline/environment-state.js';
import { runReproWithEvidence } from '../../src/pipeline/run-repro.js';
import { ReproSettings } from '../../src/pipeline/settings.js';
import { runOutcome } from '../../src/pipeline/stages/outcome/index.js';
import type { Symptom } from '../../src/symptoms/types.js';
import { FakeExecutor } from '../fakes/fake-executor.js';
import { makeTempDir } from '../helpers/temp-dir.js';

const crash = (type: string, kind: Symptom['kind'] = 'other_crash'): Symptom => ({
  kind,
  category: 'crash',
  evidence: type,
  exception: { type, message: 'm' },
});
const base = (over: Partial<EnvImportInput>): EnvImportInput => ({
  probe: null,
  runOutput: null,
  projectPackages: new Set(['keras']),
  env: { pins: { 'absl-py': '2.1.0' }, declared: ['absl-py', 'numpy'] },
  workspaceMount: '/workspace',
  expected: [],
  distributionOf: (m) => (m === 'absl' ? 'absl-py' : null),
  ...over,
});
const traceback = (frames: string[], last: string): string =>
  ['Traceback (most recent call last):', ...frames.map((f) => `  File "${f}", line 3, in <module>\n    import x`), last].join('\n');

describe("an import the environment should make work is the environment's failure (issue 27 item 5)", () => {
  const torchvision = 'RuntimeError: operator torchvision::nms does not exist';

  it("the project's own import failing (the probe) names the package, its error and the key that fixes it", () => {
    const found = envImportFailure(base({ probe: { importErrors: { keras: torchvision } } }));
    expect(found).toMatchObject({ module: 'keras', configKey: 'environment.packages' });
    expect(found?.sentence).toBe(
      'The project does not import in this environment, so no run could show the bug: `import keras` fails: ' +
        `${torchvision} (the project (keras) does not import). Setting \`environment.packages\` in .github/repgen.yml can fix it.`,
    );
    const missing = envImportFailure(base({ probe: { importErrors: { keras: "ModuleNotFoundError: No module named 'absl'" } } }));
    expect(missing).toMatchObject({ module: 'absl', configKey: 'environment.packages', why: expect.stringMatching(/declared dependency/) });
  });

  it('a run that stops at a declared dependency, or at a module the project’s code imports, is the env’s', () => {
    const declared = traceback(['/tmp/w/repro.py'], "ModuleNotFoundError: No module named 'absl'");
    expect(envImportFailure(base({ runOutput: declared }))).toMatchObject({
      module: 'absl',
      configKey: 'environment.packages',
      sentence: expect.stringMatching(
        /^The run stopped at an import the environment should provide.*`ModuleNotFoundError: No module named 'absl'`/,
      ),
    });
    const inProject = traceback(['/tmp/w/repro.py', '/workspace/keras/src/utils.py'], "ModuleNotFoundError: No module named 'rich'");
    expect(envImportFailure(base({ runOutput: inProject }))?.why).toMatch(/the project's code imports rich/);
  });

  it("a script's own import of a module nobody declared, or a run with no import error, is left to the agent", () => {
    expect(
      envImportFailure(base({ runOutput: traceback(['/tmp/w/repro.py'], "ModuleNotFoundError: No module named 'my_helpers'") })),
    ).toBeNull();
    expect(envImportFailure(base({ runOutput: 'ValueError: bad shape' }))).toBeNull();
    expect(envImportFailure(base({ probe: { importErrors: { other: torchvision } } }))).toBeNull();
  });

  it('when the report shows an import failure (or, for the project, the same exception) it may be the bug: no env failure', () => {
    const declared = traceback(['/tmp/w/repro.py'], "ModuleNotFoundError: No module named 'absl'");
    expect(envImportFailure(base({ runOutput: declared, expected: [crash('ModuleNotFoundError', 'import_error')] }))).toBeNull();
    expect(envImportFailure(base({ probe: { importErrors: { keras: torchvision } }, expected: [crash('RuntimeError')] }))).toBeNull();
  });

  it('ends exit_env / environment_failed, never "not reproduced" or needs-info', () => {
    const sentence = envImportFailure(base({ probe: { importErrors: { keras: torchvision } } }))?.sentence ?? '';
    const d = runOutcome({
      rejection: null,
      report: { reading: { expected: [] } } as never,
      plan: null,
      snippet: null,
      agent: null,
      confirm: null,
      llm: { available: false, reason: 'none' },
      infra: null,
      envFailure: sentence,
    });
    expect(d).toMatchObject({ status: 'exit_env', verdict: 'environment_failed', needsInfo: [] });
    expect(d.summary).toContain('torchvision::nms');
  });
});

describe('a run of the report’s code that stops at a declared dependency', () => {
  it('ends exit_env naming the module and the key, not a mismatch against the report’s error', async () => {
    const executor = new FakeExecutor((req) =>
      req.entry === 'probe.py'
        ? {
            stdout: `REPGEN_PROBE ${JSON.stringify({
              python: '3.11.2',
              executable: '/env/bin/python',
              platform: 'Linux',
              modules: { keras: 'workspace', numpy: '1.26.4' },
              importErrors: {},
              cuda: false,
              cudaVersion: null,
            })}\n`,
          }
        : {
            stderr: traceback(
              [`${req.entry}`, '/workspace/keras/__init__.py', '/workspace/keras/src/backend/config.py'],
              "ModuleNotFoundError: No module named 'absl'",
            ),
            exitCode: 1,
          },
    );
    const body =
      '# keras.ops.sum crashes\n\n```python\nimport numpy as np\nimport keras\nprint(keras.ops.sum(np.ones(3)))\n```\n\n```\nTypeError: unsupported operand\n```\n';
    const ev = await runReproWithEvidence(
      {
        issue: { title: '', body },
        settings: ReproSettings.parse({ pylint: false, confirmRuns: 0 }),
        workspace: { hostPath: makeTempDir('repgen-envimport-'), project: 'keras @ 0123abcd', packages: ['keras'] },
        env: { pins: { 'absl-py': '2.1.0', numpy: '1.26.4' }, declared: ['absl-py', 'numpy'] },
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
    expect(ev.outcome).toMatchObject({ status: 'exit_env', verdict: 'environment_failed' });
    expect(ev.outcome.summary).toContain("No module named 'absl'");
    expect(ev.outcome.summary).toContain('`environment.packages`');
    expect(ev.outcome.summary).not.toMatch(/mismatch|No model configured/);
  });
});
