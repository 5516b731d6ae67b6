import { describe, expect, it } from 'vitest';
import { reportKerasBackend, withKerasBackend } from '../../../src/env/read/keras-backend.js';

describe('reportKerasBackend', () => {
  it('reads the backend a report names in words when its code sets none (real Keras 3 reports)', () => {
    expect(reportKerasBackend('averagePooling2D calculates wrongly with torch backend', 'AveragePooling2D generate an output…')).toBe(
      'torch',
    );
    expect(
      reportKerasBackend(
        'Predict fails on a model containing the Attention layer.',
        '- Keras 3.6.0\n- Backend is Torch with GPU support (2.5.1+cu124)\n',
      ),
    ).toBe('torch');
    expect(reportKerasBackend('Bug', 'backend: jax\n')).toBe('jax');
    expect(reportKerasBackend('Bug', 'Running on the TensorFlow backend')).toBe('tensorflow');
  });

  it("the title's backend wins over the body's comparisons, and the code's setting over any words", () => {
    const title = 'Inplace modification error when training a stateful LSTM using PyTorch as backend';
    const body = 'When the same test code is run with both JAX or TensorFlow as backend the task runs without any errors.';
    expect(reportKerasBackend(title, body)).toBe('torch');
    expect(reportKerasBackend('Bug', 'It fails on the JAX backend; with TensorFlow as backend it runs.')).toBe('jax');
    expect(reportKerasBackend(title, `${body}\n\`\`\`\nos.environ["KERAS_BACKEND"] = "jax"\n\`\`\``)).toBe('jax');
    expect(reportKerasBackend('Bug', '%env KERAS_BACKEND jax')).toBe('jax');
  });

  it('names none where the words are not about a backend', () => {
    expect(reportKerasBackend('torch.compile fails', 'The backend compiler crashed; KERAS_BACKEND is not set')).toBeNull();
    expect(reportKerasBackend('Bug', 'my backend service uses torch')).toBeNull();
  });
});

describe('withKerasBackend', () => {
  const report = { title: 'AveragePooling2D is wrong with torch backend', body: 'no code' };

  it('sets KERAS_BACKEND for the proof where Keras is imported and the code sets none', () => {
    expect(withKerasBackend({ TF_CPP_MIN_LOG_LEVEL: '2' }, report, true)).toEqual({ TF_CPP_MIN_LOG_LEVEL: '2', KERAS_BACKEND: 'torch' });
  });

  it("keeps the code's own setting, and adds nothing where Keras is not imported or no backend is named", () => {
    expect(withKerasBackend({ KERAS_BACKEND: 'jax' }, report, true)).toEqual({ KERAS_BACKEND: 'jax' });
    expect(withKerasBackend({}, report, false)).toEqual({});
    expect(withKerasBackend({}, { title: 'Dense is slow', body: '' }, true)).toEqual({});
  });
});
