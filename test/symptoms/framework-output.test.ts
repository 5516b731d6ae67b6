import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { dropFrameworkNoise, isFrameworkNoise, unwrapFrameworkMessage } from '../../src/symptoms/framework-output.js';
import { readReport } from '../../src/symptoms/read-report.js';
import { readRun } from '../../src/symptoms/read-run.js';

const DIR = join(import.meta.dirname, '../../fixtures/outputs/frameworks');
const out = (name: string): string => readFileSync(join(DIR, `${name}.out`), 'utf8');

describe('the run reader on real TensorFlow, Keras and JAX output', () => {
  it("reads TF's Graph execution error by the original message after the op's creation trace, and its node", () => {
    const r = readRun(out('keras-label-range'), { exitCode: 1 });
    expect(r.exception?.type).toBe('InvalidArgumentError');
    expect(r.exception?.message).toContain(
      'Graph execution error:\nReceived a label value of 10 which is outside the valid range of [0, 10).',
    );
    expect(r.exception?.message).toContain('[[{{node compile_loss/sparse_categorical_crossentropy/');
    expect(r.symptoms.map((s) => s.kind)).toEqual(['value_error']);
  });

  it("reads Keras 3's wrapped layer error by its message, a shape mismatch, with no style codes", () => {
    const r = readRun(out('keras-input-shape'), { exitCode: 1 });
    expect(r.exception?.message).toBe(
      'Exception encountered when calling Sequential.call().\n' +
        "Input 0 with name 'None' of layer 'dense' is incompatible with the layer: expected axis -1 of input shape to have value 8, " +
        'but received input with shape (None, 9)',
    );
    expect(r.symptoms[0]?.kind).toBe('shape_mismatch');
  });

  it("reads Keras 2's `in user code:` wrapper by the original error at the end of its block", () => {
    const r = readRun(out('keras2-in-user-code'), { exitCode: 1 });
    expect(r.exception?.type).toBe('ValueError');
    expect(r.exception?.message).toBe(
      'Input 0 of layer "sequential" is incompatible with the layer: expected shape=(None, 286, 384, 1), found shape=(None, None, 286, 384, 1)',
    );
    expect(r.symptoms[0]?.kind).toBe('shape_mismatch');
  });

  it('a report whose trace stops inside the `in user code:` block takes the original error from its title', () => {
    const report = readReport(
      [
        '# ValueError: Input 0 of layer "sequential" is incompatible with the layer: expected shape=(None, 8), found shape=(None, None, 8)',
        '',
        '```',
        'Traceback (most recent call last):',
        '  File "main.py", line 13, in <module>',
        '    model.predict(data)',
        'ValueError: in user code:',
        '',
        '    File "/venv/lib/site-packages/keras/engine/training.py", line 2041, in predict_function  *',
        '        return step_function(self, iterator)',
        '```',
      ].join('\n'),
    );
    expect(report.expected[0]?.exception).toEqual({
      type: 'ValueError',
      message: 'Input 0 of layer "sequential" is incompatible with the layer: expected shape=(None, 8), found shape=(None, None, 8)',
    });
    // With no stated original error, the wrapper stays what the report shows.
    const cut = readReport('```\nTraceback (most recent call last):\n  File "m.py", line 1, in <module>\nValueError: in user code:\n```');
    expect(cut.expected[0]?.exception).toEqual({ type: 'ValueError', message: 'in user code:' });
  });

  it("drops TF's {{function_node}} prefix and reads a MatMul size error as a shape mismatch", () => {
    const r = readRun(out('tf-matmul'), { exitCode: 1 });
    expect(r.exception?.message).toBe('Matrix size-incompatible: In[0]: [2,3], In[1]: [4,5] [Op:MatMul] name:');
    expect(r.symptoms[0]?.kind).toBe('shape_mismatch');
  });

  it("reads JAX's tracer errors as type errors (a traced value used as a concrete one)", () => {
    for (const [name, type] of [
      ['jax-bool-tracer', 'TracerBoolConversionError'],
      ['jax-array-tracer', 'TracerArrayConversionError'],
    ] as const) {
      const r = readRun(out(name), { exitCode: 1 });
      expect(r.exception?.type).toBe(type);
      expect(r.symptoms[0]?.kind).toBe('type_error');
    }
  });

  it('reads a Keras fit log with NaN inputs as NaN values, and its accuracy series', () => {
    const r = readRun(out('keras-nan-input'), { exitCode: 0 });
    expect(r.symptoms.map((s) => s.kind)).toContain('nan_inf');
    expect(r.metrics.find((m) => m.name === 'val_accuracy')?.values).toEqual([0.6875, 0.6875, 0.6875]);
  });

  it("keeps TF's start-up noise out of the compared lines, and keeps everything else", () => {
    const text = out('tf-matmul');
    const clean = dropFrameworkNoise(text);
    expect(clean).not.toContain('oneDNN');
    expect(clean).not.toContain('cpu_feature_guard');
    expect(clean).not.toContain('absl::InitializeLog');
    expect(clean).not.toContain('To enable the following instructions');
    expect(clean).toContain('Traceback (most recent call last):');
    const shapes = readRun(text, { exitCode: 1 }).lineShapes?.join('\n') ?? '';
    expect(shapes).not.toContain('oneDNN');
    expect(shapes).toContain('Matrix size-incompatible');
  });

  it('recognises the older dated TF log prefix and leaves user lines that merely mention TF alone', () => {
    expect(
      isFrameworkNoise(
        '2023-05-02 10:11:12.345678: I tensorflow/core/platform/cpu_feature_guard.cc:182] This TensorFlow binary is optimized to use available CPU instructions',
      ),
    ).toBe(true);
    expect(isFrameworkNoise('Could not find cuda drivers on your machine, GPU will not be used.')).toBe(true);
    expect(isFrameworkNoise('tensorflow version: 2.15.0')).toBe(false);
    expect(isFrameworkNoise('loss: nan - accuracy: 0.1000')).toBe(false);
  });

  it('leaves a message that is no wrapper as it is', () => {
    expect(unwrapFrameworkMessage('shapes (2,3) and (4,5) not aligned', ['', 'Something else'])).toBe('shapes (2,3) and (4,5) not aligned');
  });
});
