import { z } from 'zod';

/**
 * Which throwaway folders (run work dirs, job checkouts) are stale. Pure: the fs adapter
 * (src/exec/sandbox/reap-work-dirs.ts) gathers the facts, this decides. Several workers — on other hosts too, sharing a
 * volume — may use one root, so a name is never enough: a folder goes only when its owner is known dead, or when
 * no owner can be checked and it is older than any run may last.
 */

/** Prefixes of the folders RepGen makes with mkdtemp; nothing else in a root is ever touched. */
export const REAPABLE_PREFIXES = ['repgen-run-', 'repgen-job-', 'repgen-verify-', 'repgen-probe-'] as const;

/** Suffix of the owner marker, a sibling of the folder: the script can write its folder, never the root. */
export const OWNER_SUFFIX = '.owner';

/** Who made a folder: enough to tell a live owner from a dead one on the same host. */
export const OwnerMarker = z
  .object({
    pid: z.number().int().positive(),
    /** Field 22 of /proc/PID/stat (start time in clock ticks since boot), so a reused pid is not taken for the owner. */
    start: z.string().max(32).nullable(),
    host: z.string().max(255),
    /** /proc/sys/kernel/random/boot_id: after a reboot no pid of before is alive. */
    boot: z.string().max(64).nullable(),
    /** When the folder was made (ms since epoch); the script cannot change it, unlike the folder's mtime. */
    at: z.number().int().nonnegative(),
    /** REPGEN_KEEP_WORKDIR: kept for debugging, never reaped. */
    keep: z.boolean().optional(),
  })
  .strict();
export type OwnerMarker = z.infer<typeof OwnerMarker>;

/** This process, as a marker names it. */
export interface SelfIdentity {
  host: string;
  boot: string | null;
}

/** What the adapter saw for one name in a root. */
export interface RootEntry {
  name: string;
  kind: 'dir' | 'file' | 'symlink' | 'other';
  mtimeMs: number;
  /** The sibling marker: parsed, 'invalid' (present but not a marker), or null (none). */
  marker: OwnerMarker | 'invalid' | null;
  /** For a marker of this host and boot: the start time of the process with the marker's pid now, null if none. */
  liveStart?: string | null;
}

export interface ReapPolicy {
  now: number;
  /** Nothing younger is reaped, whatever its marker says (covers mkdtemp → marker write). */
  minAgeMs: number;
  /** A folder whose owner cannot be checked (another host, no marker) goes only past this age. */
  maxAgeMs: number;
}

export type OwnerState = 'alive' | 'dead' | 'unknown';

export function ownerState(marker: OwnerMarker, self: SelfIdentity, liveStart: string | null | undefined): OwnerState {
  if (marker.host !== self.host) return 'unknown';
  if (marker.boot !== null && self.boot !== null && marker.boot !== self.boot) return 'dead';
  if (liveStart === undefined) return 'unknown';
  if (liveStart === null) return 'dead';
  return marker.start === null || marker.start === liveStart ? 'alive' : 'dead';
}

export interface StaleDecision {
  name: string;
  why: string;
  /** Only the marker is left (the folder was removed, the marker not yet). */
  markerOnly: boolean;
}

function reapable(name: string): boolean {
  return REAPABLE_PREFIXES.some((p) => name.startsWith(p) && name.length > p.length) && !name.includes('/');
}

/** The folders (and orphan markers) of one root that may be deleted now, with why. */
export function staleWorkDirs(entries: readonly RootEntry[], self: SelfIdentity, policy: ReapPolicy): StaleDecision[] {
  const byName = new Map(entries.map((e) => [e.name, e]));
  const out: StaleDecision[] = [];
  for (const entry of entries) {
    const markerOnly = entry.name.endsWith(OWNER_SUFFIX);
    const folderName = markerOnly ? entry.name.slice(0, -OWNER_SUFFIX.length) : entry.name;
    if (!reapable(folderName)) continue;
    // A planted link or a file under our name is not ours to follow or judge; only real folders and markers.
    if (markerOnly ? entry.kind !== 'file' || byName.has(folderName) : entry.kind !== 'dir') continue;
    const marker = entry.marker;
    if (marker !== null && marker !== 'invalid' && marker.keep) continue;
    // The marker's time, not the folder's mtime: the script owns its folder and can set that to 1970.
    const age = policy.now - (marker !== null && marker !== 'invalid' ? marker.at : entry.mtimeMs);
    if (age < policy.minAgeMs) continue;
    const state = marker !== null && marker !== 'invalid' ? ownerState(marker, self, entry.liveStart) : 'unknown';
    if (state === 'alive') continue;
    if (state === 'dead') {
      out.push({ name: entry.name, markerOnly, why: `owner pid ${(marker as OwnerMarker).pid} on this host is gone` });
      continue;
    }
    if (age >= policy.maxAgeMs) {
      const owner =
        marker === null ? 'no owner marker' : marker === 'invalid' ? 'unreadable owner marker' : `owner on ${(marker as OwnerMarker).host}`;
      out.push({ name: entry.name, markerOnly, why: `${owner}, older than ${Math.round(policy.maxAgeMs / 3_600_000)} h` });
    }
  }
  return out;
}
