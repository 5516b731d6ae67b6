import { describe, expect, it } from 'vitest';
import { conventionalImport } from '../../src/context/conventions.js';
import { referencedModules } from '../../src/plan/index.js';

describe("Keras's public API as conventional imports", () => {
  it('imports a Keras layer, model or optimizer a snippet uses without importing it', () => {
    expect(conventionalImport('Sequential', 'model = Sequential()')).toBe('from keras.models import Sequential');
    expect(conventionalImport('Conv2D', 'x = Conv2D(32, 3)')).toBe('from keras.layers import Conv2D');
    expect(conventionalImport('Adam', 'opt = Adam(1e-3)')).toBe('from keras.optimizers import Adam');
    expect(conventionalImport('to_categorical', 'y = to_categorical(y)')).toBe('from keras.utils import to_categorical');
  });

  it("gives a name both worlds use to the one the code is written in (torchvision's `models` in torch code)", () => {
    expect(conventionalImport('models', 'import torch\nm = models.resnet18()')).toBe('from torchvision import models');
    expect(conventionalImport('models', 'import tensorflow as tf\nm = models.Sequential()')).toBe('from keras import models');
    expect(conventionalImport('nn', 'import tensorflow as tf')).toBe('import torch.nn as nn');
    expect(conventionalImport('not_a_convention', 'x')).toBeUndefined();
  });

  it("counts Keras as a module the code needs, but not for a torch snippet's own class named like a Keras one", () => {
    expect(referencedModules('model = Sequential()\nmodel.add(Dense(3))\n')).toEqual(['keras']);
    expect(referencedModules('class Model(nn.Module):\n    pass\nm = Model()\n')).toEqual(['torch']);
    expect(referencedModules('y = add(1, 2)\n')).toEqual([]);
    expect(referencedModules('import tensorflow as tf\nl = layers.Dense(3)\n')).toEqual(['keras']);
  });

  it("never reads a name the code binds itself as a convention's module (Keras code's own `models` needs no torchvision)", () => {
    const keras = 'from keras import layers\nfrom keras import models\nmodel = models.Sequential()\nmodel.add(layers.Dense(1))\n';
    expect(referencedModules(keras)).toEqual([]);
    // Unbound, a name both worlds use is the one of the code's own framework.
    expect(referencedModules('import tensorflow as tf\nm = models.Sequential()\n')).toEqual(['keras']);
    expect(referencedModules('import torch\nm = models.resnet18()\n')).toEqual(['torchvision']);
    expect(referencedModules('models = load_all()\nm = models.resnet18()\n')).toEqual([]);
  });
});
