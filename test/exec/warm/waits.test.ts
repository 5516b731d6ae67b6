import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { bounded, firstOf, offerTo, type Waiters } from '../../../src/exec/warm/waits.js';

const later = <T>(ms: number, value: T): Promise<T> => new Promise((resolve) => setTimeout(() => resolve(value), ms));

describe('waits', () => {
  it('bounded: the value, or undefined once the time passed or the signal fired', async () => {
    expect(await bounded(later(5, 'v'), 1000)).toBe('v');
    expect(await bounded(later(1000, 'v'), 5)).toBeUndefined();
    const c = new AbortController();
    c.abort();
    expect(await bounded(later(1000, 'v'), null, c.signal)).toBeUndefined();
  });

  it('firstOf: its own promise when nothing is offered first', async () => {
    const waiters: Waiters<number> = new Set();
    expect(await firstOf(later(5, 'own'), (n: number) => `got ${n}`, waiters, null, undefined)).toBe('own');
    expect(waiters.size).toBe(0);
  });

  it('firstOf: an offer taken first wins; declined offers go to the next waiter, and own settling later is ignored', async () => {
    const waiters: Waiters<number> = new Set();
    const claimed: number[] = [];
    const evens = firstOf(
      later(200, 'own'),
      (n: number) => (n % 2 === 0 ? (claimed.push(n), `even ${n}`) : null),
      waiters,
      null,
      undefined,
    );
    const any = firstOf(later(200, 'own'), (n: number) => (claimed.push(n), `any ${n}`), waiters, null, undefined);
    offerTo(waiters, 3, () => true);
    offerTo(waiters, 4, () => true);
    expect(await evens).toBe('even 4');
    expect(await any).toBe('any 3');
    expect(claimed).toEqual([3, 4]);
    expect(waiters.size).toBe(0);
    // Nobody waits: an offer is taken by no one.
    offerTo(waiters, 6, () => true);
    expect(claimed).toEqual([3, 4]);
  });

  it('firstOf: nothing is taken once the offered thing is gone, or after a timeout', async () => {
    const waiters: Waiters<number> = new Set();
    const took: number[] = [];
    const c = new AbortController();
    const pending = firstOf(later(1000, 'own'), (n: number) => (took.push(n), 'taken'), waiters, 20, c.signal);
    offerTo(waiters, 1, () => false);
    expect(await pending).toBeUndefined();
    offerTo(waiters, 2, () => true);
    expect(took).toEqual([]);
    // Nothing is left listening on the caller's signal.
    await new Promise((resolve) => setImmediate(resolve));
    expect(getEventListeners(c.signal, 'abort')).toHaveLength(0);
  });
});
