import { z } from 'zod';
import type { ReleaseDates, ReleaseInfo } from './era.js';

/**
 * ReleaseDates from a PyPI-compatible JSON API (`<base>/pypi/<name>/json`): each release's first upload,
 * its wheel file names and whether it was yanked. Outside data, parsed permissively; a failure is "unknown"
 * (null), which leaves the package uncapped rather than failing the spec.
 */
const PypiFile = z.object({
  filename: z.string(),
  upload_time_iso_8601: z.string().optional(),
  upload_time: z.string().optional(),
  yanked: z.boolean().catch(false).default(false),
});
const PypiProject = z.object({ releases: z.record(z.string(), z.array(PypiFile.catch({ filename: '', yanked: true }))) });

export function pypiReleaseDates(opts: { base?: string; fetch?: typeof fetch; timeoutMs?: number } = {}): ReleaseDates {
  const base = (opts.base ?? 'https://pypi.org').replace(/\/+$/, '');
  const get = opts.fetch ?? fetch;
  const cache = new Map<string, Promise<ReleaseInfo[] | null>>();
  const load = async (name: string): Promise<ReleaseInfo[] | null> => {
    try {
      const res = await get(`${base}/pypi/${encodeURIComponent(name)}/json`, { signal: AbortSignal.timeout(opts.timeoutMs ?? 15_000) });
      if (!res.ok) return null;
      const parsed = PypiProject.safeParse(await res.json());
      if (!parsed.success) return null;
      return Object.entries(parsed.data.releases).flatMap(([version, files]) => {
        const times = files
          .map((f) => f.upload_time_iso_8601 ?? (f.upload_time ? `${f.upload_time}Z` : ''))
          .filter(Boolean)
          .sort();
        const first = times[0];
        if (!first) return [];
        return [
          {
            version,
            uploaded: first,
            wheels: files.map((f) => f.filename).filter((f) => f.endsWith('.whl')),
            yanked: files.every((f) => f.yanked),
          },
        ];
      });
    } catch {
      return null;
    }
  };
  return {
    releases(name) {
      let p = cache.get(name);
      if (!p) cache.set(name, (p = load(name)));
      return p;
    },
  };
}
