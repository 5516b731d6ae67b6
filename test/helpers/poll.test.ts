import { describe, expect, it } from 'vitest';
import { waitFor } from './poll.js';

describe('waitFor', () => {
  it('returns the first truthy value the probe gives, sync or async', async () => {
    let n = 0;
    expect(await waitFor(() => (++n >= 3 ? `probe ${n}` : null), { what: 'the third probe', everyMs: 1 })).toBe('probe 3');
    let m = 0;
    expect(await waitFor(async () => ++m >= 2 && m, { what: 'the second probe', everyMs: 1 })).toBe(2);
  });

  it('polls until an event of the test, however late it comes', async () => {
    let done = false;
    setTimeout(() => (done = true), 120);
    expect(await waitFor(() => done, { what: 'the flag' })).toBe(true);
  });

  it('rejects what the probe throws', async () => {
    await expect(
      waitFor(
        () => {
          throw new Error('probe broke');
        },
        { what: 'nothing' },
      ),
    ).rejects.toThrow('probe broke');
  });

  // Without a deadline of its own, only the test's timeout ends a wait that never holds.
  it.fails(
    'has no deadline but the test timeout',
    async () => {
      await waitFor(() => false, { what: 'something that never holds' });
    },
    300,
  );
});
