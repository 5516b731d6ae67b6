import { z } from 'zod';
import { doc } from './define.js';

/** PyPI's simple index: allowed unless the operator's list leaves it out. */
export const PYPI_INDEX = 'https://pypi.org/simple';

/**
 * Settings of the project environments (src/env): which package indexes a repository's `.github/repgen.yml`
 * may point the env at. An index runs no code here, but what it serves runs in every build and run, so the
 * operator decides.
 */
export const EnvironmentEnv = z.object({
  REPGEN_ENV_INDEXES: doc(
    z
      .string()
      .transform((v) =>
        v
          .split(/[\s,]+/)
          .filter(Boolean)
          .map((u) => u.replace(/\/+$/, '')),
      )
      .pipe(z.array(z.string().url()))
      .optional(),
    {
      description:
        'package indexes a repository may name in repgen.yml `environment.index` / `extraIndexes` (comma-separated URLs); ' +
        'a URL under one of them is allowed',
      shown: '`https://pypi.org/simple`',
    },
  ),
});
export type EnvironmentEnv = z.infer<typeof EnvironmentEnv>;

/** The allowlist: REPGEN_ENV_INDEXES, else PyPI alone. */
export function allowedIndexes(env: { REPGEN_ENV_INDEXES?: string[] | undefined }): string[] {
  return env.REPGEN_ENV_INDEXES ?? [PYPI_INDEX];
}
