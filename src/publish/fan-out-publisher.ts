import type { Published, ResultPublisher, RunEnd, RunReport } from '../pipeline/ports.js';
import type { StageName } from '../pipeline/types.js';

/**
 * Several publishers as one, in order: each gets every progress line, the result and the end. The result's
 * locations are all of theirs; a publisher whose destination is gone makes the whole `gone`. A failing
 * publisher fails the publish (after the others before it have published), so nothing is silently lost.
 */
export function fanOutPublisher(publishers: readonly ResultPublisher[]): ResultPublisher {
  return {
    progress: async (stage: StageName, message: string) => {
      await Promise.all(publishers.map((p) => p.progress(stage, message).catch(() => undefined)));
    },
    publish: async (report: RunReport): Promise<Published> => {
      const all: Published = { locations: [] };
      for (const p of publishers) {
        const one = await p.publish(report);
        all.locations.push(...one.locations);
        if (one.gone) all.gone = true;
      }
      return all;
    },
    end: async (end: RunEnd) => {
      for (const p of publishers) await p.end(end);
    },
  };
}
