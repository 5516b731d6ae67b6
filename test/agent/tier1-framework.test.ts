import { afterEach, describe, expect, it } from 'vitest';
import { createPyflakesChecker } from '../../src/agent/pyflakes-checker.js';
import { createLlmClient } from '../../src/llm/index.js';
import type { LlmClient } from '../../src/llm/types.js';
import { silentLogger } from '../../src/log.js';
import { runReproWithEvidence } from '../../src/pipeline/run-repro.js';
import { ReproSettings } from '../../src/pipeline/settings.js';
import { startScriptedAnthropicServer, type ScriptedServer } from '../helpers/anthropic-wire-server.js';
import { FakeExecutor, type FakeRun } from '../fakes/fake-executor.js';
import { answer } from '../fakes/repro-fixtures.js';

/**
 * Issue 40, item 7: a reproduction runs the report's own framework. Two held-out Keras reports were "reproduced" by
 * PyTorch translations bound to the reporter's name (`import torch as K`) after the model was told TensorFlow is not
 * installed. The loop must reject such a script before it runs, saying to use the report's framework, and when the
 * environment lacks that framework the outcome is the environment's: no model is told to do without it.
 */
const KERAS_ISSUE = `# InvalidArgumentError in a custom loss written with the Keras backend

\`\`\`python
from keras import backend as K
import tensorflow as tf

def my_loss(y_true, y_pred):
    return -K.mean(K.log(y_pred) * y_true)

print(my_loss(tf.constant([[1]]), tf.constant([[0.5]])))
\`\`\`

\`\`\`
Traceback (most recent call last):
  File "train.py", line 7, in <module>
    print(my_loss(tf.constant([[1]]), tf.constant([[0.5]])))
  File "train.py", line 5, in my_loss
    return -K.mean(K.log(y_pred) * y_true)
tensorflow.python.framework.errors_impl.InvalidArgumentError: cannot compute Mul as input #1(zero-based) was expected to be a float tensor but is a int32 tensor [Op:Mul]
\`\`\`
`;

const REPORT_ANSWER =
  '```json\n' +
  JSON.stringify({
    coreProblem: 'a Keras custom loss multiplies a float tensor by an int32 one',
    observed: 'InvalidArgumentError: cannot compute Mul',
    expected: 'the loss is computed',
    steps: ['call the loss on int32 labels'],
    environment: { framework: 'keras', hardware: 'not stated', data: 'constants' },
  }) +
  '\n```';

/** The translated script's shape: it names the report's framework in an import and runs PyTorch under `K`. */
const TORCH_AS_K = `import tensorflow  # the reporter's framework
import torch as K  # K.log / K.mean, as in the reporter's loss


def my_loss(y_true, y_pred):
    return -K.mean(K.log(y_pred) * y_true)


print(my_loss(K.tensor([[1]]), K.tensor([[0.5]])))
`;

const KERAS_SCRIPT = `from keras import backend as K
import tensorflow as tf


def my_loss(y_true, y_pred):
    return -K.mean(K.log(y_pred) * y_true)


print(my_loss(tf.constant([[1]]), tf.constant([[0.5]])))
`;

const KERAS_CRASH = `Traceback (most recent call last):
  File "/tmp/repgen-run-x/repro.py", line 9, in <module>
    print(my_loss(tf.constant([[1]]), tf.constant([[0.5]])))
  File "/tmp/repgen-run-x/repro.py", line 6, in my_loss
    return -K.mean(K.log(y_pred) * y_true)
tensorflow.python.framework.errors_impl.InvalidArgumentError: cannot compute Mul as input #1(zero-based) was expected to be a float tensor but is a int32 tensor [Op:Mul]
`;

const SKLEARN_ISSUE = `# f1_score with average="macro" counts a label that has no predictions as 0

\`\`\`python
from sklearn.metrics import f1_score
print(f1_score([0, 1, 2], [0, 1, 1], average="macro"))
\`\`\`

\`\`\`
UndefinedMetricWarning: F-score is ill-defined and being set to 0.0 in labels with no predicted samples.
0.5555555555555555
\`\`\`
`;

