import { describe, expect, it } from 'vitest';
import { currentRun, failedAsStalled, runsOfFailedJob } from '../../src/queue/attempt-count.js';

const STALLED = 'job stalled more than allowable limit';

describe('attempt counts from BullMQ counters', () => {
  it('a job failed for stalling: the pick-up that failed it is no run', () => {
    // maxStalledCount 1: ran, killed, ran, killed, picked up only to be failed.
    expect(runsOfFailedJob({ attemptsMade: 1, stalledCounter: 2, failedReason: STALLED })).toBe(2);
    expect(runsOfFailedJob({ attemptsMade: 1, stalledCounter: 1, failedReason: STALLED })).toBe(1);
  });

  it('a job whose processor failed its last attempt: every ended attempt plus the crashed ones', () => {
    expect(runsOfFailedJob({ attemptsMade: 3, stalledCounter: 0, failedReason: 'boom' })).toBe(3);
    expect(runsOfFailedJob({ attemptsMade: 3, stalledCounter: 1, failedReason: 'boom' })).toBe(4);
  });

  it('an UnrecoverableError on the first pick-up is one attempt, never zero', () => {
    expect(runsOfFailedJob({ attemptsMade: 1, failedReason: 'job data is not a ReproJob' })).toBe(1);
    expect(runsOfFailedJob({ attemptsMade: 0, failedReason: STALLED })).toBe(1);
  });

  it('the run now in a processor', () => {
    expect(currentRun({ attemptsMade: 0 })).toBe(1);
    expect(currentRun({ attemptsMade: 1, stalledCounter: 1 })).toBe(3);
  });

  it('tells the stall failure from other reasons that mention stalling', () => {
    expect(failedAsStalled(STALLED)).toBe(true);
    expect(failedAsStalled('the model stalled')).toBe(false);
    expect(failedAsStalled(undefined)).toBe(false);
  });
});
