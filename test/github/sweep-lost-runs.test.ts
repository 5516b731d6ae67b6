import { describe, expect, it } from 'vitest';
import { cancelledComment, finalFailureComment, lostRunComment, progressMarker, queuedComment } from '../../src/github/messages.js';
import { unfinishedJobOf } from '../../src/github/sweep-lost-runs.js';
import { buildProgressComment } from '../../src/publish/build-result-comment.js';

// Which RepGen comments the lost-run sweep reads as "still queued or running" (issue 25, item 5). The sweep itself
// runs against the fake GitHub and the real Redis in test/workers/redis-faults.redis.test.ts.
const marker = progressMarker('repro-abc_1');

describe('unfinishedJobOf', () => {
  it('a queued comment, a progress list and a "will be retried" note are unfinished: their job id', () => {
    expect(unfinishedJobOf(queuedComment(marker, 0, 'octocat'))).toBe('repro-abc_1');
    expect(unfinishedJobOf(`${marker}\n${buildProgressComment([{ stage: 'intake', state: 'running' }])}`)).toBe('repro-abc_1');
    expect(unfinishedJobOf(`${marker}\n⚠️ **RepGen** attempt 1 of 3 failed (boom); it will be retried automatically.`)).toBe('repro-abc_1');
  });

  it('a final word of any kind, a lost-run note and comments without the marker are not', () => {
    for (const body of [
      `${marker}\n### RepGen: ✅ Reproduced (3 of 3 seeded runs)\n`,
      cancelledComment(marker, 'octocat'),
      finalFailureComment(marker, 'boom', 3),
      lostRunComment(marker),
      '⏳ **RepGen** is queued (no marker: not a run comment)',
      `someone quoting it: ${marker}\n⏳ **RepGen** is queued`,
    ])
      expect(unfinishedJobOf(body)).toBeNull();
  });
});