/** A torch report whose code calls OpenCV (a package, not a framework) and imports pandas it never calls. */
const CV2_ISSUE = `# Normalising a cv2-resized image gives NaN in the model's output

\`\`\`python
import cv2
import numpy as np
import pandas as pd
import torch
img = cv2.resize(np.zeros((64, 64, 3), dtype=np.uint8), (32, 32))
x = torch.from_numpy(img).float() / img.std()
print(x.mean())
\`\`\`

\`\`\`
tensor(nan)
\`\`\`
`;

/** The probe's answer with these modules importable (a version) or not (null). */
function probe(modules: Record<string, string | null>): FakeRun {
  const all = { torch: '2.3.0', numpy: '1.26.4', ...modules };
  return {
    stdout: `REPGEN_PROBE ${JSON.stringify({ python: '3.11.2', executable: '/usr/bin/python3', platform: 'Linux', modules: all, cuda: false, cudaVersion: null })}\n`,
  };
}

let server: ScriptedServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function llmOver(responses: string[]): Promise<LlmClient> {
  server = await startScriptedAnthropicServer(responses);
  const llm = await createLlmClient({
    provider: 'anthropic',
    apiKey: 'sk-test',
    baseURL: server.url,
    maxRetries: 0,
    initialBackoffMs: 1,
    timeoutMs: 5_000,
  });
  if (!llm) throw new Error('expected a client');
  return llm;
}

/** Everything the model was sent, every request. */
function everythingSent(): string {
  return (server?.requests ?? []).map((r) => JSON.stringify(r.body)).join('\n');
}

