import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { requestCancel, subscribeCancels } from '../../src/queue/cancel-channel.js';

const URL = 'redis://127.0.0.1:6379';

describe('subscribeCancels', () => {
  // ioredis sends its ready check (INFO) only after the socket's 'connect'; a SUBSCRIBE written in between put the
  // connection in subscriber mode first, the INFO failed, and the client emitted "Connection in subscriber mode" (an
  // unhandled error event at the worker's start, 1 start of 2).
  it('subscribing while the connection is still being checked (its connect event) makes no error, 5 times of 5', async () => {
    const prefix = `repgen-test-cancel-${process.pid}`;
    const publisher = new Redis(URL, { maxRetriesPerRequest: null });
    try {
      for (let i = 0; i < 5; i++) {
        const sub = new Redis(URL, { maxRetriesPerRequest: null });
        const errors: string[] = [];
        sub.on('error', (e: Error) => errors.push(e.message));
        const got: string[] = [];
        const subscribed = await new Promise<() => Promise<void>>((resolve, reject) =>
          sub.once('connect', () => void subscribeCancels(sub, prefix, (id) => got.push(id)).then(resolve, reject)),
        );
        const arrived = new Promise<void>((resolve) => sub.once('message', () => resolve()));
        await requestCancel(publisher, prefix, `job-${i}`);
        await arrived;
        expect(got).toEqual([`job-${i}`]);
        await subscribed();
        await sub.quit();
        expect(errors).toEqual([]);
      }
    } finally {
      await publisher.quit();
    }
  });
});
