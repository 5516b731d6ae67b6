import { describe, expect, it } from 'vitest';
import { downsamplings, forwardInputs, linearFitSize } from '../../src/complete/model-shape.js';
import { analyzePython } from '../../src/complete/scope.js';

describe("the model's own sizes", () => {
  it('counts a self.pool layer once per call, inline and functional poolings once each', () => {
    const net =
      'self.pool = nn.MaxPool2d(2)\nself.c = nn.Conv2d(3, 8, 3, stride=2)\nx = self.pool(x)\nx = self.pool(self.c(x))\nx = F.max_pool2d(x, 2)';
    expect(downsamplings(net)).toBe(4);
  });

  it('derives the input size the first Linear after the convolutions was built for', () => {
    const net =
      'self.conv1 = nn.Conv2d(3, 16, 3, padding=1)\nself.conv2 = nn.Conv2d(16, 32, 3, padding=1)\nself.pool = nn.MaxPool2d(2)\nself.fc = nn.Linear(32 * 7 * 7, 10)\nx = self.pool(self.conv1(x))\nx = self.pool(self.conv2(x))';
    expect(linearFitSize(net)).toBe(28);
  });

  it('derives none when the features are not channels times a square, or are not literal', () => {
    expect(linearFitSize('nn.Conv2d(3, 10, 3)\nnn.Linear(30, 2)')).toBeNull();
    expect(linearFitSize('nn.Conv2d(3, 10, 3)\nnn.Linear(n_feat, 2)')).toBeNull();
    expect(linearFitSize('nn.Linear(40, 2)')).toBeNull();
  });
});

describe('the inputs of a multi-input forward', () => {
  it('maps each input to the sub-layer forward first calls it with, in parameter order', async () => {
    const a = await analyzePython(
      'class M(nn.Module):\n    def forward(self, image, extra, scale=1.0):\n        b = self.tab(extra)\n        a = self.cnn(image.float())\n        return a + b\n',
    );
    const m = a.classes[0];
    expect(m && forwardInputs(m)).toEqual([
      { param: 'image', layer: 'cnn' },
      { param: 'extra', layer: 'tab' },
    ]);
    a.tree.delete();
  });

  it('is null when an input goes into no sub-layer first', async () => {
    const a = await analyzePython('class M(nn.Module):\n    def forward(self, x, y):\n        return self.fc(x) + y\n');
    const m = a.classes[0];
    expect(m && forwardInputs(m)).toBeNull();
    a.tree.delete();
  });
});