describe('tier 1 runs the report own framework', () => {
  it('rejects a PyTorch translation of a Keras report before it runs (`import torch as K`), and says to use Keras', async () => {
    const llm = await llmOver([REPORT_ANSWER, answer(TORCH_AS_K), answer(KERAS_SCRIPT)]);
    const executor = new FakeExecutor((req, script) => {
      if (req.entry === 'probe.py') return probe({ tensorflow: '2.16.1', keras: '3.3.3' });
      if (script.includes('from keras import backend as K')) return { stderr: KERAS_CRASH, exitCode: 1 };
      return { stdout: 'tensor(0.3466)\n', exitCode: 0 };
    });
    const evidence = await runReproWithEvidence(
      { issue: { title: '', body: KERAS_ISSUE }, settings: ReproSettings.parse({ pylint: false, tier0: false, confirmRuns: 0 }) },
      { executor, llm, checker: createPyflakesChecker({ pylint: false }), log: silentLogger, progress: () => undefined },
    );
    const o = evidence.outcome;
    expect(o.attempts.map((a) => a.outcome)).toEqual(['irrelevant', 'reproduced']);
    expect(o.attempts[0]?.feedback).toMatch(
      /the report is about `tensorflow` \/ `keras`, and the script imports it but never calls into it/,
    );
    expect(o.attempts[0]?.feedback).toMatch(/its calls go to torch \(`K\.mean` → `torch\.mean`, `K\.log` → `torch\.log`/);
    expect(o.attempts[0]?.feedback).toMatch(/a script in another framework is not a reproduction/);
    // The translation never ran: only the probe and the Keras script did.
    expect(executor.scripts().some((s) => s.includes('import torch as K'))).toBe(false);
    expect(o.status).toBe('reproduced');
  });

  it('stops with the environment status when the environment lacks Keras and TensorFlow: no tier runs, the model is told nothing', async () => {
    const llm = await llmOver([REPORT_ANSWER, answer(TORCH_AS_K)]);
    const executor = new FakeExecutor((req) =>
      req.entry === 'probe.py' ? probe({ tensorflow: null, keras: null }) : { stdout: '', exitCode: 0 },
    );
    const evidence = await runReproWithEvidence(
      { issue: { title: '', body: KERAS_ISSUE }, settings: ReproSettings.parse({ pylint: false }) },
      { executor, llm, checker: createPyflakesChecker({ pylint: false }), log: silentLogger, progress: () => undefined },
    );
    const o = evidence.outcome;
    expect(o.status).toBe('exit_env');
    expect(o.summary).toMatch(/The environment lacks `keras`, `tensorflow`, which the report is about/);
    expect(o.summary).toMatch(/nothing is asked of the reporter/);
    expect(o.attempts).toEqual([]);
    // Only the report was restructured; no script was asked for, so nothing told the model to do without Keras.
    expect(server?.requests).toHaveLength(1);
    expect(everythingSent()).not.toMatch(/not installed/);
    expect(executor.requests.every((r) => r.entry === 'probe.py')).toBe(true);
  });

  it('a report importing sklearn.metrics with no sklearn: the outcome is the environment, the model is never told sklearn is missing', async () => {
    const llm = await llmOver([
      REPORT_ANSWER,
      answer('import numpy as np\nprint(np.mean([1.0, 0.6666, 0.0]))\n'),
      answer('import numpy as np\nprint(np.mean([1.0, 0.6666, 0.0]))\n'),
    ]);
    const executor = new FakeExecutor((req) => (req.entry === 'probe.py' ? probe({ sklearn: null }) : { stdout: '0.55\n', exitCode: 0 }));
    const evidence = await runReproWithEvidence(
      { issue: { title: '', body: SKLEARN_ISSUE }, settings: ReproSettings.parse({ pylint: false }) },
      { executor, llm, checker: createPyflakesChecker({ pylint: false }), log: silentLogger, progress: () => undefined },
    );
    expect(evidence.outcome.status).toBe('exit_env');
    expect(evidence.outcome.summary).toMatch(/lacks `sklearn`, which the report is about/);
    expect(everythingSent()).not.toMatch(/sklearn\\?` is not installed|not installed here/);
    expect(server?.requests).toHaveLength(1);
  });

  it("a package the report's code calls (cv2) that the interpreter lacks ends the run as the environment's; the model is never told", async () => {
    const llm = await llmOver([REPORT_ANSWER, answer('import torch\nprint(torch.zeros(3).mean())\n')]);
    const executor = new FakeExecutor((req) =>
      req.entry === 'probe.py' ? probe({ cv2: null, pandas: null }) : { stdout: 'tensor(0.)\n', exitCode: 0 },
    );
    const evidence = await runReproWithEvidence(
      { issue: { title: '', body: CV2_ISSUE }, settings: ReproSettings.parse({ pylint: false }) },
      { executor, llm, checker: createPyflakesChecker({ pylint: false }), log: silentLogger, progress: () => undefined },
    );
    expect(evidence.outcome.status).toBe('exit_env');
    // Only cv2: pandas is imported and never called, no part of the bug.
    expect(evidence.outcome.summary).toMatch(/The environment lacks `cv2`, which the report's code calls/);
    expect(evidence.outcome.attempts).toEqual([]);
    expect(everythingSent()).not.toMatch(/not installed here/);
    expect(executor.requests.every((r) => r.entry === 'probe.py')).toBe(true);
  });

  it('with no model either, the lacking framework is the environment: exit_env, not "no model" or needs-info', async () => {
    const executor = new FakeExecutor((req) => (req.entry === 'probe.py' ? probe({ sklearn: null }) : { stdout: '0.55\n', exitCode: 0 }));
    const evidence = await runReproWithEvidence(
      { issue: { title: '', body: SKLEARN_ISSUE }, settings: ReproSettings.parse({ pylint: false }) },
      { executor, llm: null, checker: createPyflakesChecker({ pylint: false }), log: silentLogger, progress: () => undefined },
    );
    expect(evidence.outcome.status).toBe('exit_env');
  });
});
