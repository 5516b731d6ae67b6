import { createHash } from 'node:crypto';
import { readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ensureDir } from '../exec/sandbox/fs.js';
import { distrust } from '../host/owned-dir.js';
import { StoredProbe, type ProbeStore } from './probe-store.js';

/** Even with the same fingerprint, a week-old probe is asked again (a driver update does not move sys.path). */
export const PROBE_MAX_AGE_MS = 7 * 24 * 3600_000;

/** The disk adapter of ProbeStore: one JSON file per key under `dir` (REPGEN_PROBE_CACHE_DIR), written atomically. */
export function createDiskProbeStore(dir: string, opts: { maxAgeMs?: number; now?: () => number } = {}): ProbeStore {
  const maxAgeMs = opts.maxAgeMs ?? PROBE_MAX_AGE_MS;
  const now = opts.now ?? Date.now;
  const file = (key: string): string => join(dir, `${createHash('sha256').update(key).digest('hex').slice(0, 32)}.json`);
  return {
    async load(key) {
      // A folder another user made or can write (the default is under tmpdir) holds nothing RepGen trusts.
      if ((await distrust(dir)) !== null) return null;
      const text = await readFile(file(key), 'utf8').catch(() => null);
      if (text === null) return null;
      let parsed: ReturnType<typeof StoredProbe.safeParse>;
      try {
        parsed = StoredProbe.safeParse(JSON.parse(text));
      } catch {
        return null;
      }
      if (!parsed.success || now() - parsed.data.savedAt > maxAgeMs || parsed.data.savedAt > now()) return null;
      return parsed.data;
    },
    async save(key, probe) {
      try {
        // Not mkdir -p: Node's loops forever under /proc, and the folder is a setting.
        await ensureDir(dir);
        if ((await distrust(dir)) !== null) return;
        const path = file(key);
        const tmp = `${path}.${process.pid}.${Date.now()}.tmp`;
        await writeFile(tmp, JSON.stringify(probe));
        await rename(tmp, path);
      } catch {
        // A read-only or full disk: the next process probes again.
      }
    },
  };
}
