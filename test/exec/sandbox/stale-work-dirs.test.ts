import { describe, expect, it } from 'vitest';
import { ownerState, staleWorkDirs, type OwnerMarker, type RootEntry } from '../../../src/exec/sandbox/stale-work-dirs.js';

const NOW = 10_000_000_000;
const HOUR = 3_600_000;
const self = { host: 'w1', boot: 'b1' };
const policy = { now: NOW, minAgeMs: 60_000, maxAgeMs: 48 * HOUR };
const marker = (over: Partial<OwnerMarker> = {}): OwnerMarker => ({
  pid: 42,
  start: '100',
  host: 'w1',
  boot: 'b1',
  at: NOW - HOUR,
  ...over,
});
const dir = (name: string, over: Partial<RootEntry> = {}): RootEntry => ({
  name,
  kind: 'dir',
  mtimeMs: NOW - HOUR,
  marker: marker(),
  liveStart: '100',
  ...over,
});
const names = (entries: RootEntry[]) => staleWorkDirs(entries, self, policy).map((d) => d.name);

describe('which work folders are stale', () => {
  it('keeps a live owner’s folder, reaps a dead one’s', () => {
    expect(names([dir('repgen-run-live'), dir('repgen-run-dead', { liveStart: null })])).toEqual(['repgen-run-dead']);
  });

  it('a reused pid is not the owner: its start time differs', () => {
    expect(names([dir('repgen-job-a', { liveStart: '999' })])).toEqual(['repgen-job-a']);
    expect(ownerState(marker(), self, '999')).toBe('dead');
  });

  it('after a reboot no owner of before lives', () => {
    expect(ownerState(marker({ boot: 'b0' }), self, '100')).toBe('dead');
  });

  it('another host’s folder, or one without a marker, goes only past the max age', () => {
    const foreign = dir('repgen-run-b', { marker: marker({ host: 'w2' }), liveStart: undefined });
    const unmarked = dir('repgen-run-c', { marker: null, liveStart: undefined });
    expect(names([foreign, unmarked])).toEqual([]);
    const old = NOW - 49 * HOUR;
    expect(
      names([
        { ...foreign, marker: marker({ host: 'w2', at: old }) },
        { ...unmarked, mtimeMs: old },
      ]),
    ).toEqual(['repgen-run-b', 'repgen-run-c']);
  });

  it('the age is the marker’s: a script that sets its folder’s mtime to 1970 does not get a live foreign run reaped', () => {
    expect(names([dir('repgen-run-b', { marker: marker({ host: 'w2', at: NOW - HOUR }), liveStart: undefined, mtimeMs: 0 })])).toEqual([]);
  });

  it('nothing younger than the floor, whatever the marker says', () => {
    expect(names([dir('repgen-run-new', { liveStart: null, marker: marker({ at: NOW - 1000 }) })])).toEqual([]);
  });

  it('never a symlink, a file, a kept folder or a name that is not RepGen’s', () => {
    expect(
      names([
        dir('repgen-run-link', { kind: 'symlink', liveStart: null }),
        dir('repgen-run-file', { kind: 'file', liveStart: null }),
        dir('repgen-run-kept', { marker: marker({ keep: true }), liveStart: null }),
        dir('other-folder', { liveStart: null }),
        dir('repgen-run-', { liveStart: null }),
        dir('repgen-launcher', { liveStart: null }),
      ]),
    ).toEqual([]);
  });

  it('an orphan marker (its folder already gone) is reaped; a folder’s own marker is not reaped alone', () => {
    const orphan: RootEntry = { name: 'repgen-run-x.owner', kind: 'file', mtimeMs: NOW - HOUR, marker: marker(), liveStart: null };
    expect(staleWorkDirs([orphan], self, policy)).toEqual([
      { name: 'repgen-run-x.owner', markerOnly: true, why: 'owner pid 42 on this host is gone' },
    ]);
    expect(names([orphan, dir('repgen-run-x')])).toEqual([]);
  });
});
