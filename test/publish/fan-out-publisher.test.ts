import { describe, expect, it } from 'vitest';
import type { Published, ResultPublisher, RunReport } from '../../src/pipeline/ports.js';
import { fanOutPublisher } from '../../src/publish/fan-out-publisher.js';
import { MemoryPublisher } from '../fakes/memory-publisher.js';

const REPORT = {} as RunReport;

describe('fanOutPublisher', () => {
  it('gives every publisher each progress line, the result and the end; the locations are all of theirs', async () => {
    const a = new MemoryPublisher();
    const b = new MemoryPublisher();
    const p = fanOutPublisher([a, b]);
    await p.progress('intake', 'reading');
    expect(await p.publish(REPORT)).toEqual({ locations: ['memory:1', 'memory:1'] });
    await p.end({ kind: 'cancelled', by: 'x' });
    for (const m of [a, b]) {
      expect(m.progressLines).toEqual([{ stage: 'intake', message: 'reading' }]);
      expect(m.reports).toHaveLength(1);
      expect(m.ends).toEqual([{ kind: 'cancelled', by: 'x' }]);
    }
  });

  it('a failing progress line is cosmetic; a failing publish fails after the ones before it published', async () => {
    const first = new MemoryPublisher();
    const broken: ResultPublisher = {
      progress: async () => Promise.reject(new Error('terminal gone')),
      publish: async (): Promise<Published> => Promise.reject(new Error('disk full')),
      end: async () => undefined,
    };
    const p = fanOutPublisher([first, broken]);
    await expect(p.progress('plan', 'x')).resolves.toBeUndefined();
    await expect(p.publish(REPORT)).rejects.toThrow('disk full');
    expect(first.reports).toHaveLength(1);
  });

  it('one destination gone makes the whole result gone', async () => {
    const gone: ResultPublisher = {
      progress: async () => undefined,
      end: async () => undefined,
      publish: async () => ({ locations: [], gone: true }),
    };
    expect(await fanOutPublisher([new MemoryPublisher(), gone]).publish(REPORT)).toEqual({ locations: ['memory:1'], gone: true });
  });
});
