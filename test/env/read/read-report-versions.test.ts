import { describe, expect, it } from 'vitest';
import { readReportVersions } from '../../../src/env/read/read-report-versions.js';

// The forms below are the shapes the tools print (diffusers-cli env, transformers env, torch.utils.collect_env,
// Lightning's collect_env_details, pip/conda list), as seen in real issues such as huggingface/diffusers#3584,
// huggingface/diffusers#7950 and AUTOMATIC1111/stable-diffusion-webui#15875; the values are ours.
const pick = (text: string) => Object.fromEntries(readReportVersions(text).versions.map((v) => [v.name, v.version]));

describe('readReportVersions', () => {
  it('reads the diffusers issue template, cutting the CUDA local version into its own field', () => {
    const env = readReportVersions(
      [
        '### System Info',
        '',
        '- 🤗 Diffusers version: 0.35.0',
        '- Platform: Linux-6.8.0-x86_64-with-glibc2.39',
        '- Running on Google Colab?: No',
        '- Python version: 3.10.12',
        '- PyTorch version (GPU?): 2.8.0+cu129 (True)',
        '- Flax version (CPU?/GPU?/TPU?): not installed (NA)',
        '- Huggingface_hub version: 0.34.4',
        '- Transformers version: 4.56.0',
        '- Accelerate version: 1.10.1',
        '- xFormers version: not installed',
        '- Using GPU in script?: yes',
      ].join('\n'),
    );
    expect(Object.fromEntries(env.versions.map((v) => [v.name, v.version]))).toEqual({
      diffusers: '0.35.0',
      torch: '2.8.0',
      'huggingface-hub': '0.34.4',
      transformers: '4.56.0',
      accelerate: '1.10.1',
    });
    expect(env.versions.find((v) => v.name === 'torch')).toMatchObject({ local: 'cu129', form: 'stated' });
    expect(env).toMatchObject({ python: '3.10.12', cuda: '12.9', gpu: true });
  });

  it('reads `transformers env` output with back-quoted names', () => {
    const text =
      '- `transformers` version: 4.41.0\n- Python version: 3.11.9\n- PyTorch version (GPU?): 2.3.0+cpu (False)\n- Tensorflow version (GPU?): not installed (NA)';
    const env = readReportVersions(text);
    expect(pick(text)).toEqual({ transformers: '4.41.0', torch: '2.3.0' });
    expect(env).toMatchObject({ python: '3.11.9', gpu: false, cuda: null });
  });

  it('reads torch.utils.collect_env output', () => {
    const text = [
      'Collecting environment information...',
      'PyTorch version: 2.0.1+cu117',
      'Is debug build: False',
      'CUDA used to build PyTorch: 11.7',
      'OS: Ubuntu 22.04.2 LTS (x86_64)',
      'GCC version: (Ubuntu 11.3.0-1ubuntu1~22.04.1) 11.3.0',
      'Python version: 3.10.12 (main, Jun 11 2023, 05:26:28) [GCC 11.4.0] (64-bit runtime)',
      'Is CUDA available: False',
      'Nvidia driver version: 530.30.02',
      '',
      'Versions of relevant libraries:',
      '[pip3] numpy==1.24.3',
      '[pip3] torch==2.0.1',
      '[pip3] torchvision==0.15.2',
      '[conda] Could not collect',
    ].join('\n');
    const env = readReportVersions(text);
    expect(pick(text)).toEqual({ torch: '2.0.1', numpy: '1.24.3', torchvision: '0.15.2' });
    expect(env).toMatchObject({ python: '3.10.12', cuda: '11.7', gpu: false });
  });

  it('reads Lightning env details and its template', () => {
    const details =
      '* Lightning:\n\t- lightning:          2.1.0\n\t- torch:              2.1.0\n\t- torchmetrics:       1.2.0\n* Packages:\n\t- absl-py:            2.0.0';
    expect(pick(details)).toEqual({ lightning: '2.1.0', torch: '2.1.0', torchmetrics: '1.2.0', 'absl-py': '2.0.0' });
    const template =
      '#- PyTorch Lightning Version (e.g., 1.5.0): 1.9.4\n#- PyTorch Version (e.g., 2.0): 1.13.1\n#- Python version (e.g., 3.9): 3.8\n#- OS (e.g., Linux):';
    expect(pick(template)).toEqual({ 'pytorch-lightning': '1.9.4', torch: '1.13.1' });
    expect(readReportVersions(template).python).toBe('3.8');
  });

  it('reads pip freeze, pip list and conda list pastes, and no prose as a table', () => {
    expect(pick('```\nnumpy==1.26.4\ntorch==2.2.1+cpu\nsafetensors==0.4.2\n```')).toEqual({
      numpy: '1.26.4',
      torch: '2.2.1',
      safetensors: '0.4.2',
    });
    const pipList =
      'Package                Version\n---------------------- -----------\nabsl-py                0.12.0\naiohttp                3.7.4.post0\ntorch                  1.8.1';
    expect(pick(pipList)).toEqual({ 'absl-py': '0.12.0', aiohttp: '3.7.4.post0', torch: '1.8.1' });
    const conda =
      '# Name                    Version                   Build  Channel\nnumpy                     1.23.1                   pypi_0    pypi\npytorch                   1.12.1          py3.9_cuda11.3_cudnn8.3.2_0    pytorch\npandas                    1.4.3                    pypi_0    pypi';
    expect(pick(conda)).toEqual({ numpy: '1.23.1', torch: '1.12.1', pandas: '1.4.3' });
    const listed = readReportVersions(conda).versions.find((v) => v.name === 'numpy');
    expect(listed?.form).toBe('listed');
    expect(pick('I trained for 3 epochs\nwaited 2.5 hours\nthen 1.2 more')).toEqual({});
  });

  it('reads torch.__version__ printouts', () => {
    expect(pick(">>> import torch\n>>> torch.__version__\n'2.1.0+cu118'\n>>> np.__version__\n'1.26.0'")).toEqual({
      torch: '2.1.0',
      numpy: '1.26.0',
    });
    expect(pick('print(torch.__version__)  # 1.13.1')).toEqual({ torch: '1.13.1' });
    expect(pick('In [2]: tf.__version__\nOut[2]: 2.15.0')).toEqual({ tensorflow: '2.15.0' });
  });

  it('reads prose, and versions named with no package', () => {
    const env = readReportVersions('This broke with torch 2.1.0 and numpy 2.0.1. It happens since version 1.0.7 of the library.');
    expect(env.versions.map((v) => [v.name, v.version, v.form])).toEqual([
      ['torch', '2.1.0', 'prose'],
      ['numpy', '2.0.1', 'prose'],
    ]);
    expect(env.unnamed).toEqual([{ version: '1.0.7', why: expect.stringContaining('since version 1.0.7') }]);
  });

  it('prefers a stated version over a prose one, whatever the order', () => {
    const env = readReportVersions('I first saw it on torch 2.0.0.\n\n- PyTorch version (GPU?): 2.1.2+cpu (False)');
    expect(env.versions.find((v) => v.name === 'torch')).toMatchObject({ version: '2.1.2', form: 'stated', local: 'cpu' });
  });
});
