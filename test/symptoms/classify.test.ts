import { describe, expect, it } from 'vitest';
import { classifyException, classifyPrintedValues, classifySeries, parseMetricPoints, readRun } from '../../src/symptoms/index.js';

describe('classifyException', () => {
  it.each([
    ['RuntimeError', 'mat1 and mat2 shapes cannot be multiplied (64x3136 and 512x10)', 'shape_mismatch'],
    ['RuntimeError', 'Error(s) in loading state_dict for Net:\n\tsize mismatch for fc.weight', 'shape_mismatch'],
    ['RuntimeError', 'Sizes of tensors must match except in dimension 1. Expected size 5 but got size 4', 'shape_mismatch'],
    ['RuntimeError', 'The size of tensor a (3) must match the size of tensor b (4) at non-singleton dimension 1', 'shape_mismatch'],
    ['ValueError', 'Expected input batch_size (64) to match target batch_size (32).', 'shape_mismatch'],
    ['RuntimeError', "shape '[-1, 400]' is invalid for input of size 3200", 'shape_mismatch'],
    ['RuntimeError', 'expected scalar type Float but found Double', 'dtype_mismatch'],
    ['RuntimeError', 'mat1 and mat2 must have the same dtype', 'dtype_mismatch'],
    [
      'RuntimeError',
      'mean(): could not infer output dtype. Input dtype must be either a floating point or complex dtype. Got: Long',
      'dtype_mismatch',
    ],
    ['RuntimeError', '"addmm_impl_cpu_" not implemented for \'Half\'', 'dtype_mismatch'],
    ['RuntimeError', 'Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!', 'device_mismatch'],
    ['RuntimeError', 'Input type (torch.cuda.FloatTensor) and weight type (torch.FloatTensor) should be the same', 'device_mismatch'],
    ['RuntimeError', 'Input type (double) and bias type (float) should be the same', 'dtype_mismatch'],
    ['AssertionError', 'Torch not compiled with CUDA enabled', 'cuda_unavailable'],
    ['RuntimeError', 'Found no NVIDIA driver on your system.', 'cuda_unavailable'],
    ['OutOfMemoryError', 'CUDA out of memory. Tried to allocate 2.00 GiB', 'out_of_memory'],
    [
      'RuntimeError',
      "[enforce fail at alloc_cpu.cpp:75] DefaultCPUAllocator: can't allocate memory: you tried to allocate 1000000 bytes",
      'out_of_memory',
    ],
    ['RuntimeError', 'CUDA error: device-side assert triggered', 'cuda_device_assert'],
    ['ModuleNotFoundError', "No module named 'torchtext'", 'import_error'],
    ['ImportError', "cannot import name 'x' from 'torch' (shape mismatch)", 'import_error'],
    ['AttributeError', "module 'torch' has no attribute 'concat_all'", 'api_error'],
    ['TypeError', "__init__() got an unexpected keyword argument 'size_average'", 'api_error'],
    ['TypeError', 'DenseBlock.forward() takes 2 positional arguments but 4 were given', 'type_error'],
    ['ValueError', 'optimizer got an empty parameter list', 'value_error'],
    ['IndexError', 'list index out of range', 'index_error'],
    ['IndexError', 'Dimension out of range (expected to be in range of [-1, 0], but got 1)', 'shape_mismatch'],
    ['KeyError', "'label'", 'key_error'],
    ['RuntimeError', "Function 'LogBackward0' returned nan values in its 0th output.", 'nan_inf'],
    ['RuntimeError', 'element 0 of tensors does not require grad and does not have a grad_fn', 'other_crash'],
  ])('%s: %s → %s', (type, message, kind) => {
    expect(classifyException({ type, message })).toBe(kind);
  });
});

