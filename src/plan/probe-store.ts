import { z } from 'zod';
import { EnvironmentProbe } from './types.js';

/**
 * What one probe learnt about one interpreter, kept between processes: each `repgen reproduce` is a new process,
 * and the probe (importing torch, transformers, tensorflow… in the sandbox) costs seconds. The store is keyed by
 * the executor's environment key, which changes when a package is installed or removed, so a stale answer is
 * never read back.
 */
export const StoredProbe = EnvironmentProbe.extend({
  importErrors: z.record(z.string(), z.string()),
  /** When it was probed (ms since the epoch): entries older than the store's age limit are ignored. */
  savedAt: z.number(),
});
export type StoredProbe = z.infer<typeof StoredProbe>;

/** The port: a disk folder in production (probe-store-disk.ts), a Map in tests. */
export interface ProbeStore {
  /** The entry saved under `key`, or null (none, unreadable, malformed or too old). Never throws. */
  load(key: string): Promise<StoredProbe | null>;
  /** Saves the entry; a failure only costs the next process a probe, so it never throws either. */
  save(key: string, probe: StoredProbe): Promise<void>;
}
