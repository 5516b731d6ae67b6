import { describe, expect, it } from 'vitest';
import { completeCode } from '../../src/complete/index.js';
import { kerasInputShape } from '../../src/complete/keras-data.js';

// Made-up Keras snippets of the kinds Stack Overflow reports paste: a model built and compiled, trained on data the
// report never shows.
const SEQUENTIAL = [
  'from tensorflow.keras.models import Sequential',
  'from tensorflow.keras.layers import Dense, Flatten',
  'model = Sequential()',
  'model.add(Flatten(input_shape=(12, 7)))',
  'model.add(Dense(16, activation="relu"))',
  'model.add(Dense(5, activation="softmax"))',
  'model.compile(optimizer="adam", loss="categorical_crossentropy")',
  'model.fit(train_x, train_y, epochs=2, validation_data=(val_x, val_y))',
].join('\n');

describe('Keras data completion (x and y from the model the code builds)', () => {
  it('shapes x by the input shape and y by the loss and the last Dense layer, validation data included', async () => {
    const c = await completeCode({ blocks: [SEQUENTIAL] });
    const script = c.candidates[0]?.script ?? '';
    expect(c.missing).toEqual([]);
    expect(script).toMatch(/^import numpy as np {2}# added by RepGen$/m);
    for (const x of ['train_x', 'val_x']) expect(script).toContain(`${x} = np.random.rand(32, 12, 7).astype('float32')  # added by RepGen`);
    for (const y of ['train_y', 'val_y'])
      expect(script).toContain(`${y} = np.eye(5, dtype='float32')[np.random.randint(0, 5, size=32)]  # added by RepGen`);
  });

  it('gives class ids for a sparse loss written as a class, and reads Input(shape=…) of a functional model', async () => {
    const code = [
      'import keras',
      'inp = keras.Input(shape=(6,))',
      'out = keras.layers.Dense(3)(inp)',
      'm = keras.Model(inp, out)',
      'm.compile(loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True), optimizer="sgd")',
      'm.fit(feats, labels, batch_size=8)',
    ].join('\n');
    const script = (await completeCode({ blocks: [code] })).candidates[0]?.script ?? '';
    expect(script).toContain("feats = np.random.rand(32, 6).astype('float32')");
    expect(script).toContain('labels = np.random.randint(0, 3, size=(32,))');
  });

  it('takes the shape a reshape of x gives it, and leaves x missing when the input shape is a name the code never sets', async () => {
    expect(kerasInputShape('x = x.reshape(-1, 28, 28, 1)\nmodel.fit(x, y)', 'x')).toEqual([28, 28, 1]);
    const unknown =
      'import keras\nm = keras.Sequential([keras.layers.Dense(2, input_shape=in_shape)])\nm.compile(loss="mse")\nm.fit(a, b)\n';
    const c = await completeCode({ blocks: [unknown] });
    expect(c.missing.map((m) => m.name)).toContain('a');
  });

  it('touches no torch code: a PyTorch loop with the same names is left to the PyTorch rules', async () => {
    const torch =
      'import torch\nmodel = torch.nn.Linear(4, 2)\nout = model(train_x)\nloss = torch.nn.functional.cross_entropy(out, train_y)\n';
    const script = (await completeCode({ blocks: [torch] })).candidates[0]?.script ?? '';
    expect(script).not.toContain('np.random.rand(32');
  });
});
