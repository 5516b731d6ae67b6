import { describe, expect, it } from 'vitest';
import {
  findErrorLines,
  isLibraryFile,
  lastExceptionLine,
  parseExceptionLine,
  parseTracebacks,
  parseWarnings,
} from '../../src/symptoms/index.js';

describe('parseTracebacks', () => {
  it('reads frames, code, the user frame and the exception of a Python 3.11 traceback with carets', () => {
    const text = [
      'hi',
      'Traceback (most recent call last):',
      '  File "/tmp/run/main.py", line 3, in <module>',
      '    y = model(x)',
      '        ^^^^^^^^',
      '  File "/usr/lib/python3/dist-packages/torch/nn/modules/linear.py", line 114, in forward',
      '    return F.linear(input, self.weight, self.bias)',
      '           ~~~~~~~~^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~',
      'RuntimeError: mat1 and mat2 shapes cannot be multiplied (19x1 and 19x1)',
    ].join('\n');
    const [tb, ...rest] = parseTracebacks(text);
    expect(rest).toHaveLength(0);
    expect(tb?.exception).toEqual({ type: 'RuntimeError', message: 'mat1 and mat2 shapes cannot be multiplied (19x1 and 19x1)' });
    expect(tb?.frames.map((f) => [f.file, f.line, f.function])).toEqual([
      ['/tmp/run/main.py', 3, '<module>'],
      ['/usr/lib/python3/dist-packages/torch/nn/modules/linear.py', 114, 'forward'],
    ]);
    expect(tb?.frames[0]?.code).toBe('y = model(x)');
    expect(tb?.userFrame?.file).toBe('/tmp/run/main.py');
  });

  it('strips the module prefix into type and keeps the dotted name', () => {
    const text =
      'Traceback (most recent call last):\n  File "a.py", line 1, in <module>\n    f()\ntorch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB';
    const tb = parseTracebacks(text)[0];
    expect(tb?.exception.type).toBe('OutOfMemoryError');
    expect(tb?.exception.qualifiedType).toBe('torch.cuda.OutOfMemoryError');
  });

  it('keeps a multi-line message (state_dict errors) and stops at the next output line', () => {
    const text = [
      'Traceback (most recent call last):',
      '  File "train.py", line 9, in <module>',
      '    model.load_state_dict(sd)',
      'RuntimeError: Error(s) in loading state_dict for Net:',
      '\tMissing key(s) in state_dict: "fc.weight", "fc.bias".',
      '\tUnexpected key(s) in state_dict: "head.weight".',
      'done',
    ].join('\n');
    const tb = parseTracebacks(text)[0];
    expect(tb?.exception.message).toBe(
      'Error(s) in loading state_dict for Net:\n\tMissing key(s) in state_dict: "fc.weight", "fc.bias".\n\tUnexpected key(s) in state_dict: "head.weight".',
    );
  });

  it('links chained exceptions ("During handling of the above exception")', () => {
    const text = [
      'Traceback (most recent call last):',
      '  File "m.py", line 2, in <module>',
      "    d['x']",
      "KeyError: 'x'",
      '',
      'During handling of the above exception, another exception occurred:',
      '',
      'Traceback (most recent call last):',
      '  File "m.py", line 4, in <module>',
      "    raise ValueError('bad key')",
      'ValueError: bad key',
    ].join('\n');
    const tbs = parseTracebacks(text);
    expect(tbs.map((t) => t.exception.type)).toEqual(['KeyError', 'ValueError']);
    expect(tbs[1]?.chain).toEqual([{ type: 'KeyError', message: "'x'" }]);
    expect(tbs[0]?.chain).toBeUndefined();
  });

  it('does not chain two unrelated tracebacks', () => {
    const one = 'Traceback (most recent call last):\n  File "a.py", line 1, in <module>\nIndexError: list index out of range\n';
    const tbs = parseTracebacks(`${one}some output\n${one}`);
    expect(tbs).toHaveLength(2);
    expect(tbs[1]?.chain).toBeUndefined();
  });

  it('reads a traceback pasted with Windows paths, indentation and a quote marker', () => {
    const text = [
      '> Traceback (most recent call last):',
      '>   File "C:\\Users\\me\\proj\\main.py", line 17, in <module>',
      '>     output = lr(X)',
      '>   File "C:\\Python310\\lib\\site-packages\\torch\\nn\\modules\\module.py", line 1501, in _call_impl',
      '>     return forward_call(*args, **kwargs)',
      '> ValueError: optimizer got an empty parameter list',
    ].join('\n');
    const tb = parseTracebacks(text)[0];
    expect(tb?.exception.type).toBe('ValueError');
    expect(tb?.frames).toHaveLength(2);
    expect(tb?.userFrame?.file).toBe('C:\\Users\\me\\proj\\main.py');
  });

  it('reads a SyntaxError traceback (frame without a function)', () => {
    const text =
      'Traceback (most recent call last):\n  File "/tmp/x/main.py", line 3\n    def f(:\n          ^\nSyntaxError: invalid syntax';
    const tb = parseTracebacks(text)[0];
    expect(tb?.exception).toEqual({ type: 'SyntaxError', message: 'invalid syntax' });
    expect(tb?.frames[0]).toMatchObject({ file: '/tmp/x/main.py', line: 3, function: '' });
  });

  it('reads bare exceptions such as KeyboardInterrupt, and ignores a truncated traceback with no exception', () => {
    expect(
      parseTracebacks('Traceback (most recent call last):\n  File "a.py", line 1, in <module>\nKeyboardInterrupt')[0]?.exception.type,
    ).toBe('KeyboardInterrupt');
    expect(parseTracebacks('Traceback (most recent call last):\n  File "a.py", line 1, in <module>\n')).toEqual([]);
  });
});

