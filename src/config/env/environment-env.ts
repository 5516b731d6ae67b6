import { z } from 'zod';
import { doc, flag, intRange } from './define.js';

/** PyPI's simple index: allowed unless the operator's list leaves it out. */
export const PYPI_INDEX = 'https://pypi.org/simple';

/**
 * Settings of the project environments (src/env): which package indexes a repository's `.github/repgen.yml`
 * may point the env at. An index runs no code here, but what it serves runs in every build and run, so the
 * operator decides.
 */
export const EnvironmentEnv = z.object({
  REPGEN_ENV: doc(z.enum(['auto', 'off']).default('auto'), {
    description:
      "the project's own environment (issue 27): `auto` builds (or reuses) one with uv for a job with a repository checkout, " +
      'and for a report whose code imports a package the base interpreter lacks; `off`: every run uses REPGEN_PYTHON as it is',
  }),
  REPGEN_ENV_CACHE: doc(z.string().startsWith('/').optional(), {
    description: 'folder of the built environments and their locks (owned by RepGen, not writable by others; the sandbox user reads it)',
    shown: '`<REPGEN_WORK_ROOT>/repgen-envs`',
  }),
  REPGEN_ENV_BUILD_MAX_MB: doc(intRange(100, 10_000_000).default(40 * 1024), {
    description:
      "disk an env build's folder may hold, in MB (its uv cache and the venv being built): a build step past it is stopped and " +
      'the failure says so (each step also has rlimits on processes, memory, file size and CPU time, cgroup or not)',
  }),
  REPGEN_ENV_KEEP_UV_CACHE: doc(flag().default(false), {
    description:
      "keep each build scope's uv cache after its env is built (`1`): a rebuild of the same scope then downloads nothing, at the cost " +
      'of a second, unpacked copy of every wheel on disk; by default it is dropped once the env is published (the env is what jobs reuse)',
  }),
  REPGEN_ENV_EXTENSION_MINUTES: doc(intRange(1, 240).default(15), {
    description:
      "wall-clock minutes at most to compile a project's C/C++ extensions (`setup.py build_ext --inplace`, CPU only, no network); " +
      'past it (or on a failed compile) the job ends as an environment failure, unless the import proof passes without them, ' +
      'when the runs use the checkout as it is',
  }),
  REPGEN_ENV_MAX_CANDIDATES: doc(intRange(1, 10).default(3), {
    description:
      'envs the import ladder builds at most for one job: an env is accepted once the project and the report’s imports import in it; ' +
      'a failure (framework too old, API removed, NumPy C-API mismatch, module missing) builds the next candidate, each cached by its lock',
  }),
  REPGEN_ENV_FIND_LINKS: doc(
    z
      .string()
      .transform((v) => v.split(':').filter(Boolean))
      .pipe(z.array(z.string().startsWith('/')))
      .optional(),
    {
      description:
        "local wheel folders the builder prefers (colon-separated), e.g. the folder of this machine's CPU torch wheel: " +
        'on a run with no GPU, torch is pinned to a version found there (the one the project, the report and your pin admit, ' +
        "else the nearest to the report's); where none fits, torch comes from https://download.pytorch.org/whl/cpu when " +
        "REPGEN_ENV_INDEXES allows it, else from the nearest CPU wheel above a project's upper bound (a range the wheels miss " +
        'only by its cap), else from PyPI (a CUDA build of several GB)',
      shown: "pip's own find-links (PIP_FIND_LINKS, pip.conf)",
    },
  ),
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
