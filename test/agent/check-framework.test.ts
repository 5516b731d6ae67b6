import { describe, expect, it } from 'vitest';
import { checkFramework, lackedReportSubjects, missingSubjects, reportSubjects, screenFramework } from '../../src/agent/check-framework.js';
import { extractFacts } from '../../src/report/extract-facts.js';
import { readReport } from '../../src/symptoms/index.js';

async function report(md: string) {
  const reading = readReport(md);
  return { reading, facts: await extractFacts(md, reading) };
}

async function subjectsOf(md: string, projectPackages: string[] = []): Promise<string[]> {
  const reading = readReport(md);
  return reportSubjects(await extractFacts(md, reading), projectPackages);
}

/** The shape of the held-out Keras reports: a custom loss written with the Keras backend bound to `K`. */
const KERAS_REPORT = `# Custom loss gives nan after a few epochs

\`\`\`python
from keras import backend as K
from keras.models import Sequential
from keras.layers import Dense

def loss(y_true, y_pred):
    return -K.mean(K.log(y_pred) * y_true)

model = Sequential([Dense(1, activation="sigmoid")])
model.compile(optimizer="adam", loss=loss)
\`\`\`

The loss prints \`nan\` after epoch 3.
`;

/** The translated script RepGen once ran for it: PyTorch, bound to the reporter's name. */
const TORCH_AS_K = `import torch as K  # K.log / K.mean, as in the reporter's loss
import numpy as np

y_pred = K.sigmoid(K.randn(8, 1))
y_true = K.ones(8, 1)
loss = -K.mean(K.log(y_pred) * y_true)
print(loss.item())
`;

const JAX_REPORT = `# jnp.linalg.eigh returns unsorted eigenvalues on CPU

\`\`\`python
import jax.numpy as jnp
w, v = jnp.linalg.eigh(jnp.array([[2.0, 1.0], [1.0, 2.0]]))
print(w)
\`\`\`

Expected \`[1. 3.]\`, got \`[3. 1.]\`.
`;

const TORCH_REPORT = `# AvgPool1d ceil_mode drops the last window

\`\`\`python
import torch
pool = torch.nn.AvgPool1d(2, ceil_mode=True)
print(pool(torch.zeros(1, 1, 7)).shape)
\`\`\`
`;

describe('reportSubjects: what a report is about, by the module each import names', () => {
  it('reads `import torch as K` as torch and `from tensorflow import keras as tf` as TensorFlow Keras, never by the bound name', async () => {
    expect(await subjectsOf(KERAS_REPORT)).toEqual(['keras']);
    expect(await subjectsOf('# x\n\n```python\nimport torch as K\nprint(K.log(K.ones(1)))\n```\n')).toEqual(['torch']);
    expect(await subjectsOf('# x\n\n```python\nfrom tensorflow import keras as tf\nm = tf.Sequential()\n```\n')).toEqual([
      'tensorflow',
      'keras',
    ]);
    expect(await subjectsOf(JAX_REPORT)).toEqual(['jax']);
  });

  it('adds the project, and leaves numpy out beside another framework', async () => {
    const md = '# x\n\n```python\nimport numpy as np\nimport torch\nimport timm\nm = timm.create_model("resnet18")\n```\n';
    expect(await subjectsOf(md, ['timm'])).toEqual(['torch', 'timm']);
    expect(await subjectsOf('# x\n\n```python\nimport numpy as np\nnp.ones(3)\n```\n')).toEqual(['numpy']);
  });

  it('reads frameworks from conventional names when the code shows no import', async () => {
    expect(await subjectsOf('# x\n\n```python\nx = tf.constant([1.0])\nprint(tf.reduce_sum(x))\n```\n')).toEqual(['tensorflow']);
  });
});

