// A name the code at the ref imports from a library that the env's release of it lacks: too old, or removed since?
// The classifier (import-failure.ts) reads "too old" (torch 1.13 has no torch.xpu), which holds when the env's release
// is older than the code. When that release was published after the ref's commit, the code cannot have needed a newer
// one: the name was there when the code was written and a later release removed it (diffusers of January 2024 imports
// `huggingface_hub.cached_download`, which huggingface-hub 0.26 removed; an unpinned hub resolves to a release of 2026).
// The next candidate then caps the library at the series that was current at the commit. Pure.
import { compareVersions, dropLocal, parseVersion } from '../compare-versions.js';
import type { ProofVerdict } from './import-failure.js';

/** A release as the index dates it (decide/era.ts's ReleaseInfo has this shape; prove/ does not import decide/). */
export interface DatedRelease {
  version: string;
  /** First upload, ISO 8601. */
  uploaded: string;
  yanked: boolean;
}

/** The newest final, unyanked release uploaded by `date` (ms); null when none. */
function newestBefore(releases: readonly DatedRelease[], date: number): string | null {
  let best: { text: string; v: NonNullable<ReturnType<typeof parseVersion>> } | null = null;
  for (const r of releases) {
    const v = parseVersion(r.version);
    if (!v || r.yanked || v.is_prerelease || !(Date.parse(r.uploaded) <= date)) continue;
    if (!best || compareVersions(v, best.v) > 0) best = { text: r.version, v };
  }
  return best?.text ?? null;
}

/**
 * The verdict with its direction decided by the release dates: a `framework-too-old` verdict on a release uploaded after
 * `commitDate` becomes `api-removed`, capped below the next minor of the newest release before the commit. Any other
 * verdict, an unknown release, a release of the commit's time or older, or no release before the commit: unchanged.
 */
export function removedSinceEra(
  verdict: ProofVerdict,
  envVersion: string | null,
  releases: readonly DatedRelease[] | null,
  commitDate: string,
): ProofVerdict {
  if (verdict.kind !== 'framework-too-old' || !verdict.package || !envVersion || !releases) return verdict;
  const have = parseVersion(dropLocal(envVersion));
  const date = Date.parse(commitDate);
  if (!have || Number.isNaN(date)) return verdict;
  const mine = releases.find((r) => {
    const v = parseVersion(r.version);
    return v !== null && compareVersions(v, have) === 0;
  });
  if (!mine || Number.isNaN(Date.parse(mine.uploaded)) || Date.parse(mine.uploaded) <= date) return verdict;
  const eraNewest = newestBefore(releases, date);
  const newest = eraNewest ? parseVersion(eraNewest) : null;
  // The env's release is not newer than the era's (a back-port uploaded late): the name may really be newer.
  if (!eraNewest || !newest || compareVersions(newest, have) >= 0) return verdict;
  const [major = '0', minor = '0'] = eraNewest.split('.');
  const constraint = `<${major}.${Number(minor) + 1}`;
  const day = commitDate.slice(0, 10);
  return {
    kind: 'api-removed',
    package: verdict.package,
    constraint,
    why:
      `${verdict.why}, and ${verdict.package} ${dropLocal(envVersion)} is of ${mine.uploaded.slice(0, 10)}, after the ref's commit ` +
      `(${day}, when ${eraNewest} was the newest): a later release removed it`,
  };
}