describe('exception and error lines', () => {
  it('parseExceptionLine accepts class-like names only', () => {
    expect(parseExceptionLine('ValueError: x')).toEqual({ type: 'ValueError', message: 'x' });
    expect(parseExceptionLine('loss: 0.3')).toBeNull();
    expect(parseExceptionLine('Epoch 3/10')).toBeNull();
    expect(parseExceptionLine('Done')).toBeNull();
  });

  it('lastExceptionLine follows the benchmark judge', () => {
    expect(lastExceptionLine('a\nRuntimeError: first\nprint\ntorch.cuda.OutOfMemoryError: CUDA out of memory\nbye')).toEqual({
      type: 'OutOfMemoryError',
      message: 'CUDA out of memory',
    });
    expect(lastExceptionLine('nothing here')).toBeNull();
  });

  it('findErrorLines finds errors in prose and inline code, not bare mentions', () => {
    const md =
      "I get `ValueError: The name \"m\" is used 2 times in the model.` when I build.\nIt raises a ValueError sometimes.\n1. AttributeError: 'Net' object has no attribute 'x'";
    expect(findErrorLines(md)).toEqual([
      'ValueError: The name "m" is used 2 times in the model.',
      "AttributeError: 'Net' object has no attribute 'x'",
    ]);
  });

  it('findErrorLines keeps the backticks a pasted error message quotes names with; inline code still ends at its own', () => {
    const pasted = 'ValueError: Expected argument `num_outputs` to match the second dimension of input, but got 1 and 1';
    expect(findErrorLines(`\`\`\`\n${pasted}\n\`\`\``)).toEqual([pasted]);
    expect(findErrorLines('It fails with `KeyError: missing` and then `stops`.')).toEqual(['KeyError: missing']);
  });

  it('isLibraryFile tells library frames from user frames', () => {
    expect(isLibraryFile('/usr/lib/python3/dist-packages/torch/nn/modules/module.py')).toBe(true);
    expect(isLibraryFile('/usr/lib/python3.12/threading.py')).toBe(true);
    expect(isLibraryFile('/path/site-packages/torch\\nn\\modules\\linear.py')).toBe(true);
    expect(isLibraryFile('<frozen importlib._bootstrap>')).toBe(true);
    expect(isLibraryFile('/tmp/repgen-run-x/main.py')).toBe(false);
    expect(isLibraryFile('<string>')).toBe(false);
  });
});

describe('parseWarnings', () => {
  it('reads located and bare warnings, also behind a tqdm bar, once each', () => {
    const text = [
      '/venv/lib/site-packages/torch/nn/modules/rnn.py:71: UserWarning: dropout option adds dropout after all but last recurrent layer',
      '  warnings.warn("dropout option adds dropout after all but last "',
      '  0%|          | 0/32 [00:00<?, ?it/s]C:\\x\\main.py:27: UserWarning: Implicit dimension choice for softmax has been deprecated.',
      'FutureWarning: `foo` is deprecated',
      'FutureWarning: `foo` is deprecated',
    ].join('\n');
    expect(parseWarnings(text)).toEqual([
      'UserWarning: dropout option adds dropout after all but last recurrent layer',
      'UserWarning: Implicit dimension choice for softmax has been deprecated.',
      'FutureWarning: `foo` is deprecated',
    ]);
  });
});