describe('checkFramework: a reproduction imports and calls the report own framework or project', () => {
  it('rejects a PyTorch translation of a Keras report bound to the reporter name (`import torch as K`)', async () => {
    const v = await checkFramework(TORCH_AS_K, await subjectsOf(KERAS_REPORT));
    expect(v.ok).toBe(false);
    if (v.ok) return;
    expect(v.reason).toMatch(/the report is about `keras`, and the script never imports it \(it imports torch, numpy\)/);
    expect(v.reason).toMatch(/`K\.sigmoid` → `torch\.sigmoid`/);
    expect(v.reason).toMatch(/Write the reproduction with `keras`/);
  });

  it('accepts Keras however it is bound: `import keras as K`, `from tensorflow.keras import backend as K`, tf.keras', async () => {
    const subjects = await subjectsOf(KERAS_REPORT);
    const scripts = [
      'import keras as K\nx = K.ops.log(K.ops.ones((2,)))\nprint(x)\n',
      'from tensorflow.keras import backend as K\nprint(K.mean(K.log(K.constant([0.5]))))\n',
      'import tensorflow as tf\nm = tf.keras.Sequential([tf.keras.layers.Dense(1)])\n',
      'from keras.layers import *\nlayer = Dense(1)\n',
      'import keras\nclass Net(keras.Model):\n    pass\nnet = Net()\nnet.fit()\n',
    ];
    for (const s of scripts) expect(await checkFramework(s, subjects), s).toEqual({ ok: true });
  });

  it('accepts Keras for a TensorFlow report that builds a Keras model (`tf.nn.relu` activations, a replayed Stack Overflow case)', async () => {
    const md =
      '# InvalidArgumentError\n\n```python\nmodel = Sequential([Dense(10, activation=tf.nn.softmax)])\nmodel.fit(x, y, epochs=5)\n```\n';
    const script =
      'import tensorflow as tf\nfrom keras.models import Sequential\nfrom keras.layers import Dense\nmodel = Sequential([Dense(10, activation=tf.nn.softmax)])\n';
    expect(await checkFramework(script, await subjectsOf(md))).toEqual({ ok: true });
  });

  it('rejects a script that imports the framework but never calls into it', async () => {
    const s = 'import keras  # as the report\nimport torch as K\nprint(K.mean(K.ones(2)))\n';
    const v = await checkFramework(s, await subjectsOf(KERAS_REPORT));
    expect(v).toMatchObject({ ok: false });
    expect(v.ok ? '' : v.reason).toMatch(/imports it but never calls into it; its calls go to torch/);
  });

  it('holds for other frameworks: a JAX report with a numpy-only script, a PyTorch report with a TensorFlow one', async () => {
    const numpyOnly = 'import numpy as jnp\nw, v = jnp.linalg.eigh(jnp.array([[2.0, 1.0], [1.0, 2.0]]))\nprint(w)\n';
    expect((await checkFramework(numpyOnly, await subjectsOf(JAX_REPORT))).ok).toBe(false);
    const jax = 'import jax.numpy as np\nw, v = np.linalg.eigh(np.eye(2))\nprint(w)\n';
    expect(await checkFramework(jax, await subjectsOf(JAX_REPORT))).toEqual({ ok: true });
    const tf = 'import tensorflow as torch\nx = torch.nn.avg_pool1d(torch.zeros((1, 7, 1)), 2, 2, "SAME")\nprint(x.shape)\n';
    expect((await checkFramework(tf, await subjectsOf(TORCH_REPORT))).ok).toBe(false);
    const aliased =
      'import torch.nn as nn\nimport torch as T\npool = nn.AvgPool1d(2, ceil_mode=True)\nprint(pool(T.zeros(1, 1, 7)).shape)\n';
    expect(await checkFramework(aliased, await subjectsOf(TORCH_REPORT))).toEqual({ ok: true });
  });

  it("requires the project's own package when the report names no framework", async () => {
    const subjects = await subjectsOf('# rearrange fails on an empty axis\n\nThe pattern `b c -> c b` raises.\n', ['einops']);
    expect(subjects).toEqual(['einops']);
    expect((await checkFramework('import numpy as np\nprint(np.ones((2, 3)).T)\n', subjects)).ok).toBe(false);
    expect(
      await checkFramework('import numpy as np\nfrom einops import rearrange\nrearrange(np.ones((2, 3)), "b c -> c b")\n', subjects),
    ).toEqual({ ok: true });
  });

  it('asks nothing of a report with no framework and no project', async () => {
    expect(await checkFramework('print(1)\n', [])).toEqual({ ok: true });
  });
});

describe('missingSubjects', () => {
  it('names the missing modules the report is about, and only those', () => {
    expect(missingSubjects(['tensorflow', 'seaborn'], ['tensorflow', 'keras'])).toEqual(['tensorflow']);
    expect(missingSubjects(['sklearn'], ['sklearn'])).toEqual(['sklearn']);
    expect(missingSubjects(['seaborn'], ['torch'])).toEqual([]);
  });
});