describe('classifySeries', () => {
  const kinds = (text: string) => classifySeries(parseMetricPoints(text)).map((s) => `${s.kind}:${s.metric}`);

  it('NaN/Inf, with the line that shows it as evidence', () => {
    const s = classifySeries(parseMetricPoints('Epoch 1/3 - loss: 3.2\nEpoch 2/3 - loss: nan\nEpoch 3/3 - loss: nan'));
    expect(s).toEqual([{ kind: 'nan_inf', category: 'silent', metric: 'loss', evidence: 'Epoch 2/3 - loss: nan' }]);
  });
  it('a constant loss does not decrease; a slowly falling one (0.3 %) neither', () => {
    expect(kinds('loss: 1.0986\nloss: 1.0986\nloss: 1.0986')).toEqual(['loss_not_decreasing:loss']);
    expect(kinds('loss: 0.9890\nloss: 0.9885\nloss: 0.9870\nloss: 0.9857')).toEqual(['loss_not_decreasing:loss']);
  });
  it('a loss that goes down is healthy', () => {
    expect(kinds('loss: 2.3\nloss: 1.2\nloss: 0.7\nloss: 0.4')).toEqual([]);
  });
  it('a loss that keeps growing diverges', () => {
    expect(kinds('Train Loss: 1.324\nTrain Loss: 2.744\nTrain Loss: 4.028\nTrain Loss: 10.627')).toEqual(['loss_diverging:train_loss']);
  });
  it('accuracy stuck, at chance (binary and ten-class), or improving', () => {
    expect(kinds('acc: 2.0164\nacc: 2.0164\nacc: 2.0164')).toEqual(['accuracy_stuck:accuracy']);
    expect(kinds('val_accuracy: 0.5\nval_accuracy: 0.5\nval_accuracy: 0.5')).toEqual(['accuracy_at_chance:val_accuracy']);
    expect(kinds('accuracy: 10.2\naccuracy: 9.8\naccuracy: 10.1\naccuracy: 9.95')).toEqual(['accuracy_at_chance:accuracy']);
    expect(kinds('accuracy: 0.5\naccuracy: 0.7\naccuracy: 0.9')).toEqual([]);
  });
  it('exploding and vanishing gradient norms', () => {
    expect(kinds("{'grad_norm': 1.2}\n{'grad_norm': 40.0}\n{'grad_norm': 5000.0}")).toEqual(['exploding_gradients:grad_norm']);
    expect(kinds('grad norm: 0.5\ngrad norm: 1e-4\ngrad norm: 1e-8')).toEqual(['vanishing_gradients:grad_norm']);
  });
  it('memory that keeps growing, and steps that get slower (performance)', () => {
    expect(kinds('step 1 gpu memory: 1000 MB\nstep 2 gpu memory: 1400 MB\nstep 3 gpu memory: 1900 MB\nstep 4 gpu memory: 2600 MB')).toEqual(
      ['memory_growth:gpu_memory'],
    );
    expect(kinds('mem: 900\nmem: 1400\nmem: 950\nmem: 1000')).toEqual([]);
    const keras = [5, 1, 1, 1, 2, 4, 8]
      .map((ms, i) => `${i + 1}/7 [==] - 0s ${ms * 10}ms/step - loss: ${(1 / (i + 1)).toFixed(3)}`)
      .join('\n');
    expect(kinds(keras)).toEqual(['slow_step:step_time']);
    expect(
      kinds(
        ' 10%| | 1/10 [00:01<00:09, 9.50it/s]\n 20%| | 2/10 [00:01<00:09, 9.40it/s]\n 30%| | 3/10\t9.60it/s\n 40%| | 4/10 [9.45it/s]\n 50%| | 5/10 [9.5it/s]',
      ),
    ).toEqual([]);
  });

  it('needs three points for a trend', () => {
    expect(kinds('loss: 1.0\nloss: 1.0')).toEqual([]);
  });
});

describe('printed values and run flags', () => {
  it('finds NaN tensors and constant predictions', () => {
    const got = classifyPrintedValues('tensor(nan, grad_fn=<MseLossBackward0>)\npredictions: [3, 3, 3, 3, 3, 3]', []);
    expect(got.map((s) => s.kind)).toEqual(['nan_inf', 'constant_predictions']);
    expect(classifyPrintedValues('predictions: [3, 1, 3, 0]', [])).toEqual([]);
  });
  it('readRun turns timeout and OOM-kill flags into symptoms with the last output as evidence', () => {
    const r = readRun('step 1\nstep 2\n', { exitCode: null, timedOut: true, oomKilled: false });
    expect(r.symptoms).toEqual([
      { kind: 'timeout', category: 'hang', evidence: 'no exit before the time limit; last output:\nstep 1\nstep 2' },
    ]);
    const o = readRun('allocating\n', { exitCode: null, oomKilled: true });
    expect(o.symptoms.map((s) => s.kind)).toEqual(['out_of_memory']);
  });
  it('readRun reads a native crash (killed by a signal, no traceback) as a crash', () => {
    const r = readRun('loading\nSegmentation fault (core dumped)\n', { exitCode: null, signal: 'SIGSEGV' });
    expect(r.symptoms).toEqual([
      { kind: 'other_crash', category: 'crash', evidence: 'killed by SIGSEGV; last output:\nloading\nSegmentation fault (core dumped)' },
    ]);
    expect(readRun('', { exitCode: null, signal: 'SIGKILL', timedOut: true }).symptoms.map((s) => s.kind)).toEqual(['timeout']);
  });

  it('readRun names the error of a failed run without a traceback, but not of a clean one', () => {
    expect(readRun('ERROR:root:boom\nValueError: bad config', { exitCode: 1 }).exception).toEqual({
      type: 'ValueError',
      message: 'bad config',
    });
    expect(readRun('ValueError: bad config', { exitCode: 0 }).exception).toBeNull();
  });
});
