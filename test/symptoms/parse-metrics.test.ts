import { describe, expect, it } from 'vitest';
import { canonicalMetricName, isMetricLine, parseMetrics } from '../../src/symptoms/index.js';

describe('parseMetrics', () => {
  it.each([
    [
      'Keras progress bars (with \\r redraws, the last one counts)',
      'Epoch 1/3\n\r 1/32 [>....] - ETA: 3s - loss: 2.5\r32/32 [==============================] - 1s 10ms/step - loss: 0.6931 - accuracy: 0.5000 - val_loss: 0.6932 - val_accuracy: 0.4900\nEpoch 2/3\n32/32 [==============================] - 0s 9ms/step - loss: 0.5000 - accuracy: 0.7000 - val_loss: 0.6000 - val_accuracy: 0.6500\n',
      { loss: [0.6931, 0.5], accuracy: [0.5, 0.7], val_loss: [0.6932, 0.6], val_accuracy: [0.49, 0.65], step_time: [0.01, 0.009] },
    ],
    [
      'Keras 3 bars',
      '32/32 ━━━━━━━━━━━━━━━━━━━━ 1s 10ms/step - accuracy: 0.5123 - loss: 0.6900',
      { accuracy: [0.5123], loss: [0.69], step_time: [0.01] },
    ],
    ['Epoch 3/10 ... loss', 'Epoch 3/10 ... loss: 0.12\nEpoch 4/10 ... loss: 0.10', { loss: [0.12, 0.1] }],
    [
      'epoch: N<tab>Train Loss : x',
      'epoch: 9\tTrain Loss : 1.0986123085021973\nepoch: 10\tTrain Loss : 1.0986123085021973',
      { train_loss: [1.0986123085021973, 1.0986123085021973] },
    ],
    ['Train Loss | Train Accuracy', 'Train Loss: 1.324 | Train Accuracy: 60.200', { train_loss: [1.324], train_accuracy: [60.2] }],
    [
      'tqdm postfix',
      'Epoch 1: 100%|██████████| 10/10 [00:01<00:00,  9.50it/s, loss=0.123, acc=0.5]',
      { loss: [0.123], accuracy: [0.5], step_time: [1 / 9.5] },
    ],
    [
      'plain dicts (HF Trainer)',
      "{'loss': 0.3, 'grad_norm': 1.5, 'learning_rate': 5e-05, 'epoch': 1.0}\n{'eval_loss': 0.4, 'eval_accuracy': 0.5}",
      { loss: [0.3], grad_norm: [1.5], eval_loss: [0.4], eval_accuracy: [0.5] },
    ],
    ['fractions with a percentage', 'Train set: Loss: 0.9857, Accuracy: 0/100 (0%)', { train_loss: [0.9857], train_accuracy: [0] }],
    ['fractions without one', 'Test set: Average loss: 0.2, Accuracy: 9000/10000', { test_average_loss: [0.2], test_accuracy: [90] }],
    [
      'phase word at line start applies to the whole line',
      'train Loss: 0.6687 Acc: 2.0164\nval Loss: 0.3238 Acc: 1.8105',
      { train_loss: [0.6687], train_accuracy: [2.0164], val_loss: [0.3238], val_accuracy: [1.8105] },
    ],
    [
      'tensor values and sci notation',
      'step 1 loss: tensor(0.6931, grad_fn=<NllLossBackward0>)\nstep 2 loss = 1e-3',
      { loss: [0.6931, 0.001] },
    ],
  ])('%s', (_name, text, want) => {
    const got = Object.fromEntries(parseMetrics(text).map((s) => [s.name, s.values]));
    expect(got).toEqual(want);
  });

  it('counts NaN and Inf apart from the finite values (JSON-safe series)', () => {
    const [s] = parseMetrics('Epoch 1/3 - loss: 12.5\nEpoch 2/3 - loss: inf\nEpoch 3/3 - loss: nan');
    expect(s).toEqual({ name: 'loss', values: [12.5], nonFinite: 2 });
  });

  it('ignores non-metrics (epochs, learning rates, prose) and format strings in code', () => {
    expect(parseMetrics("epoch: 3, lr: 0.01, step: 100\nprint('loss: %.3f' % loss)\nbatch_size = 32")).toEqual([]);
  });

  it('canonical names', () => {
    expect(canonicalMetricName('Train Loss')).toBe('train_loss');
    expect(canonicalMetricName('Best val Acc')).toBe('best_val_accuracy');
    expect(canonicalMetricName('and this is what I get loss')).toBe('loss');
    expect(canonicalMetricName('validation accuracy')).toBe('val_accuracy');
    expect(canonicalMetricName('epoch')).toBeNull();
    expect(isMetricLine('val Loss: 0.1959 Acc: 1.8105')).toBe(true);
    expect(isMetricLine('Training complete in 2m 1s')).toBe(false);
  });
});
