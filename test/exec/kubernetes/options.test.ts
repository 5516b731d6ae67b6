import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { CappedSink } from '../../../src/exec/kubernetes/options.js';

describe("CappedSink (a pod log's sink)", () => {
  it('keeps the first bytes up to its limit', async () => {
    const sink = new CappedSink(5);
    const source = new PassThrough();
    source.pipe(sink);
    source.end('hello world');
    await sink.ended;
    expect(sink.text()).toBe('hello');
  });

  it('ends when its source fails, and drops what the source still sends after (an aborted log stream under load)', async () => {
    const sink = new CappedSink(1000);
    const source = new PassThrough();
    source.pipe(sink);
    source.write('before ');
    const uncaught: unknown[] = [];
    const onUncaught = (err: unknown): void => void uncaught.push(err);
    process.on('uncaughtException', onUncaught);
    try {
      source.emit('error', new Error('aborted'));
      // A source that keeps flowing after its error (client-node's log request, aborted mid-run).
      source.write('after');
      await sink.ended;
      await new Promise((resolve) => setImmediate(resolve));
      // And a write that reaches the ended sink directly is dropped, not thrown.
      sink.write('late');
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      process.off('uncaughtException', onUncaught);
    }
    expect(uncaught).toEqual([]);
    expect(sink.text()).toBe('before ');
  });
});
