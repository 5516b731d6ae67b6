import { describe, expect, it } from 'vitest';
import { keras1To2 } from '../../src/complete/keras-renames.js';

describe('keras1To2 (Keras 1 argument names in old reports)', () => {
  it('renames Keras 1 keywords of layers and fit, and the three-number Convolution2D, saying which', () => {
    const code = [
      'from keras.models import Sequential',
      'from keras.layers import Convolution2D, Dense',
      'model = Sequential()',
      "model.add(Convolution2D(32, 3, 3, border_mode='same', input_shape=(28, 28, 1)))",
      "model.add(Dense(output_dim=10, init='uniform'))",
      'model.fit(x, y, nb_epoch=5, batch_size=8)',
    ].join('\n');
    const r = keras1To2(code);
    expect(r.code.split('\n').slice(1)).toEqual([
      'from keras.layers import Convolution2D, Conv2D, Dense',
      'model = Sequential()',
      "model.add(Conv2D(32, (3, 3), padding='same', input_shape=(28, 28, 1)))",
      "model.add(Dense(units=10, kernel_initializer='uniform'))",
      'model.fit(x, y, epochs=5, batch_size=8)',
    ]);
    expect(r.edits[0]).toMatch(/^renamed Keras 1 arguments for Keras 2 \(.*`border_mode=` → `padding=`/);
  });

  it('knows Keras code that pastes no import by its Sequential model', () => {
    const r = keras1To2("model = Sequential()\nmodel.add(Conv2D(8, (3, 3), border_mode='valid', input_shape=(1, 20, 56)))\n");
    expect(r.code).toContain("Conv2D(8, (3, 3), padding='valid'");
  });

  it('leaves code that is not Keras alone, and an init= that is not a layer’s, and comparisons', () => {
    const torch = 'import torch\nopt = make(nb_epoch=3)\n';
    expect(keras1To2(torch)).toEqual({ code: torch, edits: [] });
    const mine = 'import keras\nnet = MyNet(init=0.1)\nok = (border_mode == 1)\n';
    expect(keras1To2(mine)).toEqual({ code: mine, edits: [] });
  });
});
