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
