import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readOperatorEnv } from '../../../../src/config/operator-env.js';
import { RepoConfig } from '../../../../src/config/repo-config.js';
import type { Logger } from '../../../../src/log.js';
import { withEnv } from '../../../../src/pipeline/env-evidence.js';
import { resolveRunSpec } from '../../../../src/pipeline/run-spec.js';
import { defaultEnvPorts } from '../../../../src/pipeline/stages/env/default-env-ports.js';
import { prepareEnv } from '../../../../src/pipeline/stages/env/index.js';
import { envFailedEvidence } from '../../../../src/pipeline/env-evidence.js';
import { makeTempDir } from '../../../helpers/temp-dir.js';

const ISSUE = { title: 'it fails', body: 'RuntimeError: boom' };

function recordingLog(): Logger & { lines: Array<{ obj: Record<string, unknown>; msg: string }> } {
  const lines: Array<{ obj: Record<string, unknown>; msg: string }> = [];
  const rec = (obj: Record<string, unknown>, msg: string): void => void lines.push({ obj, msg });
  return { lines, debug: rec, info: rec, warn: rec, error: rec };
}

function portsFor(repoConfig: Parameters<typeof resolveRunSpec>[1]) {
  const spec = resolveRunSpec(readOperatorEnv({ REPGEN_PYLINT: '0', REPGEN_ENV_CACHE: makeTempDir('repgen-envc-') }), repoConfig, {});
  return spec.env;
}

describe('the default env ports read what repgen.yml names and never fail in silence (issue 38)', () => {
  it("environment.requirements: ['ci/deps.txt'] is read by that name, with the file it includes (it was reported missing)", async () => {
    const repo = makeTempDir('repgen-cfgreq-');
    mkdirSync(join(repo, 'ci'));
    writeFileSync(join(repo, 'ci', 'deps.txt'), '-r base.txt\nabsl-py>=1.0\n');
    writeFileSync(join(repo, 'ci', 'base.txt'), 'tqdm\n');
    writeFileSync(join(repo, 'model.py'), 'import torch\n');
    const settings = portsFor(RepoConfig.parse({ environment: { requirements: ['ci/deps.txt'] } }));
    const { ports } = await defaultEnvPorts(settings, recordingLog());
    expect(ports).not.toBeNull();
    const spec = await ports!.specFor({ issue: ISSUE, repoDir: repo }, new AbortController().signal);
    if (spec && 'keep' in spec) throw new Error('the base interpreter was kept although repgen.yml names requirements');
    expect(spec?.notes.join('\n') ?? '').not.toMatch(/does not have/);
    const config = spec?.requirements.filter((r) => r.source === 'config').map((r) => r.name) ?? [];
    expect(config.sort()).toEqual(['absl-py', 'tqdm']);
  });

  it('a spec that fails (1.77 M requirements through a -r chain) is logged with its message and said in the outcome', async () => {
    const repo = makeTempDir('repgen-hugereq-');
    for (let i = 0; i < 51; i++)
      writeFileSync(join(repo, `req${i}.txt`), `${i < 50 ? `-r req${i + 1}.txt\n` : ''}${'torch==1.0\n'.repeat(34_700)}`);
    writeFileSync(join(repo, 'requirements.txt'), '-r req0.txt\n');
    const log = recordingLog();
    const { ports } = await defaultEnvPorts(portsFor(null), log);
    const stage = await prepareEnv({ issue: ISSUE, repoDir: repo, checkout: repo }, ports!, () => undefined, new AbortController().signal);
    expect(stage.kind).toBe('none');
    const warned = log.lines.find((l) => l.msg.startsWith('environment spec failed'));
    expect(JSON.stringify(warned?.obj)).toMatch(/go deeper than 20 files/);
    // Any evidence: withEnv adds the stage's note to its notes.
    const evidence = withEnv(envFailedEvidence({ step: 'install', package: null, message: 'x', logTail: '', configKey: null }), stage);
    expect(evidence.outcome.notes).toEqual([
      expect.stringMatching(
        /^Environment: the project's environment could not be worked out \(requirements\.txt: its -r includes go deeper than 20 files/,
      ),
    ]);
  });
});

describe("the default env ports' proof input: the report's own import lines (issue 39)", () => {
  it('gives the proof the import lines as data, leaving out one the report shows failing (that failure may be the bug)', async () => {
    const { ports } = await defaultEnvPorts(portsFor(null), recordingLog());
    const body = [
      '```python',
      'import os',
      'os.environ["KERAS_BACKEND"] = "jax"',
      'from keras.layers.core import Dense',
      'from keras.wrappers.scikit_learn import KerasClassifier',
      'import numpy as np; np.system("x")',
      '```',
      '```',
      "ModuleNotFoundError: No module named 'keras.wrappers'",
      '```',
    ].join('\n');
    const proof = await ports!.proofFor!({ issue: { title: 'keras 2 code', body }, repoDir: null });
    expect(proof?.statements).toEqual([
      { module: 'os', names: [] },
      { module: 'keras.layers.core', names: ['Dense'] },
      // The import before the `;` is one, as Python reads it; what follows is never taken.
      { module: 'numpy', names: [] },
    ]);
    expect(proof?.setupEnv).toEqual({ KERAS_BACKEND: 'jax' });
  });
});

describe("the import proof's setup lines (issue 39, item 3)", () => {
  const kerasCheckout = (): string => {
    const repo = makeTempDir('repgen-kerasproj-');
    writeFileSync(join(repo, 'pyproject.toml'), '[project]\nname = "keras"\ndependencies = ["absl-py"]\n');
    mkdirSync(join(repo, 'keras'));
    writeFileSync(join(repo, 'keras', '__init__.py'), '');
    return repo;
  };

  it('the project is Keras and the report names its backend in words only: the proof imports Keras on that backend', async () => {
    const { ports } = await defaultEnvPorts(portsFor(null), recordingLog());
    const issue = { title: 'averagePooling2D calculates wrongly with torch backend', body: 'AveragePooling2D generates a wrong shape.' };
    const proof = await ports!.proofFor!({ issue, repoDir: kerasCheckout() });
    expect(proof).toMatchObject({ projectPackages: ['keras'], setupEnv: { KERAS_BACKEND: 'torch' } });
    // Not Keras: the words set nothing.
    const other = makeTempDir('repgen-otherproj-');
    writeFileSync(join(other, 'pyproject.toml'), '[project]\nname = "other"\n');
    mkdirSync(join(other, 'other'));
    writeFileSync(join(other, 'other', '__init__.py'), '');
    expect((await ports!.proofFor!({ issue, repoDir: other }))?.setupEnv).toEqual({});
  });

  it('a post cut short inside its script still sets what its code sets (an unclosed fence runs to the end)', async () => {
    const { ports } = await defaultEnvPorts(portsFor(null), recordingLog());
    const body =
      'Test script:\n```\nimport numpy as np\nimport os\nos.environ["KERAS_BACKEND"] = "jax"\nimport keras\n\ndef gen(b):\n    while True';
    const proof = await ports!.proofFor!({ issue: { title: 'LSTM fails with PyTorch as backend', body }, repoDir: kerasCheckout() });
    expect(proof?.setupEnv).toEqual({ KERAS_BACKEND: 'jax' });
    expect(proof?.reportModules).toEqual(expect.arrayContaining(['numpy', 'os', 'keras']));
  });
});
