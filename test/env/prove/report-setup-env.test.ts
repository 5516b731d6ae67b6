import { describe, expect, it } from 'vitest';
import { reportSetupEnv } from '../../../src/env/prove/report-setup-env.js';

describe('reportSetupEnv', () => {
  it('reads the variables a script sets before its imports (Keras 3 on the torch backend)', () => {
    const code = [
      'import os',
      'os.environ["KERAS_BACKEND"] = "torch"',
      "os.environ.setdefault('TF_USE_LEGACY_KERAS', '1')",
      'os.environ.update({"CUDA_VISIBLE_DEVICES": "", "XLA_FLAGS": "--xla_force_host_platform_device_count=2"})',
      'import keras',
    ].join('\n');
    expect(reportSetupEnv(code)).toEqual({
      KERAS_BACKEND: 'torch',
      TF_USE_LEGACY_KERAS: '1',
      CUDA_VISIBLE_DEVICES: '',
      XLA_FLAGS: '--xla_force_host_platform_device_count=2',
    });
  });

  it('reads notebook magics and shell exports; a later assignment wins, a setdefault keeps an earlier one', () => {
    const code = [
      '%env KERAS_BACKEND=jax',
      'export JAX_PLATFORMS="cpu"',
      'os.environ.setdefault("KERAS_BACKEND", "tensorflow")',
      "os.environ['JAX_PLATFORMS'] = 'cpu,tpu'",
    ].join('\n');
    expect(reportSetupEnv(code)).toEqual({ KERAS_BACKEND: 'jax', JAX_PLATFORMS: 'cpu,tpu' });
  });

  it('leaves out the loader’s and the interpreter’s own variables, and values that are not literals', () => {
    const code = [
      'os.environ["LD_PRELOAD"] = "/tmp/evil.so"',
      'os.environ["PYTHONPATH"] = "/tmp"',
      'os.environ["PATH"] = "/tmp"',
      'os.environ["HF_HOME"] = cache_dir',
      'os.environ[f"X_{i}"] = "1"',
      'os.environ["TOKENIZERS_PARALLELISM"] = "false"',
    ].join('\n');
    expect(reportSetupEnv(code)).toEqual({ TOKENIZERS_PARALLELISM: 'false' });
  });
});
