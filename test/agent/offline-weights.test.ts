import { describe, expect, it } from 'vitest';
import { randomWeights, weightsIrrelevant } from '../../src/agent/offline-weights.js';

describe('random weights where the report cannot depend on them', () => {
  it('crashes and structural checks hold with any weights', () => {
    expect(
      weightsIrrelevant([
        { kind: 'shape_mismatch', category: 'crash', evidence: 'RuntimeError: mat1 and mat2 shapes cannot be multiplied' },
      ]),
    ).toBe(true);
    expect(
      weightsIrrelevant([{ kind: 'wrong_values', category: 'silent', evidence: "the report's assertion fails: assert len(y) == 6" }]),
    ).toBe(true);
    expect(weightsIrrelevant([{ kind: 'wrong_values', category: 'silent', evidence: 'out.shape is (1, 1000), expected (1, 10)' }])).toBe(
      true,
    );
  });

  it('values, metrics and NaNs may depend on the weights: never', () => {
    expect(weightsIrrelevant([{ kind: 'wrong_values', category: 'silent', evidence: 'top-1 accuracy is 0.1%, expected 76%' }])).toBe(false);
    expect(weightsIrrelevant([{ kind: 'nan_inf', category: 'silent', evidence: 'loss: nan' }])).toBe(false);
    expect(
      weightsIrrelevant([
        { kind: 'type_error', category: 'crash', evidence: 'TypeError' },
        { kind: 'constant_predictions', category: 'silent', evidence: 'all 3' },
      ]),
    ).toBe(false);
    expect(weightsIrrelevant([])).toBe(false);
  });

  it('turns pretrained=True and torchvision weights into random weights, and says null when there are none', () => {
    expect(randomWeights("m = create_model('resnet50', pretrained=True, features_only=True)")).toBe(
      "m = create_model('resnet50', pretrained=False, features_only=True)",
    );
    expect(randomWeights('m = models.resnet18(weights=ResNet18_Weights.DEFAULT)')).toBe('m = models.resnet18(weights=None)');
    expect(randomWeights("m = models.resnet18(weights='IMAGENET1K_V1')")).toBe('m = models.resnet18(weights=None)');
    expect(randomWeights('m = models.resnet18(pretrained=False)')).toBeNull();
  });
});
