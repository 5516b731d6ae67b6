import { describe, expect, it } from 'vitest';
import {
  dlBugsCassetteFiles,
  expectReplayAsRecorded,
  readDlBugsCassette,
  REPO_F2P_CASSETTES,
  replayThroughPipeline,
} from '../helpers/replay-dl-bugs-cassette.js';

/**
 * The real-model sessions of the fail-to-pass cases (shared/bench/repo-f2p: timm issues at their buggy commits),
 * recorded with tier 0 off so every script is the model's, a strong model answering through the relay
 * (docs/cassettes.md). Each is replayed through the real pipeline with the workspace and the context it saw: a
 * change to the report reader, the oracle rules, the prompts or the loop that changes what is asked or concluded
 * fails here. Two of them (timm-1078, timm-1910) are behavioural: the reproduction is an assertion of the value the
 * report expects, and the recorded outcome is the expectation failing.
 */
const files = dlBugsCassetteFiles(REPO_F2P_CASSETTES);

describe('cassettes: real-model sessions on the repo-f2p cases (tier 0 off)', () => {
  it('has one session per case, each tier 1 only, each with model calls', () => {
    expect(files).toEqual(['timm-1078.json', 'timm-1699.json', 'timm-1910.json', 'timm-420.json']);
    for (const f of files) {
      const c = readDlBugsCassette(f, REPO_F2P_CASSETTES);
      expect(c.calls.length, f).toBeGreaterThan(0);
      expect(c.settings.tier0, f).toBe(false);
      expect(c.project, f).toBeTruthy();
    }
  });

  it.each(files)('%s replays to the recorded outcome with no drift', async (file) => {
    const { replayed } = await expectReplayAsRecorded(readDlBugsCassette(file, REPO_F2P_CASSETTES));
    expect(replayed.attempts.every((a) => a.tier === 1)).toBe(true);
  });

  it('the behavioural sessions reproduce as the report’s expectation failing, with the value the report states', async () => {
    for (const [file, expected] of [
      ['timm-1078.json', "the report's expectation failing (expected 6)"],
      ['timm-1910.json', "the report's expectation failing (expected '(tensor([4.]), tensor([5.]))')"],
    ] as const) {
      const { evidence } = await replayThroughPipeline(readDlBugsCassette(file, REPO_F2P_CASSETTES));
      expect(evidence.outcome.status, file).toBe('reproduced');
      expect(evidence.outcome.summary, file).toContain(expected);
    }
  });
});
