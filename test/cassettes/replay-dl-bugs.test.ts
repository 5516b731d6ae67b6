import { describe, expect, it } from 'vitest';
import {
  DL_BUGS_CASSETTES,
  DL_BUGS_KERAS_CASSETTES,
  dlBugsCassetteFiles,
  expectReplayAsRecorded,
  readDlBugsCassette,
} from '../helpers/replay-dl-bugs-cassette.js';

/**
 * Every recorded real-model session of the Stack Overflow dev cases (docs/cassettes.md) is replayed through the real
 * pipeline — report, plan, tier 0, tier 1's generate-validate-refine loop, confirmation — with the model's recorded
 * replies and the recorded script runs. A change to a prompt, the loop, the matcher or the verdict rules that changes
 * what the pipeline asks or concludes fails here, naming the drift. The PyTorch set (fixtures/cassettes/dl-bugs) and
 * the Keras/TensorFlow one (fixtures/cassettes/dl-bugs-keras), where four sessions end inside Keras 2's
 * `in user code:` block: a reader that compares the wrapper line instead of the error it wraps fails those.
 */
describe.each([
  { set: 'dl-bugs', dir: DL_BUGS_CASSETTES, minSessions: 10 },
  { set: 'dl-bugs-keras', dir: DL_BUGS_KERAS_CASSETTES, minSessions: 12 },
])('cassettes: real-model sessions on the $set dev cases', ({ dir, minSessions }) => {
  const files = dlBugsCassetteFiles(dir);

  it(`has at least ${minSessions} recorded sessions (one per dev case), each with at least one model call`, () => {
    expect(files.length).toBeGreaterThanOrEqual(minSessions);
    for (const f of files) expect(readDlBugsCassette(f, dir).calls.length, f).toBeGreaterThan(0);
  });

  it.each(files)('%s replays to the recorded outcome with no drift', async (file) => {
    const cassette = readDlBugsCassette(file, dir);
    const { replayed } = await expectReplayAsRecorded(cassette);
    expect(replayed.usage.inputTokens + replayed.usage.outputTokens).toBe(
      cassette.outcome.usage.inputTokens + cassette.outcome.usage.outputTokens,
    );
    // A session recorded with tier 0 off (REPGEN_TIER0=0) is the model's alone: every attempt is tier 1's.
    if (cassette.settings.tier0 === false) expect(replayed.attempts.every((a) => a.tier === 1)).toBe(true);
    // Every "reproduced" in a cassette was confirmed by the bench's judge.py when it was recorded.
    if (cassette.outcome.status === 'reproduced') expect(cassette.outcome.judge?.reproduced).toBe(true);
  });
});
