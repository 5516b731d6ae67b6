import { describe, expect, it } from 'vitest';
import { dlBugsCassetteFiles, expectReplayAsRecorded, readDlBugsCassette, REPO_ENV_CASSETTES } from '../helpers/replay-dl-bugs-cassette.js';

/**
 * The repo-env cases (fixtures/bench/repo-env: real issues of einops, kornia, torchmetrics, Lightning utilities,
 * accelerate and Keras), each a session against the project's checkout at its buggy commit, run in the environment
 * RepGen built for it, with tier 0 on and a strong model answering through the relay (docs/cassettes.md). Replayed
 * through the real pipeline with the workspace, context and exports the cassette holds: no checkout, no env, no
 * network. A change to the reader, tier 0, the oracle rules, the prompts or the loop that changes what is asked or
 * concluded fails here, misses included (a not_reproduced session replays to not_reproduced).
 */
const files = dlBugsCassetteFiles(REPO_ENV_CASSETTES);

describe('cassettes: real-model sessions on the repo-env cases (tier 0 on)', () => {
  it('has one session per case, each with tier 0 on and the project it ran against', () => {
    expect(files.map((f) => f.replace(/\.json$/, ''))).toEqual(EXPECTED_CASES);
    for (const f of files) {
      const c = readDlBugsCassette(f, REPO_ENV_CASSETTES);
      expect(c.settings.tier0, f).toBe(true);
      expect(c.project, f).toBeTruthy();
    }
  });

  it.each(files)('%s replays to the recorded outcome with no drift', async (file) => {
    const cassette = readDlBugsCassette(file, REPO_ENV_CASSETTES);
    const { evidence } = await expectReplayAsRecorded(cassette);
    expect(evidence.outcome.status, file).toBe(cassette.outcome.status);
  });
});

const EXPECTED_CASES = [
  'accelerate-4063',
  'einops-158',
  'einops-206',
  'einops-302',
  'keras-18641',
  'kornia-1563',
  'kornia-2348',
  'kornia-3855',
  'lightning-utilities-279',
  'torchmetrics-1573',
  'torchmetrics-1647',
  'torchmetrics-1891',
  'torchmetrics-2014',
  'torchmetrics-3020',
  'torchmetrics-3083',
  'torchmetrics-423',
];