describe('screenFramework: the tier-1 stage before a script runs', () => {
  it('ends tier 1 as the environment when a relevant script imports a framework of the report that is missing, without steering the model away', async () => {
    const s = await screenFramework(
      'from keras import backend as K\nprint(K.mean(K.log(K.constant([0.5]))))\n',
      await report(KERAS_REPORT),
      [],
      ['keras'],
    );
    expect(s).toMatchObject({ outcome: 'unavailable_here', envLacks: ['keras'] });
    expect(s?.feedback).toMatch(/The environment lacks `keras`, which the report is about/);
    expect(s?.feedback).not.toMatch(/not installed|installed packages only|[Uu]se synthetic/);
  });

  it('leaves a missing module the report is not about to the availability stage, and rejects a translation first', async () => {
    const keras = await report(KERAS_REPORT);
    expect(await screenFramework('import keras\nimport seaborn\nkeras.ops.ones((2,))\n', keras, [], ['seaborn'])).toBeNull();
    expect(await screenFramework(TORCH_AS_K, keras, [], ['tensorflow'])).toMatchObject({ outcome: 'irrelevant' });
  });
});

describe("the report's other packages (reportPackages)", () => {
  const md =
    '# x\n\n```python\nimport cv2\nimport pandas as pd\nfrom model import Net\nimport torch\n' +
    'img = cv2.imread("a.png")\nnet = Net()\nprint(net(torch.from_numpy(img)))\n```\n';

  it('names one the code calls into and lacks, and never one it only imports nor a module not given as a package', async () => {
    const r = await report(md);
    expect(await lackedReportSubjects(r, async (mods) => mods.filter((m) => m !== 'torch'), [], ['cv2', 'pandas'])).toEqual(['cv2']);
    // Without the list (no env reading of the imports), only the frameworks count, as before.
    expect(await lackedReportSubjects(r, async (mods) => mods.filter((m) => m !== 'torch'))).toEqual([]);
  });

  it('ends tier 1 as the environment for a script importing it, in words that say the report calls it', async () => {
    const s = await screenFramework(
      'import cv2, torch\nprint(torch.tensor(cv2.imread("a.png")))\n',
      await report(md),
      [],
      ['cv2'],
      ['cv2'],
    );
    expect(s).toMatchObject({ outcome: 'unavailable_here', envLacks: ['cv2'] });
    expect(s?.feedback).toMatch(/The environment lacks `cv2`, which the report's code calls/);
  });
});

describe('lackedReportSubjects', () => {
  it('names what the report imports and the plan found missing, unless the report shows an import failure (the bug may be that)', async () => {
    const md = '# x\n\n```python\nfrom sklearn.metrics import f1_score\nprint(f1_score([0, 1], [0, 0]))\n```\n';
    const sk = await report(md);
    expect(await lackedReportSubjects(sk, async () => ['sklearn'])).toEqual(['sklearn']);
    expect(await lackedReportSubjects(sk, async () => ['seaborn'])).toEqual([]);
    const broken = `${md}\n\n\`\`\`\nTraceback (most recent call last):\n  File "a.py", line 1, in <module>\n    from sklearn.metrics import f1_score\nModuleNotFoundError: No module named 'sklearn'\n\`\`\`\n`;
    const r2 = readReport(broken);
    expect(await lackedReportSubjects({ reading: r2, facts: await extractFacts(broken, r2) }, async () => ['sklearn'])).toEqual([]);
  });

  it('leaves out a framework the report imports and never calls: it is no part of the bug', async () => {
    const md = '# x\n\n```python\nimport torch\nimport transformers\nx = torch.zeros(100).view(-1, 784)\n```\n';
    expect(await lackedReportSubjects(await report(md), async () => ['transformers'])).toEqual([]);
    const tf = '# x\n\n```python\nx = tf.constant([1.0])\nprint(tf.reduce_sum(x))\n```\n';
    expect(await lackedReportSubjects(await report(tf), async () => ['tensorflow'])).toEqual(['tensorflow']);
    // TensorFlow's Keras needs TensorFlow: the standalone `keras` package missing beside it lacks nothing.
    const tfKeras = '# x\n\n```python\nfrom tensorflow import keras\nm = keras.Sequential()\n```\n';
    expect(await lackedReportSubjects(await report(tfKeras), async (mods) => mods.filter((m) => m === 'keras'))).toEqual([]);
    expect(await lackedReportSubjects(await report(tfKeras), async () => ['tensorflow'])).toEqual(['tensorflow']);
  });
});
