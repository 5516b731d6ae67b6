import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { chunkRepo } from '../../src/context/index/build-index.js';
import { findTrainingLoops } from '../../src/context/training-loops.js';
import { walkRepo } from '../../src/context/walk-repo.js';

const REPO = fileURLToPath(new URL('../../fixtures/repos/training-loops', import.meta.url));

async function loops() {
  const { files } = await walkRepo(REPO, { maxFileBytes: 1_000_000 });
  const { chunks, infos } = await chunkRepo(files);
  return findTrainingLoops(chunks, infos).map((l) => `${l.path}::${l.symbol}::${l.framework}::${l.phase}`);
}

describe('training-loop extraction', () => {
  it('finds each framework style and nothing else', async () => {
    expect((await loops()).sort()).toEqual(
      [
        'hf_trainer.py::finetune::huggingface::train',
        'keras_fit.py::train::keras::train',
        'lightning_module.py::LitRegressor.training_step::lightning::train',
        'lightning_module.py::LitRegressor.validation_step::lightning::eval',
        'tf_tape.py::train_step::tensorflow::train',
        'torch_custom_names.py::Runner.run_epoch::pytorch::train',
        'torch_loop.py::evaluate::pytorch::eval',
        'torch_loop.py::fit::pytorch::train',
      ].sort(),
    );
  });

  it('does not take a loop over .step() of an environment, scheduler or progress bar for training', async () => {
    const found = await loops();
    expect(found.filter((l) => l.startsWith('not_training.py'))).toEqual([]);
  });
});
