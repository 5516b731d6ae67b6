import { describe, expect, it } from 'vitest';
import {
  DL_BUGS_KERAS_CASSETTES,
  dlBugsCassetteFiles,
  expectReplayAsRecorded,
  readDlBugsCassette,
} from '../helpers/replay-dl-bugs-cassette.js';

/**
 * The real-model sessions of the Keras/TensorFlow cases (fixtures/bench/dl-bugs-keras), a strong model answering
 * through the relay (docs/cassettes.md), replayed through the real pipeline with their recorded runs. Four of them
 * (so-019, so-064, so-068, so-094) end inside Keras 2's `in user code:` block: a reader that compares the wrapper
 * line again instead of the error it wraps fails here.
 */
const files = dlBugsCassetteFiles(DL_BUGS_KERAS_CASSETTES);

describe('cassettes: real-model sessions on the dl-bugs-keras cases', () => {
  it('has one session per case, each with model calls', () => {
    expect(files).toHaveLength(12);
    for (const f of files) expect(readDlBugsCassette(f, DL_BUGS_KERAS_CASSETTES).calls.length, f).toBeGreaterThan(0);
  });

  it.each(files)('%s replays to the recorded outcome with no drift, a "reproduced" that judge.py confirmed', async (file) => {
    const cassette = readDlBugsCassette(file, DL_BUGS_KERAS_CASSETTES);
    await expectReplayAsRecorded(cassette);
    if (cassette.outcome.status === 'reproduced') expect(cassette.outcome.judge?.reproduced).toBe(true);
  });
});
