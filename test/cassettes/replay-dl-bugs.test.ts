import { describe, expect, it } from 'vitest';
import { dlBugsCassetteFiles, expectReplayAsRecorded, readDlBugsCassette } from '../helpers/replay-dl-bugs-cassette.js';

/**
 * Every recorded real-model session of the dev cases (fixtures/cassettes/dl-bugs, docs/cassettes.md) is replayed
 * through the real pipeline — report, plan, tier 0, tier 1's generate-validate-refine loop, confirmation — with
 * the model's recorded replies and the recorded script runs. A change to a prompt, the loop, the matcher or
 * the verdict rules that changes what the pipeline asks or concludes fails here, naming the drift.
 */
/** Real-model sessions recorded: at least one per dev case. */
const MIN_SESSIONS = 10;
const files = dlBugsCassetteFiles();

describe('cassettes: real-model sessions on the dl-bugs dev cases', () => {
  it(`has at least ${MIN_SESSIONS} recorded sessions, each with at least one model call`, () => {
    expect(files.length).toBeGreaterThanOrEqual(MIN_SESSIONS);
    for (const f of files) expect(readDlBugsCassette(f).calls.length, f).toBeGreaterThan(0);
  });

  it.each(files)('%s replays to the recorded outcome with no drift', async (file) => {
    const cassette = readDlBugsCassette(file);
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
