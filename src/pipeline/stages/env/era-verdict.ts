// The import ladder's verdict with the commit's era applied (src/env/prove/removed-since-era.ts): the release dates of
// the library a failure blames are looked up through the port only for a "too old" verdict, and a lookup that fails
// leaves the verdict as the classifier read it.
import type { ReleaseInfo } from '../../../env/decide/era.js';
import type { ProofVerdict } from '../../../env/prove/import-failure.js';
import { removedSinceEra } from '../../../env/prove/removed-since-era.js';
import { normaliseName } from '../../../env/lock/uv-lock.js';
import type { ProofFailure } from '../../../env/types.js';

/** The ref's commit date and a distribution's releases (PyPI's JSON API in production, a fake in tests). */
export interface ProofEra {
  commitDate: string;
  releases(name: string): Promise<readonly ReleaseInfo[] | null>;
}

/** A PEP 503 normalised distribution name, of a sane length. */
const DIST_NAME = /^[a-z0-9](?:[a-z0-9._-]{0,98}[a-z0-9])?$/;

export async function eraVerdict(
  verdict: ProofVerdict,
  failure: ProofFailure,
  pins: Record<string, string>,
  era: ProofEra | undefined,
): Promise<ProofVerdict> {
  if (!era || verdict.kind !== 'framework-too-old' || !verdict.package) return verdict;
  const dist = verdict.package;
  // The name comes from an import error the checkout's code raised: only a distribution name is looked up.
  if (!DIST_NAME.test(dist)) return verdict;
  const version = pins[dist] ?? Object.entries(failure.versions).find(([d]) => normaliseName(d) === dist)?.[1] ?? null;
  const releases = await era.releases(dist).catch(() => null);
  return removedSinceEra(verdict, version, releases, era.commitDate);
}
