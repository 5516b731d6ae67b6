import { describe, expect, it } from 'vitest';
import { EXAMPLE_INPUT_HELPER, exampleInputHelper } from '../../src/complete/python-helpers.js';

describe('the example-input helper', () => {
  it('is the plain one for code that names no attention or EmbeddingBag layer', () => {
    expect(exampleInputHelper('model = nn.Linear(3, 1)')).toBe(EXAMPLE_INPUT_HELPER);
  });

  it('checks the layers the code names first: attention before its Linear layers, EmbeddingBag', () => {
    const h = exampleInputHelper('enc = nn.TransformerEncoderLayer(32, 4)\nbag = nn.EmbeddingBag(100, 8)');
    const loop = h.indexOf('for m in model.modules():');
    expect(h.indexOf('isinstance(m, nn.MultiheadAttention)')).toBeGreaterThan(loop);
    expect(h.indexOf('isinstance(m, nn.MultiheadAttention)')).toBeLessThan(h.indexOf('isinstance(m, nn.Linear)'));
    expect(h).toContain('if isinstance(m, nn.EmbeddingBag):\n            return torch.randint(0, m.num_embeddings, (batch, length))');
  });
});
